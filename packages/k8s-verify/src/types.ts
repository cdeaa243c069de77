/**
 * The result contract of `app-serving verify`: what every check returns, what a run returns, and
 * the progress events. Everything here is plain JSON-serialisable data; `--json` prints a
 * {@link VerifyResult} as is. Fields are always present (null when they do not apply), so scripts
 * can read them without guarding every key. Adding a field is compatible; renaming or removing one
 * bumps {@link RESULT_SCHEMA_VERSION}.
 */

/** Version of the JSON shape of {@link VerifyResult}. */
export const RESULT_SCHEMA_VERSION = 1;

/**
 * Every check, in the order a model runs them. The names are a contract (CLI output, JSON, JUnit
 * test-case names); never rename one.
 *
 * - `ready`: the model's pods are Ready (and, for llm-d generative models, the gateway and EPP pods;
 *   for KServe, the LLMInferenceService's `Ready` condition); the pull/download Job succeeded.
 * - `pulled`: the `.pulled` marker is on the model volume (exec `test -f` in the decode pod).
 * - `address`: (KServe) the URL KServe reports in `status.url` / `status.addresses`.
 * - `models`: `GET /v1/models` lists the served model name.
 * - `refuses-anonymous`: (models with access apiKeys or jwt) the same request without credentials
 *   is refused with 401 or 403; "model X answers without credentials" otherwise.
 * - `chat`: `POST /v1/chat/completions` answers with non-empty content.
 * - `chat-stream`: the same with `"stream": true`: a well-formed SSE stream ending in `[DONE]`.
 * - `completions`: `POST /v1/completions` answers with non-empty text.
 * - `adapters`: (models with LoRA adapters) each adapter answers a chat request by its own name,
 *   through the model's endpoint.
 * - `embeddings`: `POST /v1/embeddings` answers one finite vector per input, all of one dimension.
 * - `gateway-rejects-embeddings`: informational, never fails: what the Gateway does with
 *   `/v1/embeddings` (GAIE v1.2's EPP rejects it with 400).
 * - `load`: the optional latency probe (`--load`): smoke-level, not a benchmark.
 */
export const CHECK_NAMES = [
  'ready',
  'pulled',
  'address',
  'models',
  'refuses-anonymous',
  'chat',
  'chat-stream',
  'completions',
  'adapters',
  'embeddings',
  'gateway-rejects-embeddings',
  'load',
  // The stack's endpoint (endpoint-checks.ts).
  'endpoint-models',
  'endpoint-unknown-model',
  'endpoint-refuses-anonymous',
  'endpoint-chat',
  'endpoint-embeddings',
  'endpoint-refuses-ungranted',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/**
 * - `pass`: verified.
 * - `fail`: verified and wrong, or could not be verified because something is broken; fails the run.
 * - `skip`: not run or cannot be checked (no modelSource, `--base-url`, no exec permission, an
 *   earlier step failed); never fails the run by itself.
 * - `info`: an informational check's finding; never fails the run.
 */
export type CheckStatus = 'pass' | 'fail' | 'skip' | 'info';
export const CHECK_STATUSES: readonly CheckStatus[] = ['pass', 'fail', 'skip', 'info'];

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Why a check failed: what it expected, what came back, and the likely cause. */
export interface Failure {
  /** What the check expected, e.g. `HTTP 200 with a non-empty choices[0].message.content`. */
  readonly expected: string;
  /** What came back, e.g. `HTTP 404`, `connection refused`, `3 vectors of dimensions 384, 384, 512`. */
  readonly got: string;
  /** The likely cause and what to look at, when known. */
  readonly cause: string | null;
  /** The HTTP status, when an HTTP answer came back. */
  readonly httpStatus: number | null;
  /** The first ~200 bytes of the response body (secrets redacted), when there was one. */
  readonly body: string | null;
}

/** The outcome of one check of one model. */
export interface CheckResult {
  readonly name: CheckName;
  readonly status: CheckStatus;
  /** One line for the summary table, e.g. `decode 1/1 Ready; pull Job succeeded`. */
  readonly message: string;
  readonly durationMs: number;
  /** What was called, e.g. `POST /v1/chat/completions via port-forward svc/…:80 → pod/…:80`. */
  readonly target: string | null;
  /** Set when `status` is `fail`. */
  readonly failure: Failure | null;
  /** Check-specific facts (served model ids, vector dimension, time to first token, …). */
  readonly data: { readonly [key: string]: JsonValue };
  /** How many times the check ran (`ready` and `address` retry under `--wait`). */
  readonly attempts: number;
}

/** Latency percentiles, milliseconds. */
export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
}

