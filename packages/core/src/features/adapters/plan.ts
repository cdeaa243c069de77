import { ADAPTERS_FOLDER, DEFAULT_LORA_RANK } from '../../constants.ts';
import { adapterSchema } from '../../config/schema.ts';
import type { ModelAdapter } from '../../config/types.ts';
import type { ValuesFile } from '../../discovery.ts';
import type { Issue } from '../../errors.ts';
import type { VolumeAdapters } from '../../storage.ts';
import type { Values } from '../../values/merge.ts';
import { serverAdapterConflicts, type ServerArgsKeys } from './rules.ts';

/**
 * LoRA adapters served as models (DESIGN §2, a feature): each adapter of a model is loaded by the
 * model's vLLM at start-up and answers under its own name, `parent` being the model's served name.
 * The rules are in `rules.ts`; what the model server, the pull Job and KServe get is here, as pure
 * functions of narrow inputs, so that every set calls the same ones.
 *
 * Where each source is read from:
 * - `harborRef`: the model's pull Job (ORAS, the image that pulls the weights) pulls it into
 *   `adapters/<name>/` on the model's volume before it writes `.pulled` (storage.ts);
 * - `path`: a folder already on the volume (the pull Job checks it holds an adapter);
 * - `huggingFace`: llm-d — vLLM downloads it at start-up (a model without volume); KServe — its
 *   storage initializer downloads it into the pod (`hf://`).
 */

/** Where an adapter comes from, as the plan holds it. */
export type AdapterSource =
  | { readonly kind: 'oras'; readonly ref: string }
  | { readonly kind: 'huggingface'; readonly repo: string; readonly revision: string | null }
  | { readonly kind: 'volume'; readonly path: string };

/** One adapter of a model, as the plan holds it (the shared endpoint reads `name` and `parent`). */
export interface AdapterPlan {
  /** The name clients send as `model`. */
  readonly name: string;
  /** The served name of the model it adapts (what vLLM's `/v1/models` gives as its `parent`). */
  readonly parent: string;
  readonly source: AdapterSource;
  /** Where the server loads it, in the model-server pod (a Hub repository id when vLLM downloads it). */
  readonly path: string;
}

/** The LoRA sizes a model's server gets: the largest rank, and the adapter slots (one per adapter). */
export interface LoraSizes {
  readonly maxRank: number;
  /** vLLM `--max-loras`: adapters in one batch. One slot per adapter, so every adapter can be in one batch. */
  readonly maxLoras: number;
  /** vLLM `--max-cpu-loras`: adapters kept in CPU memory (≥ maxLoras); all of them, so none is read again from disk. */
  readonly maxCpuLoras: number;
}

/** The sizes of a model's adapters: `maxLoraRank` (default 16, vLLM's) and one slot per adapter. */
export function loraSizes(adapters: readonly unknown[], maxLoraRank: number | undefined): LoraSizes {
  return { maxRank: maxLoraRank ?? DEFAULT_LORA_RANK, maxLoras: adapters.length, maxCpuLoras: adapters.length };
}

/** How a model server reaches its volume and its adapters. */
export interface AdapterPlaces {
  /** Where the model's volume is mounted in the server pod, or null (no volume, or not mounted). */
  readonly volumeMount: string | null;
  /**
   * Where the server loads an adapter of each source: `vllm` — a path in the pod (the volume), or the
   * Hub repository id vLLM downloads; `kserve` — the folder KServe mounts or downloads it into.
   */
  readonly server: 'vllm' | 'kserve';
}

/**
 * KServe v0.20 mounts (pvc://) or downloads (hf://) each adapter into `/mnt/lora/<name>` (its name
 * with characters outside `[A-Za-z0-9._-]` replaced, which an adapter name never has) and passes that
 * to vLLM (kserve/kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/workload_lora.go,
 * `loraAdaptersMountRoot`, `enumerateLoRAAdapters`).
 */
export const KSERVE_LORA_MOUNT_ROOT = '/mnt/lora';

/** The adapters of a model, as the plan holds them (stack order). */
export function adapterPlans(adapters: readonly ModelAdapter[] | undefined, parent: string, places: AdapterPlaces): AdapterPlan[] {
  return (adapters ?? []).map((adapter) => {
    const source = adapterSource(adapter);
    return { name: adapter.name, parent, source, path: serverPath(adapter.name, source, places) };
  });
}

function adapterSource(adapter: ModelAdapter): AdapterSource {
  if (adapter.harborRef !== undefined) return { kind: 'oras', ref: adapter.harborRef };
  if (adapter.huggingFace !== undefined) return { kind: 'huggingface', repo: adapter.huggingFace.repo, revision: adapter.huggingFace.revision ?? null };
  return { kind: 'volume', path: adapter.path! };
}

