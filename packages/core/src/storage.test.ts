import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRepo } from '../test/helpers.ts';
import { expectedPath, huggingFaceDownloadScript, orasPullScript, storagePlan } from './storage.ts';

describe('storagePlan', () => {
  const source = { harborRef: 'harbor.local/ai/qwen:1', modelUri: 'hub/Qwen/Qwen3-0.6B', layout: 'hf-cache' as const, storageSize: '10Gi' };

  it('on-prem with a hostPath node: a static PV, the hostpath class and the Harbor ORAS image', () => {
    expect(storagePlan({ slug: 'q', source: { ...source, hostpathNode: 'node-1' }, cloudProvider: 'on-prem', harborHostname: 'harbor.local' })).toEqual({
      pvc: 'q-model',
      pv: 'q-model-pv',
      job: 'q-model-pull',
      marker: '/model-cache/.pulled',
      mountPath: '/model-cache',
      size: '10Gi',
      storageClass: 'hostpath',
      hostPath: { node: 'node-1', dir: '/var/lib/hostpath/models/q' },
      source: { kind: 'oras', ref: 'harbor.local/ai/qwen:1', registry: 'harbor.local' },
      image: 'harbor.local/images-infra/oras-project/oras:v1.3.1',
      modelUri: 'hub/Qwen/Qwen3-0.6B',
      layout: 'hf-cache',
      expectPath: 'hub/models--Qwen--Qwen3-0.6B',
      adapters: null,
    });
  });

  it('on-prem keeps a given directory and class', () => {
    const plan = storagePlan({ slug: 'q', source: { ...source, hostpathNode: 'n', hostpathDir: '/data/q', storageClass: 'local' }, cloudProvider: 'on-prem', harborHostname: 'h' });
    expect(plan.hostPath).toEqual({ node: 'n', dir: '/data/q' });
    expect(plan.storageClass).toBe('local');
  });

  it('cloud: the cluster default class (or the given one) and the public ORAS image, no PV', () => {
    const plan = storagePlan({ slug: 'q', source, cloudProvider: 'cloud', harborHostname: 'harbor.local' });
    expect(plan).toMatchObject({ pv: null, hostPath: null, storageClass: null, image: 'ghcr.io/oras-project/oras:v1.3.1' });
    expect(storagePlan({ slug: 'q', source: { ...source, storageClass: 'premium-rwo' }, cloudProvider: 'cloud' }).storageClass).toBe('premium-rwo');
  });

  it('a Hugging Face source downloads with the given image', () => {
    const plan = storagePlan({
      slug: 'q',
      source: { huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'main' }, layout: 'directory', modelUri: 'Qwen/Qwen3-0.6B', storageSize: '5Gi' },
      cloudProvider: 'cloud',
      downloaderImage: 'kserve/storage-initializer:v0.18.0',
    });
    expect(plan).toMatchObject({ source: { kind: 'huggingface', repo: 'Qwen/Qwen3-0.6B', revision: 'main' }, image: 'kserve/storage-initializer:v0.18.0', expectPath: 'Qwen/Qwen3-0.6B/config.json' });
  });
});

describe('expectedPath', () => {
  it('maps a hub-cache path to the cache folder name', () => {
    expect(expectedPath('hub/Qwen/Qwen3-0.6B', 'hf-cache')).toBe('hub/models--Qwen--Qwen3-0.6B');
    expect(expectedPath('a/b/hub/org/m', 'hf-cache')).toBe('a/b/hub/models--org--m');
    expect(expectedPath('models/qwen', 'directory')).toBe('models/qwen');
  });
});

/** A temporary root with a volume folder and a bin folder holding an executable stub `command`. */
function sandbox(command: string, stub: (root: string) => string): { root: string; bin: string; volume: string } {
  const root = tempRepo({});
  const bin = join(root, 'bin');
  const volume = join(root, 'volume');
  mkdirSync(bin);
  mkdirSync(volume);
  writeFileSync(join(bin, command), stub(root));
  chmodSync(join(bin, command), 0o755);
  return { root, bin, volume };
}

/**
 * The ORAS Job script, run for real by /bin/sh with a stub `oras` on the PATH. The stub writes
 * what a real pull of the artifact writes (a Hugging Face hub cache), or fails half-way.
 */