/** The `--load` latency probe of one model. */
export interface LoadProbeResult {
  /** Always `smoke-level probe, not a benchmark`. */
  readonly label: string;
  readonly requests: number;
  readonly concurrency: number;
  /** Requests actually sent (fewer than `requests` when the run's deadline or a cancellation stopped the probe). */
  readonly sent: number;
  readonly succeeded: number;
  /** Requests sent that failed (those cut by the deadline or a cancellation are not counted). */
  readonly failed: number;
  /** Why the probe stopped before sending every request (the run's deadline, a cancellation), else null. */
  readonly stopped: string | null;
  /** Time to first token (first non-empty streamed delta), over the successful requests. */
  readonly ttftMs: Percentiles | null;
  /** End-to-end latency (request sent → `[DONE]`), over the successful requests. */
  readonly e2eMs: Percentiles | null;
  /** Output tokens of all successful requests divided by the probe's wall-clock time. */
  readonly outputTokensPerSecond: number | null;
  /** `usage` when the server reported token counts, else `chunks` (one streamed content delta ≈ one token). */
  readonly tokenCount: 'usage' | 'chunks';
  readonly wallMs: number;
  /** Up to five distinct error messages of failed requests. */
  readonly errors: readonly string[];
}

/** The endpoint a model's HTTP checks used. */
export interface EndpointInfo {
  /** `gateway` (llm-d generative, and the informational embeddings probe), `embeddings` (llm-d embedder Service), `kserve`, or `base-url`. */
  readonly role: 'gateway' | 'embeddings' | 'kserve' | 'base-url' | 'endpoint';
  /** The URL the checks called (a local port-forward address, an in-cluster URL, or the base URL). */
  readonly url: string | null;
  /** How it was reached, e.g. `port-forward svc/ms-emb-embeddings:8200 → pod/ms-emb-…-decode-7c9:8200`. */
  readonly via: string;
  /** Why the endpoint could not be opened, else null. */
  readonly error: string | null;
}

/** Everything verified about one model. */
export interface ModelResult {
  readonly name: string;
  readonly slug: string;
  readonly category: 'generative' | 'embedder';
  readonly platform: 'llm-d' | 'kserve';
  readonly namespace: string;
  readonly servedModelName: string;
  /** True when no check of this model failed. */
  readonly ok: boolean;
  readonly durationMs: number;
  readonly endpoints: readonly EndpointInfo[];
  readonly checks: readonly CheckResult[];
  /** The `--load` probe, when requested for a generative model. */
  readonly load: LoadProbeResult | null;
}

/** Where the run looked. */
/** The stack's endpoint (docs/endpoint.md): what its checks found through its one base URL. */
export interface EndpointResult {
  /** The endpoint's Gateway and namespace. */
  readonly name: string;
  readonly namespace: string;
  readonly class: 'istio' | 'envoy';
  readonly ok: boolean;
  readonly durationMs: number;
  readonly endpoints: readonly EndpointInfo[];
  /** Each per-model check names its model (or adapter) in `data.model`. */
  readonly checks: readonly CheckResult[];
}

export type VerifyTarget =
  | {
      readonly mode: 'cluster';
      /** The kubeconfig context, or null in-cluster. */
      readonly context: string | null;
      /** Where the configuration came from, e.g. `--kubeconfig ./kc.yaml`, `KUBECONFIG`, `in-cluster`. */
      readonly source: string;
      /** `port-forward` through the API server, or `service-dns` (in-cluster: call Services directly). */
      readonly endpoints: 'port-forward' | 'service-dns';
    }
  | {
      readonly mode: 'base-url';
      /** The base URL without credentials or query string. */
      readonly baseUrl: string;
    };

/** The result of {@link verifyPlan}: the `--json` output. */
export interface VerifyResult {
  readonly schemaVersion: typeof RESULT_SCHEMA_VERSION;
  readonly stack: string;
  /** True when no check failed (skips and infos do not fail a run). The CLI exits 0 only then. */
  readonly ok: boolean;
  /** ISO 8601 start time. */
  readonly startedAt: string;
  readonly durationMs: number;
  readonly target: VerifyTarget;
  /** True when the run's deadline cut it short. */
  readonly deadlineExceeded: boolean;
  readonly counts: { readonly [S in CheckStatus]: number };
  readonly models: readonly ModelResult[];
  /** The stack's endpoint, when it has one (and it was not left out); else null. */
  readonly endpoint: EndpointResult | null;
}

/** Progress of a run, delivered to `onProgress` as it happens (the CLI draws a TTY display from these). */
export type VerifyEvent =
  | { readonly type: 'run-start'; readonly stack: string; readonly models: readonly string[]; readonly target: VerifyTarget }
  | { readonly type: 'model-start'; readonly model: string }
  | { readonly type: 'check-start'; readonly model: string; readonly check: CheckName }
  | { readonly type: 'check-retry'; readonly model: string; readonly check: CheckName; readonly attempt: number; readonly retryInMs: number; readonly message: string }
  | { readonly type: 'check-end'; readonly model: string; readonly result: CheckResult }
  | { readonly type: 'model-end'; readonly result: ModelResult }
  | { readonly type: 'run-end'; readonly result: VerifyResult };

/** The label every latency probe carries. */
export const LOAD_PROBE_LABEL = 'smoke-level probe, not a benchmark';