function serverPath(name: string, source: AdapterSource, places: AdapterPlaces): string {
  if (places.server === 'kserve') return `${KSERVE_LORA_MOUNT_ROOT}/${name}`;
  if (source.kind === 'huggingface') return source.repo;
  const onVolume = source.kind === 'oras' ? `${ADAPTERS_FOLDER}/${name}` : source.path;
  return `${places.volumeMount ?? ''}/${onVolume}`;
}

/** One line naming an adapter's source, for plan and diff: the OCI reference, the Hub repository, or the folder on the volume. */
export function describeAdapterSource(source: AdapterSource): string {
  if (source.kind === 'oras') return source.ref;
  if (source.kind === 'huggingface') return `huggingface.co/${source.repo}${source.revision ? `@${source.revision}` : ''}`;
  return `the model's volume, ${source.path}`;
}

/** The reference an adapter's source is known by (what the pod annotation records). */
export function adapterRef(source: AdapterSource): string {
  if (source.kind === 'oras') return source.ref;
  if (source.kind === 'huggingface') return `hf://${source.repo}${source.revision ? `@${source.revision}` : ''}`;
  return `volume:${source.path}`;
}

/**
 * The pod annotation that names every adapter's source: a new artifact behind the same name (a new
 * tag) changes no argument of the server, so without it the pods would keep the old adapter in
 * memory. Null without adapters (the pod template of a model without adapters is unchanged).
 */
export const ADAPTERS_ANNOTATION = 'app-serving.io/adapters';

export function adaptersAnnotation(adapters: readonly AdapterPlan[]): Record<string, string> {
  if (adapters.length === 0) return {};
  return { [ADAPTERS_ANNOTATION]: adapters.map((a) => `${a.name}=${adapterRef(a.source)}`).join(' ') };
}

/**
 * vLLM's options for a model's adapters (vLLM `vllm/entrypoints/launchers/cli_args.py`, checked
 * against v0.32.0; the same options and syntax since before v0.26):
 * `--enable-lora --max-lora-rank <r> --max-loras <n> --max-cpu-loras <n> --lora-modules <name>=<path> …`.
 * `--lora-modules` takes every adapter after one flag (its action replaces the list on a second
 * occurrence), each as `name=path` (its "old format": an item with "=" and no ","; an adapter name
 * has neither "=" nor ",", and a path app-serving writes no ","). Written last, so no option of the
 * values file can follow it as if it were a module.
 */
export function vllmLoraArgs(adapters: readonly AdapterPlan[], sizes: LoraSizes): string[] {
  if (adapters.length === 0) return [];
  return [
    '--enable-lora',
    '--max-lora-rank',
    String(sizes.maxRank),
    '--max-loras',
    String(sizes.maxLoras),
    '--max-cpu-loras',
    String(sizes.maxCpuLoras),
    '--lora-modules',
    ...adapters.map((a) => `${a.name}=${a.path}`),
  ];
}

/** What the pull Job fetches into the volume (`harborRef`) and checks there (`path`), or null when nothing. */
export function volumeAdapters(adapters: readonly AdapterPlan[], sizes: LoraSizes): VolumeAdapters | null {
  const items = adapters.flatMap((a): VolumeAdapters['items'][number][] =>
    a.source.kind === 'oras' ? [{ name: a.name, dir: `${ADAPTERS_FOLDER}/${a.name}`, ref: a.source.ref }] : a.source.kind === 'volume' ? [{ name: a.name, dir: a.source.path, ref: null }] : [],
  );
  return items.length > 0 ? { maxRank: sizes.maxRank, items } : null;
}

/**
 * A KServe v0.20 model's `spec.model.lora` (v1alpha2 `LoRASpec`): the adapters as `{name, uri}`
 * (`pvc://<claim>/<folder>` for what is on the model's volume, `hf://<owner>/<model>[:<revision>]`
 * for the Hub), and the sizes. KServe only writes `--max-loras` and `--max-cpu-loras` when
 * `maxAdapters` and `maxCpuAdapters` are set (workload_lora.go, addLoRAVLLMArgs; vLLM's default is one
 * adapter per batch), so all three are set.
 */
export function kserveLoraSpec(adapters: readonly AdapterPlan[], sizes: LoraSizes, pvc: string | null): Values | null {
  if (adapters.length === 0) return null;
  return {
    adapters: adapters.map((a) => ({ name: a.name, uri: kserveUri(a.source, a.name, pvc) })),
    maxRank: sizes.maxRank,
    maxAdapters: sizes.maxLoras,
    maxCpuAdapters: sizes.maxCpuLoras,
  };
}

function kserveUri(source: AdapterSource, name: string, pvc: string | null): string {
  if (source.kind === 'huggingface') return `hf://${source.repo}${source.revision ? `:${source.revision}` : ''}`;
  return `pvc://${pvc}/${source.kind === 'oras' ? `${ADAPTERS_FOLDER}/${name}` : source.path}`;
}

