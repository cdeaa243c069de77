import { join } from 'node:path';
import { describePublishReadiness } from '../../../scripts/publish-readiness.ts';

describePublishReadiness(join(import.meta.dirname, '..'));
