import { join } from 'node:path';
import { describePublishReadiness } from '@app-serving/test-cluster/publish';

describePublishReadiness(join(import.meta.dirname, '..'));