describe('the ORAS pull script', () => {
  const REF = 'harbor.local/ai/qwen:1';

  function setup() {
    const { root, bin, volume } = sandbox(
      'oras',
      (root) => `#!/bin/sh
# stub oras: records its arguments, then behaves as $STUB_MODE says
echo "$@" >> "${root}/oras-calls"
out=""
while [ $# -gt 0 ]; do case "$1" in --output) out="$2"; shift 2;; *) shift;; esac; done
case "$STUB_MODE" in
  ok) mkdir -p "$out/hub/models--Qwen--Qwen3-0.6B/snapshots/abc" && echo '{}' > "$out/hub/models--Qwen--Qwen3-0.6B/snapshots/abc/config.json" && echo "Downloaded";;
  wrong) mkdir -p "$out/other" && echo x > "$out/other/file";;
  fail) mkdir -p "$out/hub/partial" && echo x > "$out/hub/partial/blob"; echo "Error: unauthorized" >&2; exit 1;;
esac
`,
    );
    const run = (mode: string, ref = REF) =>
      spawnSync('/bin/sh', ['-c', orasPullScript()], {
        env: { PATH: `${bin}:/usr/bin:/bin`, STUB_MODE: mode, MODEL_DIR: volume, MODEL_REF: ref, EXPECT_PATH: 'hub/models--Qwen--Qwen3-0.6B', REGISTRY_CONFIG: '/etc/registry-auth/config.json' },
        encoding: 'utf8',
      });
    const calls = () => (existsSync(join(root, 'oras-calls')) ? readFileSync(join(root, 'oras-calls'), 'utf8').trim().split('\n') : []);
    return { volume, run, calls };
  }

  it('first run pulls, moves the model into place and writes the marker last', () => {
    const { volume, run, calls } = setup();
    const result = run('ok');
    expect(result.status).toBe(0);
    expect(calls()).toEqual([`pull --registry-config /etc/registry-auth/config.json --output ${volume}/.pull-staging ${REF}`]);
    expect(readdirSync(volume).sort()).toEqual(['.pulled', 'hub']);
    expect(existsSync(join(volume, 'hub/models--Qwen--Qwen3-0.6B/snapshots/abc/config.json'))).toBe(true);
    expect(readFileSync(join(volume, '.pulled'), 'utf8')).toMatch(new RegExp(`^ref=${REF.replace(/\./g, '\\.')}\npulled=\\d{4}-\\d\\d-\\d\\dT`));
    expect(result.stdout).toContain(`pulling ${REF} into ${volume}`);
    expect(result.stdout).toMatch(/done: .*hub\/models--Qwen--Qwen3-0.6B is ready/);
  });

  it('second run does nothing', () => {
    const { run, calls } = setup();
    run('ok');
    const again = run('fail');
    expect(again.status).toBe(0);
    expect(again.stdout).toContain(`model already present: `);
    expect(calls()).toHaveLength(1);
  });

  it('a failing pull leaves no marker and no partial directory', () => {
    const { volume, run } = setup();
    const result = run('fail');
    expect(result.status).toBe(1);
    expect(readdirSync(volume)).toEqual([]);
    expect(result.stdout).toContain(`ERROR: oras pull of ${REF} failed`);
    expect(result.stderr).toContain('unauthorized');
  });

  it('an artifact without the expected path is refused and cleaned up', () => {
    const { volume, run } = setup();
    const result = run('wrong');
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('expected hub/models--Qwen--Qwen3-0.6B in the download');
    expect(readdirSync(volume)).toEqual([]);
  });

  it('cleans a partial directory left by a killed run', () => {
    const { volume, run } = setup();
    mkdirSync(join(volume, '.pull-staging/hub/half'), { recursive: true });
    writeFileSync(join(volume, '.pull-staging/hub/half/blob'), 'x');
    const result = run('ok');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('removing a partial download left by an earlier run');
    expect(readdirSync(volume).sort()).toEqual(['.pulled', 'hub']);
    expect(readdirSync(join(volume, 'hub'))).toEqual(['models--Qwen--Qwen3-0.6B']);
  });

  it('replaces model files a killed run moved before its marker', () => {
    const { volume, run } = setup();
    mkdirSync(join(volume, 'hub/stale'), { recursive: true });
    expect(run('ok').status).toBe(0);
    expect(readdirSync(join(volume, 'hub'))).toEqual(['models--Qwen--Qwen3-0.6B']);
  });

  it('pulls again when the stack asks for another reference', () => {
    const { volume, run, calls } = setup();
    run('ok');
    const result = run('ok', 'harbor.local/ai/qwen:2');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`the volume holds ${REF} but harbor.local/ai/qwen:2 is wanted`);
    expect(calls()).toHaveLength(2);
    expect(readFileSync(join(volume, '.pulled'), 'utf8')).toContain('ref=harbor.local/ai/qwen:2');
  });

  it('says what to do when the volume is not writable by the Job user', () => {
    const { volume, run } = setup();
    chmodSync(volume, 0o555);
    // As root, run the script as an unprivileged uid (what the Job does) so the volume is not writable.
    const asRoot = process.getuid?.() === 0;
    const result = asRoot
      ? spawnSync('setpriv', ['--reuid=65532', '--regid=65532', '--clear-groups', '/bin/sh', '-c', orasPullScript()], {
          env: { PATH: '/usr/bin:/bin', MODEL_DIR: volume, MODEL_REF: REF, EXPECT_PATH: 'x', REGISTRY_CONFIG: '/dev/null' },
          encoding: 'utf8',
        })
      : run('ok');
    chmodSync(volume, 0o755);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/is not writable by uid \d+; on a hostPath volume, give that uid the directory \(chown \d+:\d+ <hostpathDir>\)/);
  });
});

