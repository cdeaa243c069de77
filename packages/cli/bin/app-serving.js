#!/usr/bin/env node
// The app-serving command. Kept tiny: everything else loads on demand, so `--help` stays fast.
// The bundle is CommonJS so that V8 can keep its compiled code between runs (src/code-cache.ts).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
require('../dist/cli/code-cache.cjs').enableCodeCache({ bundleDir: fileURLToPath(new URL('../dist/cli/', import.meta.url)) });
const { exitQuietlyOnClosedPipe, run } = require('../dist/cli/main.cjs');

exitQuietlyOnClosedPipe();
process.exitCode = await run(process.argv);
