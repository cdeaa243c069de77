import {
  ADAPTERS_FOLDER,
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

/**
 * LoRA adapters on a model's volume (features/adapters): those the pull Job pulls (`ref`: an OCI
 * artifact, into `dir`) and those already there (`ref` null: the Job checks `dir` holds an adapter).
 */
export interface VolumeAdapters {
  /** The model's `maxLoraRank`: the Job refuses an adapter of a higher rank (`r` in its adapter_config.json). */
  readonly maxRank: number;
  readonly items: readonly { readonly name: string; readonly dir: string; readonly ref: string | null }[];
}

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
  /** The model's LoRA adapters the Job pulls or checks, or null (none on the volume). */
  readonly adapters: VolumeAdapters | null;
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
    adapters: null,
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
 * - Idempotent: exits 0 at once when the marker records the wanted reference (and adapters).
 * - Atomic: pulls into a staging directory on the volume, checks the expected path is there,
 *   moves each top-level entry into place, and writes the marker last (via a temporary file).
 * - Recovers: removes a staging directory left by a killed run; a failed pull leaves no marker
 *   and no staging directory.
 * - Prints what it did, never credentials: it reads them from a file ORAS is pointed at.
 *
 * Adapters (features/adapters): each pulled adapter goes into its own folder (`adapters/<name>`)
 * through a second staging directory, is checked (an adapter_config.json whose rank `r` is at most
 * `MAX_LORA_RANK`), and is recorded in the marker (`adapter=<name> <ref>`); an adapter the marker
 * records with the same reference is not pulled again, one it records and the stack no longer lists
 * is removed, and new weights leave the adapters where they are. Adapters already on the volume
 * (`path`) are checked, not pulled.
 *
 * Inputs come from the environment (never interpolated into the script): `MODEL_REF`,
 * `EXPECT_PATH`, `REGISTRY_CONFIG`, optionally `MODEL_DIR` (default `/model-cache`), and for
 * adapters `ADAPTERS` (a line `<name> <folder> <OCI reference, or "-" when already on the volume>`
 * per adapter) and `MAX_LORA_RANK`.
 */
export function orasPullScript(): string {
  return `${SCRIPT_PRELUDE}
if [ "$pull_weights" = 1 ]; then
  log "pulling $MODEL_REF into $MODEL_DIR"
  if ! oras pull --registry-config "$REGISTRY_CONFIG" --output "$STAGING" "$MODEL_REF"; then
    fail "oras pull of $MODEL_REF failed (see above); the Job retries"
  fi
fi
while read -r name dir ref; do
  if [ -z "$name" ] || [ "$ref" = "-" ]; then continue; fi
  if printf '%s\\n' "$have_adapters" | grep -qxF "adapter=$name $ref" && [ -f "$MODEL_DIR/$dir/adapter_config.json" ]; then
    log "adapter $name already present ($ref)"
    continue
  fi
  log "pulling adapter $name ($ref) into $MODEL_DIR/$dir"
  mkdir -p "$ADAPTER_STAGING/$name"
  if ! oras pull --registry-config "$REGISTRY_CONFIG" --output "$ADAPTER_STAGING/$name" "$ref"; then
    fail "oras pull of adapter $name ($ref) failed (see above); the Job retries"
  fi
  check_adapter "$ADAPTER_STAGING/$name" "$name" "the artifact $ref"
done <<ADAPTERS_END
$ADAPTERS
ADAPTERS_END
${SCRIPT_COMMIT}`;
}

/**
 * The Hugging Face download script (kserve platform; POSIX sh in an image with the `hf` or
 * `huggingface-cli` command of huggingface_hub). Same guarantees as {@link orasPullScript}; it
 * downloads the repository as a plain directory (`--local-dir`), the form KServe serves from a
 * PVC. Inputs: `HF_REPO`, `HF_REVISION` (optional), `MODEL_PATH` (the directory inside the
 * volume), `EXPECT_PATH`, `MODEL_REF` (what the marker records), and `HF_TOKEN` (optional, from a
 * Secret; huggingface_hub reads it itself, the script never prints it). It pulls no adapter; it
 * checks those already on the volume (`ADAPTERS`, `MAX_LORA_RANK`, as for ORAS).
 */
export function huggingFaceDownloadScript(): string {
  return `${SCRIPT_PRELUDE}
if [ "$pull_weights" = 1 ]; then
  log "downloading $HF_REPO\${HF_REVISION:+ at $HF_REVISION} into $MODEL_DIR/$MODEL_PATH"
  if command -v hf >/dev/null 2>&1; then set -- hf download; else set -- huggingface-cli download; fi
  if ! HF_HUB_DISABLE_TELEMETRY=1 "$@" "$HF_REPO" \${HF_REVISION:+--revision "$HF_REVISION"} --local-dir "$STAGING/$MODEL_PATH" >/dev/null; then
    fail "download of $HF_REPO failed (see above); the Job retries"
  fi
fi
${SCRIPT_COMMIT}`;
}

const SCRIPT_PRELUDE = `set -eu
MODEL_DIR="\${MODEL_DIR:-${MODEL_MOUNT_PATH}}"
MARKER="$MODEL_DIR/${PULLED_MARKER_FILE}"
STAGING="$MODEL_DIR/.pull-staging"
ADAPTER_STAGING="$MODEL_DIR/.adapter-staging"
ADAPTERS="\${ADAPTERS:-}"
log() { printf '%s %s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }
fail() { log "ERROR: $*"; exit 1; }
cleanup() { for dir in "$STAGING" "$ADAPTER_STAGING"; do if [ -d "$dir" ]; then rm -rf "$dir"; fi; done; }
trap cleanup EXIT
trap 'exit 143' TERM INT
# check_adapter <folder> <name> <what it is>: a PEFT LoRA adapter whose rank the server accepts.
check_adapter() {
  if [ ! -f "$1/adapter_config.json" ]; then
    log "$3 holds: $(cd "$1" 2>/dev/null && find . -maxdepth 2 | head -n 20 | tr '\\n' ' ')"
    fail "adapter $2: $3 holds no adapter_config.json (a PEFT LoRA adapter folder: adapter_config.json and adapter_model.safetensors at its top)"
  fi
  rank="$(tr -d '\\n' < "$1/adapter_config.json" | sed -n 's/.*"r"[[:space:]]*:[[:space:]]*\\([0-9][0-9]*\\).*/\\1/p')"
  if [ -n "$rank" ] && [ -n "\${MAX_LORA_RANK:-}" ] && [ "$rank" -gt "$MAX_LORA_RANK" ]; then
    fail "adapter $2 has rank $rank, above the model's maxLoraRank $MAX_LORA_RANK: set maxLoraRank to at least $rank in the stack"
  fi
}
# check_volume_adapters <root>: the adapters already on the volume (a "-" reference), under root or the volume.
check_volume_adapters() {
  while read -r name dir ref; do
    if [ -z "$name" ] || [ "$ref" != "-" ]; then continue; fi
    if [ -e "$1/$dir" ]; then check_adapter "$1/$dir" "$name" "$dir (in the download)"; else check_adapter "$MODEL_DIR/$dir" "$name" "$dir on the volume"; fi
  done <<ADAPTERS_END
$ADAPTERS
ADAPTERS_END
}
want_adapters="$(while read -r name dir ref; do if [ -n "$name" ] && [ "$ref" != "-" ]; then printf 'adapter=%s %s\\n' "$name" "$ref"; fi; done <<ADAPTERS_END
$ADAPTERS
ADAPTERS_END
)"
have_ref=""
have_adapters=""
pull_weights=1
if [ -f "$MARKER" ]; then
  have_ref="$(sed -n 's/^ref=//p' "$MARKER")"
  have_adapters="$(sed -n '/^adapter=/p' "$MARKER")"
  if [ "$have_ref" = "$MODEL_REF" ] && [ "$have_adapters" = "$want_adapters" ]; then
    check_volume_adapters "$MODEL_DIR"
    log "model already present: $MARKER records $MODEL_REF\${want_adapters:+ and its adapters}; nothing to do"
    exit 0
  fi
  if [ "$have_ref" = "$MODEL_REF" ]; then
    pull_weights=0
    log "the weights are present ($MODEL_REF); the adapters changed"
  else
    log "the volume holds \${have_ref:-an unknown model} but $MODEL_REF is wanted: fetching again"
  fi
fi
if ! ( : > "$MODEL_DIR/.write-test" ) 2>/dev/null; then
  fail "$MODEL_DIR is not writable by uid $(id -u); on a hostPath volume, give that uid the directory (chown $(id -u):$(id -g) <hostpathDir>)"
fi
rm -f "$MODEL_DIR/.write-test"
if [ -e "$STAGING" ] || [ -e "$ADAPTER_STAGING" ]; then
  log "removing a partial download left by an earlier run"
  cleanup
fi
mkdir -p "$STAGING"`;

const SCRIPT_COMMIT = `if [ "$pull_weights" = 1 ] && [ ! -e "$STAGING/$EXPECT_PATH" ]; then
  log "the download holds: $(cd "$STAGING" && find . -maxdepth 3 | head -n 20 | tr '\\n' ' ')"
  fail "expected $EXPECT_PATH in the download (check modelSource.modelUri and layout)"
fi
if [ -n "$want_adapters" ] && [ -e "$STAGING/${ADAPTERS_FOLDER}" ]; then
  fail "the weights artifact holds ${ADAPTERS_FOLDER}/ at its top, the folder of the pulled adapters: move it in the artifact (a path adapter can name any other folder)"
fi
check_volume_adapters "$STAGING"
rm -f "$MARKER"
for entry in "$STAGING"/* "$STAGING"/.[!.]* "$STAGING"/..?*; do
  [ -e "$entry" ] || continue
  name="\${entry##*/}"
  rm -rf "\${MODEL_DIR:?}/$name"
  mv "$entry" "$MODEL_DIR/$name"
done
rmdir "$STAGING"
for entry in "$ADAPTER_STAGING"/*; do
  [ -e "$entry" ] || continue
  name="\${entry##*/}"
  mkdir -p "$MODEL_DIR/${ADAPTERS_FOLDER}"
  rm -rf "\${MODEL_DIR:?}/${ADAPTERS_FOLDER}/$name"
  mv "$entry" "$MODEL_DIR/${ADAPTERS_FOLDER}/$name"
done
while read -r line; do
  name="\${line#adapter=}"
  name="\${name%% *}"
  case "$name" in ''|.|..|*/*) continue ;; esac
  keep="$(printf '%s\\n' "$want_adapters" | while read -r want; do case "$want" in "adapter=$name "*) echo yes ;; esac; done)"
  if [ -z "$keep" ]; then
    log "removing adapter $name: the stack no longer lists it"
    rm -rf "\${MODEL_DIR:?}/${ADAPTERS_FOLDER}/$name"
  fi
done <<ADAPTERS_END
$have_adapters
ADAPTERS_END
if [ -d "$ADAPTER_STAGING" ]; then rmdir "$ADAPTER_STAGING" 2>/dev/null || rm -rf "$ADAPTER_STAGING"; fi
{ printf 'ref=%s\\n' "$MODEL_REF"; if [ -n "$want_adapters" ]; then printf '%s\\n' "$want_adapters"; fi; printf 'pulled=%s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"; } > "$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
if [ "$pull_weights" = 1 ]; then
  log "done: $MODEL_DIR/$EXPECT_PATH is ready ($(du -sh "$MODEL_DIR/$EXPECT_PATH" 2>/dev/null | cut -f1) on disk)\${want_adapters:+, with its adapters}; wrote $MARKER"
else
  log "done: the adapters are ready; wrote $MARKER"
fi`;