/** One line for `plan`: the adapters by name and source, and the sizes. */
export function describeAdapters(adapters: readonly AdapterPlan[], sizes: LoraSizes | null): string[] {
  const where = (a: AdapterPlan) => (a.path.startsWith('/') ? `loaded from ${a.path}` : 'vLLM downloads it at start-up');
  return adapters.map((a, i) => `${a.name} ← ${describeAdapterSource(a.source)} (${where(a)})${i === 0 && sizes ? `; max rank ${sizes.maxRank}, ${sizes.maxLoras} per batch` : ''}`);
}

/** What a set gives {@link planModelAdapters} for a model whose server it launches as vLLM. */
export interface ModelAdaptersInput {
  readonly adapters: readonly ModelAdapter[] | undefined;
  readonly maxLoraRank: number | undefined;
  /** The model's served name: every adapter's parent. */
  readonly parent: string;
  /** Where the server pod mounts the model's volume, or null (no volume, or not mounted). */
  readonly volumeMount: string | null;
  /** The server's values file, and where it holds the launch mode, the arguments and the volume switch. */
  readonly file: ValuesFile | undefined;
  readonly keys: ServerArgsKeys & { readonly mountModelVolume?: readonly string[] };
}

/** A model's adapters as its set deploys them with vLLM. */
export interface ModelAdapters {
  readonly adapters: readonly AdapterPlan[];
  readonly sizes: LoraSizes | null;
  /** vLLM's LoRA options, appended to the server's arguments. */
  readonly args: readonly string[];
  /** The model-server pod's annotation naming every adapter's source (a new source rolls the pods). */
  readonly podAnnotations: Readonly<Record<string, string>>;
  /** What the pull Job fetches or checks on the volume (onto the storage plan), or null. */
  readonly volume: VolumeAdapters | null;
  readonly issues: readonly Issue[];
  readonly warnings: readonly Issue[];
}

/**
 * A model's adapters for a vLLM server the set launches itself (the 2026-08 model-server
 * Deployment): the plan's adapters, vLLM's options, the pod annotation, what the pull Job does, and
 * the values file's conflicts with them (file, line and key).
 */
export function planModelAdapters(input: ModelAdaptersInput): ModelAdapters {
  const adapters = adapterPlans(input.adapters, input.parent, { volumeMount: input.volumeMount, server: 'vllm' });
  const { issues, warnings } = serverAdapterConflicts(input.file, input.keys, adapters);
  const onVolume = adapters.filter((a) => a.source.kind !== 'huggingface');
  if (onVolume.length > 0 && input.volumeMount === null && input.file && input.keys.mountModelVolume) {
    issues.push(
      input.file.source.issue(
        'values.conflict',
        [...input.keys.mountModelVolume],
        `is false, but the adapters ${onVolume.map((a) => a.name).join(', ')} are on the model's volume, which the server then does not mount: remove mountModelVolume: false`,
      ),
    );
  }
  if (adapters.length === 0) return { adapters, sizes: null, args: [], podAnnotations: {}, volume: null, issues, warnings };
  const sizes = loraSizes(adapters, input.maxLoraRank);
  return { adapters, sizes, args: vllmLoraArgs(adapters, sizes), podAnnotations: adaptersAnnotation(adapters), volume: volumeAdapters(adapters, sizes), issues, warnings };
}

/**
 * An adapter written as `<name>=<source>` (`app-serving new-model --adapter`): the source is an OCI
 * reference (`harbor.example.com/ai-adapters/sql:v1`), `hf://<org>/<repo>[@<revision>]`, or
 * `path:<folder on the volume>`. The adapter as the stack file holds it, or the problem, checked
 * with the stack schema's own rules.
 */
export function parseAdapterOption(text: string): { adapter: ModelAdapter } | { problem: string } {
  const eq = text.indexOf('=');
  if (eq <= 0) return { problem: 'write it as <name>=<source>: an OCI reference, hf://<org>/<repo>[@<revision>], or path:<folder on the volume>' };
  const name = text.slice(0, eq);
  const source = text.slice(eq + 1);
  const hf = /^hf:\/\/([^@]*)(?:@(.*))?$/.exec(source);
  const adapter: ModelAdapter = hf
    ? { name, huggingFace: { repo: hf[1]!, ...(hf[2] !== undefined && { revision: hf[2] }) } }
    : source.startsWith('path:')
      ? { name, path: source.slice('path:'.length) }
      : { name, harborRef: source };
  const parsed = adapterSchema.safeParse(adapter);
  if (parsed.success) return { adapter: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { problem: `${issue.path.join('.')} ${issue.message}` };
}
