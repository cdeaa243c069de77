import { join } from 'node:path';
import { describePublishReadiness } from '@app-serving/test-cluster/publish';

// What a program imports (`run`) is ESM only by design; the command itself (bin/ and the bundle in
// dist/cli/) is CommonJS and is not an entry point attw resolves.
describePublishReadiness(join(import.meta.dirname, '..'), { attwProfile: 'esm-only' });