describe('the Hugging Face download script', () => {
  it('downloads into a staging directory with hf, checks the result and writes the marker', () => {
    const { root, bin, volume } = sandbox(
      'hf',
      (root) => `#!/bin/sh
echo "$@" > "${root}/hf-call"
printf '%s' "\${HF_TOKEN:-none}" > "${root}/hf-token-seen"
dir=""; while [ $# -gt 0 ]; do case "$1" in --local-dir) dir="$2"; shift 2;; *) shift;; esac; done
mkdir -p "$dir" && echo '{}' > "$dir/config.json"
`,
    );
    const result = spawnSync('/bin/sh', ['-c', huggingFaceDownloadScript()], {
      env: {
        PATH: `${bin}:/usr/bin:/bin`,
        MODEL_DIR: volume,
        MODEL_REF: 'hf://Qwen/Qwen3-0.6B@main',
        HF_REPO: 'Qwen/Qwen3-0.6B',
        HF_REVISION: 'main',
        MODEL_PATH: 'Qwen/Qwen3-0.6B',
        EXPECT_PATH: 'Qwen/Qwen3-0.6B/config.json',
        HF_TOKEN: 'hf_secret',
      },
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(readFileSync(join(root, 'hf-call'), 'utf8').trim()).toBe(`download Qwen/Qwen3-0.6B --revision main --local-dir ${volume}/.pull-staging/Qwen/Qwen3-0.6B`);
    expect(readFileSync(join(root, 'hf-token-seen'), 'utf8')).toBe('hf_secret');
    expect(existsSync(join(volume, 'Qwen/Qwen3-0.6B/config.json'))).toBe(true);
    expect(readFileSync(join(volume, '.pulled'), 'utf8')).toContain('ref=hf://Qwen/Qwen3-0.6B@main');
    expect(result.stdout).not.toContain('hf_secret');
  });
});

/**
 * The ORAS Job script with LoRA adapters (features/adapters), run for real by /bin/sh with a stub
 * `oras`: a reference with "adapters/" in it is an adapter artifact (adapter_config.json of rank
 * $STUB_RANK, or nothing with $STUB_ADAPTER=empty, or a failure with $STUB_ADAPTER=fail).
 */
describe('the ORAS pull script with adapters', () => {
  const REF = 'harbor.local/ai/qwen:1';
  const SQL = 'harbor.local/ai/adapters/sql:1';
  const CHAT = 'harbor.local/ai/adapters/chat:1';

  function setup() {
    const { root, bin, volume } = sandbox(
      'oras',
      (root) => `#!/bin/sh
echo "$@" >> "${root}/oras-calls"
out=""; ref=""
while [ $# -gt 0 ]; do case "$1" in --output) out="$2"; shift 2;; --registry-config) shift 2;; pull) shift;; *) ref="$1"; shift;; esac; done
case "$ref" in
  */adapters/*)
    case "\${STUB_ADAPTER:-ok}" in
      ok) mkdir -p "$out" && printf '{\\n  "peft_type": "LORA",\\n  "r": %s,\\n  "lora_alpha": 16\\n}\\n' "\${STUB_RANK:-8}" > "$out/adapter_config.json" && echo "$ref" > "$out/adapter_model.safetensors";;
      empty) mkdir -p "$out/nested" && echo x > "$out/nested/file";;
      fail) echo "Error: not found" >&2; exit 1;;
    esac;;
  *)
    mkdir -p "$out/hub/models--Qwen--Qwen3-0.6B/snapshots/abc" && echo '{}' > "$out/hub/models--Qwen--Qwen3-0.6B/snapshots/abc/config.json"
    if [ -n "\${STUB_WEIGHTS_ADAPTER:-}" ]; then mkdir -p "$out/$STUB_WEIGHTS_ADAPTER" && echo '{"r": 8}' > "$out/$STUB_WEIGHTS_ADAPTER/adapter_config.json"; fi;;
esac
`,
    );
    const run = (adapters: string, env: Record<string, string> = {}, ref = REF) =>
      spawnSync('/bin/sh', ['-c', orasPullScript()], {
        env: {
          PATH: `${bin}:/usr/bin:/bin`,
          MODEL_DIR: volume,
          MODEL_REF: ref,
          EXPECT_PATH: 'hub/models--Qwen--Qwen3-0.6B',
          REGISTRY_CONFIG: '/etc/registry-auth/config.json',
          ADAPTERS: adapters,
          MAX_LORA_RANK: '16',
          ...env,
        },
        encoding: 'utf8',
      });
    const calls = () => (existsSync(join(root, 'oras-calls')) ? readFileSync(join(root, 'oras-calls'), 'utf8').trim().split('\n') : []);
    const marker = () => readFileSync(join(volume, '.pulled'), 'utf8').replace(/pulled=.*\n/, 'pulled=<time>\n');
    return { volume, run, calls, marker };
  }
  const both = `sql adapters/sql ${SQL}\nchat adapters/chat ${CHAT}`;

  it('pulls the weights and each adapter into adapters/<name>, and records them in the marker written last', () => {
    const { volume, run, calls, marker } = setup();
    const result = run(both);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(calls()).toEqual([
      `pull --registry-config /etc/registry-auth/config.json --output ${volume}/.pull-staging ${REF}`,
      `pull --registry-config /etc/registry-auth/config.json --output ${volume}/.adapter-staging/sql ${SQL}`,
      `pull --registry-config /etc/registry-auth/config.json --output ${volume}/.adapter-staging/chat ${CHAT}`,
    ]);
    expect(readdirSync(volume).sort()).toEqual(['.pulled', 'adapters', 'hub']);
    expect(readdirSync(join(volume, 'adapters')).sort()).toEqual(['chat', 'sql']);
    expect(readFileSync(join(volume, 'adapters/sql/adapter_model.safetensors'), 'utf8')).toBe(`${SQL}\n`);
    expect(marker()).toBe(`ref=${REF}\nadapter=sql ${SQL}\nadapter=chat ${CHAT}\npulled=<time>\n`);
    expect(result.stdout).toMatch(/done: .*hub\/models--Qwen--Qwen3-0.6B is ready .*, with its adapters; wrote/);
  });

  it('a second run with the same adapters does nothing', () => {
    const { run, calls } = setup();
    run(both);
    const again = run(both, { STUB_ADAPTER: 'fail' });
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('model already present: ');
    expect(again.stdout).toContain('and its adapters; nothing to do');
    expect(calls()).toHaveLength(3);
  });

  it('an adapter added later is pulled alone: the weights and the other adapters stay', () => {
    const { volume, run, calls, marker } = setup();
    run(`sql adapters/sql ${SQL}`);
    const result = run(both);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('the weights are present');
    expect(result.stdout).toContain(`adapter sql already present (${SQL})`);
    expect(calls().slice(2)).toEqual([`pull --registry-config /etc/registry-auth/config.json --output ${volume}/.adapter-staging/chat ${CHAT}`]);
    expect(marker()).toBe(`ref=${REF}\nadapter=sql ${SQL}\nadapter=chat ${CHAT}\npulled=<time>\n`);
    expect(result.stdout).toContain('done: the adapters are ready');
  });

  it('an adapter with a new reference is pulled again; one the stack dropped is removed', () => {
    const { volume, run, calls, marker } = setup();
    run(both);
    const sql2 = 'harbor.local/ai/adapters/sql:2';
    const result = run(`sql adapters/sql ${sql2}`);
    expect(result.status).toBe(0);
    expect(calls().slice(3)).toEqual([`pull --registry-config /etc/registry-auth/config.json --output ${volume}/.adapter-staging/sql ${sql2}`]);
    expect(result.stdout).toContain('removing adapter chat: the stack no longer lists it');
    expect(readdirSync(join(volume, 'adapters'))).toEqual(['sql']);
    expect(readFileSync(join(volume, 'adapters/sql/adapter_model.safetensors'), 'utf8')).toBe(`${sql2}\n`);
    expect(marker()).toBe(`ref=${REF}\nadapter=sql ${sql2}\npulled=<time>\n`);
  });

  it('new weights keep the adapters already pulled', () => {
    const { volume, run, calls } = setup();
    run(both);
    const result = run(both, {}, 'harbor.local/ai/qwen:2');
    expect(result.status).toBe(0);
    expect(calls().slice(3)).toEqual([`pull --registry-config /etc/registry-auth/config.json --output ${volume}/.pull-staging harbor.local/ai/qwen:2`]);
    expect(readdirSync(join(volume, 'adapters')).sort()).toEqual(['chat', 'sql']);
  });

  it('an adapter above maxLoraRank fails the Job, saying what to set, and leaves the volume as it was', () => {
    const { volume, run } = setup();
    const result = run(both, { STUB_RANK: '64' });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain("ERROR: adapter sql has rank 64, above the model's maxLoraRank 16: set maxLoraRank to at least 64 in the stack");
    expect(readdirSync(volume)).toEqual([]);
  });

  it('an artifact that is not an adapter, or a failed pull, fails the Job with no marker and no staging left', () => {
    const { volume, run } = setup();
    const empty = run(both, { STUB_ADAPTER: 'empty' });
    expect(empty.status).toBe(1);
    expect(empty.stdout).toContain(`ERROR: adapter sql: the artifact ${SQL} holds no adapter_config.json`);
    expect(readdirSync(volume)).toEqual([]);
    const failed = run(both, { STUB_ADAPTER: 'fail' });
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain(`ERROR: oras pull of adapter sql (${SQL}) failed`);
    expect(readdirSync(volume)).toEqual([]);
  });

  it('an adapter already on the volume (path) is checked, not pulled: in the weights artifact, or put there by hand', () => {
    const { volume, run, calls, marker } = setup();
    const inWeights = run('mine loras/mine -', { STUB_WEIGHTS_ADAPTER: 'loras/mine' });
    expect(inWeights.status).toBe(0);
    expect(calls()).toHaveLength(1);
    expect(marker()).toBe(`ref=${REF}\npulled=<time>\n`);
    rmSync(join(volume, 'loras'), { recursive: true });
    const gone = run('mine loras/mine -');
    expect(gone.status).toBe(1);
    expect(gone.stdout).toContain('ERROR: adapter mine: loras/mine on the volume holds no adapter_config.json');
  });

  it('refuses a weights artifact that holds adapters/ at its top', () => {
    const { volume, run } = setup();
    const result = run(both, { STUB_WEIGHTS_ADAPTER: 'adapters/x' });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('the weights artifact holds adapters/ at its top');
    expect(readdirSync(volume)).toEqual([]);
  });

  it('a marker written before adapters existed is honoured: no adapters, nothing to do', () => {
    const { volume, run, calls } = setup();
    writeFileSync(join(volume, '.pulled'), `ref=${REF}\npulled=2026-01-01T00:00:00Z\n`);
    const result = run('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('model already present');
    expect(calls()).toEqual([]);
  });
});
