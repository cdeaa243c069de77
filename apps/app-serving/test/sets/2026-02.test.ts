import { describeSet } from './suite.ts';

describeSet('2026-02');
