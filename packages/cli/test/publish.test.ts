import { join } from 'node:path';
import { describePublishReadiness } from '../../../scripts/publish-readiness.ts';

// The command is ESM by design (its bin is an ES module); no CommonJS build is asked of it.
describePublishReadiness(join(import.meta.dirname, '..'), { attwProfile: 'esm-only' });
