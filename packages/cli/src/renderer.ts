import { createRequire } from 'node:module';
import type { renderStack } from '@app-serving/pulumi-components/render';

/**
 * Modules `@pulumi/pulumi` requires when it loads, for its closure serialiser (functions turned
 * into code for dynamic providers and `serializeFunction`), which a render under mocks never
 * calls: TypeScript (about 0.3 s of CPU to load) and npm's Arborist (about 0.45 s). Over half of
 * a one-model `render`'s time went to loading them (issue 16).
 */
const DEFERRED = new Set(['typescript', '@npmcli/arborist']);

/**
 * Loads the renderer (Pulumi and the components), with the modules above deferred: each is
 * replaced by a stand-in that loads the real module the first time anything touches it, so a
 * code path that does use one still gets the real thing, only later. Only the CLI does this — it
 * owns its process; the library never patches Node's loader.
 */
export async function loadRenderer(): Promise<typeof renderStack> {
  deferModules();
  const { renderStack: render } = await import('@app-serving/pulumi-components/render');
  return render;
}

let deferred = false;

function deferModules(): void {
  if (deferred) return;
  deferred = true;
  const require = createRequire(import.meta.url);
  const Module = require('node:module') as { _load: (request: string, parent: { filename?: string } | undefined, isMain: boolean) => unknown };
  const load = Module._load;
  const standIns = new Map<string, unknown>();
  Module._load = function (this: unknown, request: string, parent: { filename?: string } | undefined, isMain: boolean): unknown {
    if (!DEFERRED.has(request) || !resolvable(request, parent)) return load.call(this, request, parent, isMain);
    let standIn = standIns.get(request);
    if (!standIn) {
      let real: object | undefined;
      const get = (): object => (real ??= load.call(this, request, parent, isMain) as object);
      // A function target, so that the stand-in can also be called or constructed (Arborist is a class).
      const target = function deferredModule() {};
      standIn = new Proxy(target, {
        // Pulumi takes these modules through TypeScript's `__importStar`, which copies every key
        // (loading the module) unless the module says it is an ES module: say so, without loading it.
        get: (_target, key) => (key === '__esModule' ? true : Reflect.get(get(), key)),
        has: (_target, key) => Reflect.has(get(), key),
        set: (_target, key, value) => Reflect.set(get(), key, value),
        ownKeys: () => {
          const keys = Reflect.ownKeys(get());
          return keys.includes('prototype') ? keys : [...keys, 'prototype'];
        },
        getOwnPropertyDescriptor: (_target, key) => {
          if (key === 'prototype') return Reflect.getOwnPropertyDescriptor(target, key);
          const descriptor = Reflect.getOwnPropertyDescriptor(get(), key);
          return descriptor && { ...descriptor, configurable: true };
        },
        apply: (_target, self, args) => Reflect.apply(get() as (...a: unknown[]) => unknown, self, args),
        construct: (_target, args) => Reflect.construct(get() as new (...a: unknown[]) => object, args),
      });
      standIns.set(request, standIn);
    }
    return standIn;
  };
}

/** Whether `request` can be found from `parent`; if not, it is not deferred, so that Pulumi's own fallback (a vendored TypeScript) still runs. */
function resolvable(request: string, parent: { filename?: string } | undefined): boolean {
  try {
    createRequire(parent?.filename ?? import.meta.url).resolve(request);
    return true;
  } catch {
    return false;
  }
}
