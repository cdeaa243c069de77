import { compareText } from './text-order.ts';
import { INFRA_MIRROR_PROJECT, ORAS_IMAGE_PUBLIC } from './constants.ts';
import type { Issue } from './errors.ts';
import { KSERVE_RELEASES } from './kserve/releases.ts';
import { ROUTER_EPP_IMAGE, ROUTER_PROXY_IMAGE, VLLM_IMAGE } from './upstream/2026-08/facts.ts';
import { formatPath, groupDigits, summarizeNames, SUMMARY_NAMES } from './errors.ts';
import { getPath, isValuesMap, type Values } from './values/merge.ts';

/** One container image and every place that pulls it. */
export interface ImageUse {
  readonly image: string;
  readonly uses: readonly { readonly model: string; readonly where: string }[];
}

/** One place an image is pulled from: the image and what sets it. */
export interface ImageSource {
  readonly image: string;
  readonly where: string;
}

/** Images the modelservice chart pulls with these effective values (decode/prefill containers, init containers, sidecar, requester). */
export function modelServiceImages(effective: Values, file: string, fileValues: Values, chart: string): ImageSource[] {
  const out: ImageSource[] = [];
  const origin = (path: (string | number)[]) => (hasListPath(fileValues, path) ? `${file}: ${formatPath(path)}` : `${chart} default (${formatPath(path)})`);
  for (const role of ['decode', 'prefill'] as const) {
    const create = getPath(effective, [role, 'create']) !== false;
    const replicas = getPath(effective, [role, 'replicas']);
    if (!create || replicas === 0) continue;
    for (const list of ['containers', 'initContainers'] as const) {
      const items = getPath(effective, [role, list]);
      if (!Array.isArray(items)) continue;
      items.forEach((item, index) => {
        if (isValuesMap(item) && typeof item.image === 'string') out.push({ image: item.image, where: origin([role, list, index, 'image']) });
      });
    }
    if (role === 'decode' && getPath(effective, ['routing', 'proxy', 'enabled']) !== false) {
      const image = getPath(effective, ['routing', 'proxy', 'image']);
      if (typeof image === 'string') out.push({ image, where: origin(['routing', 'proxy', 'image']) });
    }
  }
  if (getPath(effective, ['requester', 'enable']) === true) {
    const image = getPath(effective, ['requester', 'image']);
    if (typeof image === 'string') out.push({ image, where: origin(['requester', 'image']) });
  }
  return out;
}

/** The EPP image the GAIE chart pulls (`<hub>/<name>:<tag>`). */
export function gaieImages(effective: Values, file: string, fileValues: Values, chart: string): ImageSource[] {
  const image = getPath(effective, ['inferenceExtension', 'image']);
  if (!isValuesMap(image)) return [];
  const { hub, name, tag } = image as { hub?: unknown; name?: unknown; tag?: unknown };
  if (typeof hub !== 'string' || typeof name !== 'string') return [];
  const set = getPath(fileValues, ['inferenceExtension', 'image']) !== undefined;
  return [{ image: `${hub}/${name}${typeof tag === 'string' && tag ? `:${tag}` : ''}`, where: set ? `${file}: inferenceExtension.image` : `${chart} default (inferenceExtension.image)` }];
}

/** Groups image sources of many models into a sorted, de-duplicated inventory. */
export function inventory(entries: readonly { model: string; sources: readonly ImageSource[] }[]): ImageUse[] {
  const byImage = new Map<string, { uses: { model: string; where: string }[]; seen: Set<string> }>();
  for (const { model, sources } of entries) {
    for (const { image, where } of sources) {
      let entry = byImage.get(image);
      if (!entry) byImage.set(image, (entry = { uses: [], seen: new Set() }));
      // One set per image: a sidecar image used by 500 models is not scanned 500 times over.
      const key = `${model}\0${where}`;
      if (!entry.seen.has(key)) {
        entry.seen.add(key);
        entry.uses.push({ model, where });
      }
    }
  }
  return [...byImage.entries()].sort(([a], [b]) => compareText(a, b)).map(([image, { uses }]) => ({ image, uses }));
}

/** Splits an image reference into registry, repository and tag/digest (Docker's rules). */
export function parseImage(image: string): { registry: string; repository: string; tag: string | null; digest: string | null } {
  let rest = image;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const first = rest.split('/')[0]!;
  const hasRegistry = rest.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  const registry = hasRegistry ? first : 'docker.io';
  let repository = hasRegistry ? rest.slice(first.length + 1) : rest;
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  return { registry, repository, tag, digest };
}

/** Warnings about images: unpinned tags, and (on-prem) images not mirrored in Harbor. */
export function imageWarnings(images: readonly ImageUse[], harborHostname: string | undefined, onPrem: boolean): Issue[] {
  const warnings: Issue[] = [];
  for (const { image, uses } of images) {
    const { registry, tag, digest } = parseImage(image);
    const where = describeUses(uses);
    const many = uses.length > SUMMARY_NAMES + 1 ? { uses: uses.map(({ model, where }) => ({ model, where })) } : {};
    if (!digest && (tag === null || tag === 'latest')) {
      warnings.push({ code: 'warning.image-unpinned', path: '', message: `${image} is not pinned to a version (${where}); pin a tag so every node runs the same code and a mirror can copy it`, ...many });
    }
    if (onPrem && harborHostname && registry !== harborHostname) {
      warnings.push({
        code: 'warning.image-not-mirrored',
        path: '',
        message: `${image} is pulled from ${registry}, not from Harbor (${harborHostname}); an air-gapped cluster cannot reach it (${where}) — mirror it with \`app-serving images\` and use the Harbor reference`,
        ...many,
      });
    }
  }
  return warnings;
}

