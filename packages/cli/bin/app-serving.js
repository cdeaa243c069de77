#!/usr/bin/env node
// The app-serving command. Kept tiny: everything else loads on demand, so `--help` stays fast.
// CommonJS (bin/package.json), like the bundle, so that V8 can keep the compiled code between
// runs (src/code-cache.ts) and no ES module loader starts at all.
'use strict';
const { join } = require('node:path');

const startUp = require('../dist/cli/code-cache.cjs');
// First, before any of the bundle is compiled (src/code-cache.ts says why).
startUp.raiseOptimizationBudget();
startUp.enableCodeCache({ bundleDir: join(__dirname, '..', 'dist', 'cli') });
const { exitQuietlyOnClosedPipe, run } = require('../dist/cli/main.cjs');

exitQuietlyOnClosedPipe();
run(process.argv).then((code) => {
  process.exitCode = code;
});
