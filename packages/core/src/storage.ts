import {
  DEFAULT_HOSTPATH_ROOT,
  MODEL_MOUNT_PATH,
  ON_PREM_STORAGE_CLASS,
  INFRA_MIRROR_PROJECT,
  ORAS_IMAGE_PUBLIC,
  PULLED_MARKER_FILE,
  PULLED_MARKER_PATH,
} from './constants.ts';
import type { ModelSource } from './config/types.ts';
import { mirrorReference } from './images.ts';
import { storageNames } from './names.ts';

/** Where a model's weights come from. */
export type WeightsSource =
  | { readonly kind: 'oras'; readonly ref: string; readonly registry: string }
  | { readonly kind: 'huggingface'; readonly repo: string; readonly revision: string | null };

/** A model's volume and the Job that fills it. */
export interface StoragePlan {
  readonly pvc: string;
  /** The static hostPath PV (on-prem with `hostpathNode`), else null. */
  readonly pv: string | null;
  readonly job: string;
  /** Absolute path of the marker the Job writes last, as mounted in the pods. */
  readonly marker: string;
  readonly mountPath: string;
  readonly size: string;
  /** StorageClass of the PVC; null means the cluster default. */
  readonly storageClass: string | null;
  readonly hostPath: { readonly node: string; readonly dir: string } | null;
  readonly source: WeightsSource;
  /** The image the Job runs. */
  readonly image: string;
  /** Path of the model inside the volume. */
  readonly modelUri: string;
  readonly layout: 'hf-cache' | 'directory';
  /** The path (relative to the volume) that must exist after a pull, or the pull is wrong. */
  readonly expectPath: string;
}

/** What {@link storagePlan} needs from the stack. */
export interface StoragePlanInput {
  readonly slug: string;
  readonly source: ModelSource;
  readonly cloudProvider: 'cloud' | 'on-prem';
  readonly harborHostname?: string | undefined;
  /** The image of the Hugging Face download Job (kserve platform). */
  readonly downloaderImage?: string | undefined;
}

/** The storage plan of a model with a `modelSource`. */
export function storagePlan(input: StoragePlanInput): StoragePlan {
  const { slug, source, cloudProvider } = input;
  const names = storageNames(slug);
  const onPrem = cloudProvider === 'on-prem';
  const hostPath = onPrem && source.hostpathNode ? { node: source.hostpathNode, dir: source.hostpathDir ?? `${DEFAULT_HOSTPATH_ROOT}/${slug}` } : null;
  const weights: WeightsSource = source.harborRef
    ? { kind: 'oras', ref: source.harborRef, registry: source.harborRef.split('/')[0]! }
    : { kind: 'huggingface', repo: source.huggingFace!.repo, revision: source.huggingFace!.revision ?? null };
  const modelUri = source.modelUri ?? (weights.kind === 'huggingface' ? `hub/${weights.repo}` : '');
  // A Hugging Face download is a plain directory (`--local-dir`).
  const layout = source.huggingFace ? 'directory' : source.layout;
  const image =
    weights.kind === 'oras'
      ? onPrem && input.harborHostname
        ? mirrorReference(ORAS_IMAGE_PUBLIC, `${input.harborHostname}/${INFRA_MIRROR_PROJECT}`)
        : ORAS_IMAGE_PUBLIC
      : (input.downloaderImage ?? '');
  return {
    pvc: names.pvc,
    pv: hostPath ? names.pv : null,
    job: names.job,
    marker: PULLED_MARKER_PATH,
    mountPath: MODEL_MOUNT_PATH,
    size: source.storageSize,
    storageClass: source.storageClass ?? (onPrem ? ON_PREM_STORAGE_CLASS : null),
    hostPath,
    source: weights,
    image,
    modelUri,
    layout,
    // A Hugging Face download must at least bring the model's config.json.
    expectPath: weights.kind === 'huggingface' ? `${modelUri}/config.json` : expectedPath(modelUri, layout),
  };
}

/** What the marker records for a source, and what names the model's weights: the OCI reference, or `hf://<repo>[@<revision>]`. */
export function sourceRef(storage: Pick<StoragePlan, 'source'>): string {
  const { source } = storage;
  return source.kind === 'oras' ? source.ref : `hf://${source.repo}${source.revision ? `@${source.revision}` : ''}`;
}

/**
 * The path a pull must produce: for a Hugging Face hub cache `<dir>/<org>/<model>` that is
 * `<dir>/models--<org>--<model>` (the cache's own folder naming); for a directory, the directory.
 */
export function expectedPath(modelUri: string, layout: 'hf-cache' | 'directory'): string {
  if (layout === 'directory') return modelUri;
  const parts = modelUri.split('/');
  const model = parts.pop();
  const org = parts.pop();
  return [...parts, `models--${org}--${model}`].join('/');
}

