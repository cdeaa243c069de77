import { join } from 'node:path';
import { describePublishReadiness } from '@app-serving/test-cluster/publish';
import { REPO } from './harness.ts';

// Core is checked here too: it has no build-dependent test target of its own, and it is packed with
// this package by the consumer test.
describePublishReadiness(join(REPO, 'packages', 'core'));
describePublishReadiness(join(REPO, 'packages', 'pulumi-components'));