/**
 * Where an image is pulled: `<model>: <where>; …` for a few uses; for more, one part per place
 * with the models summarised (`<where> in 50 models: M0, M1, M2 and 47 more`), or, when each model
 * sets it in its own file, the first few uses and a count — so that a warning about an image every
 * model pulls stays one readable line (the issue's `uses` lists them all).
 */
function describeUses(uses: ImageUse['uses']): string {
  if (uses.length <= SUMMARY_NAMES + 1) return uses.map((u) => `${u.model}: ${u.where}`).join('; ');
  const byWhere = new Map<string, string[]>();
  for (const { model, where } of uses) {
    const models = byWhere.get(where);
    if (models) models.push(model);
    else byWhere.set(where, [model]);
  }
  // Set in each model's own file: the places differ, so the models are summarised with theirs.
  if (byWhere.size > SUMMARY_NAMES + 1) return `in ${groupDigits(uses.length)} models: ${summarizeNames(uses.map((u) => `${u.model}: ${u.where}`))}`;
  return [...byWhere.entries()]
    .map(([where, models]) => (models.length === 1 ? `${models[0]}: ${where}` : `${where} in ${groupDigits(models.length)} models: ${summarizeNames(models)}`))
    .join('; ');
}

function hasListPath(values: Values, path: (string | number)[]): boolean {
  let current: unknown = values;
  for (const segment of path) {
    if (typeof segment === 'number') {
      if (!Array.isArray(current)) return false;
      current = current[segment];
    } else {
      if (!isValuesMap(current)) return false;
      current = current[segment];
    }
    if (current === undefined) return false;
  }
  return true;
}

/**
 * Where an image lives once mirrored under `mirror` (`<registry>[/<project>]`): the upstream
 * repository path without its registry host, same tag or digest —
 * `ghcr.io/llm-d/llm-d-cuda:v0.4.0` → `<mirror>/llm-d/llm-d-cuda:v0.4.0`. An image already under
 * the mirror's registry is returned unchanged, and an image already laid out under the mirror's
 * project on another registry (`old-harbor/<project>/llm-d/…`) keeps its path: only the registry
 * changes, the project is not added twice.
 */
export function mirrorReference(image: string, mirror: string): string {
  const { registry, repository, tag, digest } = parseImage(image);
  const trimmed = mirror.replace(/\/+$/, '');
  const slash = trimmed.indexOf('/');
  const mirrorRegistry = slash < 0 ? trimmed : trimmed.slice(0, slash);
  const project = slash < 0 ? '' : trimmed.slice(slash + 1);
  if (registry === mirrorRegistry) return image;
  let path = registry === 'docker.io' ? repository.replace(/^library\//, '') : repository;
  if (project && path.startsWith(`${project}/`)) path = path.slice(project.length + 1);
  return `${trimmed}/${path}${digest ? `@${digest}` : tag ? `:${tag}` : ''}`;
}

/** The images the 2026-08 set pins, whose upstream `images` knows when a stack names them in its mirror. */
const ROUTER_SET_IMAGES: readonly string[] = [VLLM_IMAGE, ROUTER_EPP_IMAGE, ROUTER_PROXY_IMAGE];

/**
 * The images app-serving itself runs; they mirror into the infra project, which the plan expects:
 * the ORAS pull Job's, and each KServe release's storage-initializer (the Hugging Face download Job).
 */
export const INFRA_IMAGES: readonly string[] = [ORAS_IMAGE_PUBLIC, ...new Set(Object.values(KSERVE_RELEASES).map((r) => r.downloaderImage))];

/** What to do with one image to make it available in Harbor. */
export interface MirrorStep {
  readonly image: string;
  /** Where to copy from: the image itself, or the known upstream of an app-serving image already named in Harbor. */
  readonly source: string | null;
  /** Where it must end up. */
  readonly target: string;
  /** True when the stack already names the image in Harbor (so it must exist there before deploying). */
  readonly inHarbor: boolean;
}

/**
 * How to mirror a stack's images (`app-serving images`): model images go under `mirror`
 * (`<registry>/<project>`); app-serving's own images under `<registry>/images-infra`, where
 * on-prem plans look for them (also when the stack names them under `images-infra` of another
 * registry). An image the stack already names in the mirror registry is expected there; for
 * app-serving's own images and KServe's (`kserve.imageMirror`) its public upstream is known, for
 * the others `source` is null (copy it from wherever the model author took it).
 */
export function mirrorSteps(images: readonly ImageUse[], mirror: string): MirrorStep[] {
  const registry = mirror.split('/')[0]!;
  const infraMirror = `${registry}/${INFRA_MIRROR_PROJECT}`;
  const upstreamOf = new Map([
    ...INFRA_IMAGES.map((image) => [mirrorReference(image, infraMirror), image] as const),
    // KServe's own images, as `kserve.imageMirror` names them when it is this mirror.
    ...Object.values(KSERVE_RELEASES).flatMap((r) => r.wellKnownImages).map(({ image }) => [mirrorReference(image, mirror), image] as const),
    // The 2026-08 set's pinned images (upstream vLLM, the Router's EPP and proxy), as `migrate` and `new-model` name them in this mirror.
    ...ROUTER_SET_IMAGES.map((image) => [mirrorReference(image, mirror), image] as const),
  ]);
  return images.map(({ image }) => {
    const { registry: from, repository } = parseImage(image);
    const inHarbor = from === registry;
    if (inHarbor) return { image, source: upstreamOf.get(image) ?? null, target: image, inHarbor };
    const infra = INFRA_IMAGES.includes(image) || repository.startsWith(`${INFRA_MIRROR_PROJECT}/`);
    const target = mirrorReference(image, infra ? infraMirror : mirror);
    return { image, source: image, target, inHarbor };
  });
}