/**
 * The ORAS pull script the Job runs (POSIX sh; the ORAS image is Alpine with busybox).
 *
 * - Idempotent: exits 0 at once when the marker records the wanted reference.
 * - Atomic: pulls into a staging directory on the volume, checks the expected path is there,
 *   moves each top-level entry into place, and writes the marker last (via a temporary file).
 * - Recovers: removes a staging directory left by a killed run; a failed pull leaves no marker
 *   and no staging directory.
 * - Prints what it did, never credentials: it reads them from a file ORAS is pointed at.
 *
 * Inputs come from the environment (never interpolated into the script): `MODEL_REF`,
 * `EXPECT_PATH`, `REGISTRY_CONFIG`, and optionally `MODEL_DIR` (default `/model-cache`).
 */
export function orasPullScript(): string {
  return `${SCRIPT_PRELUDE}
log "pulling $MODEL_REF into $MODEL_DIR"
if ! oras pull --registry-config "$REGISTRY_CONFIG" --output "$STAGING" "$MODEL_REF"; then
  fail "oras pull of $MODEL_REF failed (see above); the Job retries"
fi
${SCRIPT_COMMIT}`;
}

/**
 * The Hugging Face download script (kserve platform; POSIX sh in an image with the `hf` or
 * `huggingface-cli` command of huggingface_hub). Same guarantees as {@link orasPullScript}; it
 * downloads the repository as a plain directory (`--local-dir`), the form KServe serves from a
 * PVC. Inputs: `HF_REPO`, `HF_REVISION` (optional), `MODEL_PATH` (the directory inside the
 * volume), `EXPECT_PATH`, `MODEL_REF` (what the marker records), and `HF_TOKEN` (optional, from a
 * Secret; huggingface_hub reads it itself, the script never prints it).
 */
export function huggingFaceDownloadScript(): string {
  return `${SCRIPT_PRELUDE}
log "downloading $HF_REPO\${HF_REVISION:+ at $HF_REVISION} into $MODEL_DIR/$MODEL_PATH"
if command -v hf >/dev/null 2>&1; then set -- hf download; else set -- huggingface-cli download; fi
if ! HF_HUB_DISABLE_TELEMETRY=1 "$@" "$HF_REPO" \${HF_REVISION:+--revision "$HF_REVISION"} --local-dir "$STAGING/$MODEL_PATH" >/dev/null; then
  fail "download of $HF_REPO failed (see above); the Job retries"
fi
${SCRIPT_COMMIT}`;
}

const SCRIPT_PRELUDE = `set -eu
MODEL_DIR="\${MODEL_DIR:-${MODEL_MOUNT_PATH}}"
MARKER="$MODEL_DIR/${PULLED_MARKER_FILE}"
STAGING="$MODEL_DIR/.pull-staging"
log() { printf '%s %s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }
fail() { log "ERROR: $*"; exit 1; }
cleanup() { if [ -d "$STAGING" ]; then rm -rf "$STAGING"; fi; }
trap cleanup EXIT
trap 'exit 143' TERM INT

if [ -f "$MARKER" ]; then
  have="$(sed -n 's/^ref=//p' "$MARKER")"
  if [ "$have" = "$MODEL_REF" ]; then
    log "model already present: $MARKER records $MODEL_REF; nothing to do"
    exit 0
  fi
  log "the volume holds \${have:-an unknown model} but $MODEL_REF is wanted: fetching again"
fi
if ! ( : > "$MODEL_DIR/.write-test" ) 2>/dev/null; then
  fail "$MODEL_DIR is not writable by uid $(id -u); on a hostPath volume, give that uid the directory (chown $(id -u):$(id -g) <hostpathDir>)"
fi
rm -f "$MODEL_DIR/.write-test"
if [ -e "$STAGING" ]; then
  log "removing a partial download left by an earlier run"
  rm -rf "$STAGING"
fi
mkdir -p "$STAGING"`;

const SCRIPT_COMMIT = `if [ ! -e "$STAGING/$EXPECT_PATH" ]; then
  log "the download holds: $(cd "$STAGING" && find . -maxdepth 3 | head -n 20 | tr '\\n' ' ')"
  fail "expected $EXPECT_PATH in the download (check modelSource.modelUri and layout)"
fi
rm -f "$MARKER"
for entry in "$STAGING"/* "$STAGING"/.[!.]* "$STAGING"/..?*; do
  [ -e "$entry" ] || continue
  name="\${entry##*/}"
  rm -rf "\${MODEL_DIR:?}/$name"
  mv "$entry" "$MODEL_DIR/$name"
done
rmdir "$STAGING"
printf 'ref=%s\\npulled=%s\\n' "$MODEL_REF" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
log "done: $MODEL_DIR/$EXPECT_PATH is ready ($(du -sh "$MODEL_DIR/$EXPECT_PATH" 2>/dev/null | cut -f1) on disk); wrote $MARKER"`;
