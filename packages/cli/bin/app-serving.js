#!/usr/bin/env node
// The app-serving command. Kept tiny: everything else loads on demand, so `--help` stays fast.
import { exitQuietlyOnClosedPipe, run } from '../dist/cli/main.js';

exitQuietlyOnClosedPipe();
process.exitCode = await run(process.argv);
