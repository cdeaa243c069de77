// Times renderStack for plans of 1, 10 and 100 models (copies of the repo's Sim model), the way
// the CLI calls it: the built packages, plain Node. Build first (npx nx run-many -t build).
//   node packages/pulumi-components/scripts/render-timing.mjs [counts...]
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { loadStackConfigFromMap, planDeployment } from '@app-serving/core';
import { renderStack } from '@app-serving/pulumi-components/render';

const models = fileURLToPath(new URL('../../../models', import.meta.url));
const counts = process.argv.slice(2).map(Number);

function plan(n) {
  const dir = mkdtempSync(join(tmpdir(), 'render-timing-'));
  const entries = [];
  for (let i = 0; i < n; i += 1) {
    for (const prefix of ['gaie', 'ms']) {
      mkdirSync(join(dir, 'generative', `Sim${i}`, `${prefix}-sim-${i}`), { recursive: true });
      copyFileSync(join(models, 'generative/Sim', `${prefix}-sim`, 'values.yaml'), join(dir, 'generative', `Sim${i}`, `${prefix}-sim-${i}`, 'values.yaml'));
    }
    entries.push({ name: `Sim${i}` });
  }
  const config = loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': JSON.stringify({ generative: entries }) }, { stackName: `timing${n}` });
  const p = planDeployment(config, dir);
  rmSync(dir, { recursive: true, force: true });
  return p;
}

for (const n of counts.length ? counts : [1, 10, 100]) {
  const p = plan(n);
  const start = performance.now();
  const out = await renderStack(p);
  const ms = performance.now() - start;
  console.log(`${String(n).padStart(3)} models: ${String(out.resources.length).padStart(4)} resources in ${(ms / 1000).toFixed(2)} s`);
}
