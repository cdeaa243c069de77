import { describeDeploys } from './suite.ts';

describeDeploys('2026-08');
