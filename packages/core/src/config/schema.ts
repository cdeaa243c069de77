import { z } from 'zod';
import { ADAPTERS_FOLDER, AUTOSCALING_SIGNALS, MAX_READY_TIMEOUT_SECONDS, DEFAULT_LORA_RANK, LORA_RANKS, PLATFORMS, ROUTER_GATEWAY_CLASSES, UPSTREAMS } from '../constants.ts';
import { hasUrlCredentials } from '../redact.ts';
import { durationLimitProblem, durationSeconds, isLabelKey, isLabelValue } from './formats.ts';
import { isSecret, type Secret } from '../secret.ts';
import type {
  ChartOverride,
  EndpointSettings,
  EndpointSettingsInput,
  GpuToleration,
  KserveSettings,
  ModelAdapter,
  ModelEntry,
  ModelEntryInput,
  ModelAutoscaling,
  ModelGateway,
  ModelAccess,
  ModelSource,
  ParsedStackConfig,
  RouterSettings,
  PrometheusSettings,
  StackConfigInput,
} from './types.ts';

/**
 * The zod schema of the `app-serving:*` keys of a Pulumi stack file (DESIGN §4).
 *
 * Shapes and formats only; rules across keys (credentials per `cloudProvider`, platform-specific
 * `modelSource` fields, names) live in `rules.ts`, so that every problem is reported in one pass.
 */

/**
 * A URL of the stack must not carry credentials (core's one finder, redact.ts: `user:password@`
 * however written, a token in the query or the fragment): plan and render print a plain stack
 * value, Pulumi's state and the cluster object store it unencrypted. Each message says where the
 * credential belongs instead.
 */
const noCredentials = (url: string) => !hasUrlCredentials(url);
const CREDENTIALS = 'carries credentials (user:password@, or a token in the query or fragment); remove them: a plain stack value is printed by plan and render and stored unencrypted';
const CREDENTIALS_IN_URL = { message: `${CREDENTIALS} (log in to the registry or repository on the machine that runs pulumi instead)` };
const CREDENTIALS_IN_PROMETHEUS_URL = { message: `${CREDENTIALS} (set prometheus.auth and the secret prometheusCredentials instead)` };
const CREDENTIALS_IN_JWKS_URL = { message: `${CREDENTIALS}, and in the cluster's policy object (a JWKS holds public keys: serve it without credentials, or give the keys inline with jwt.jwks)` };
const CREDENTIALS_IN_ISSUER = { message: `${CREDENTIALS}, and in the cluster's policy object (the issuer is the tokens' public "iss" name: it holds no credentials)` };

/** One folder name, never a path: nothing outside `models/<category>/` is ever read. */
const FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** A DNS-1123 label (namespaces, Gateway names): ≤ 63 lower-case letters, digits and "-". */
const DNS_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_LABEL_MESSAGE = 'must be a Kubernetes name (DNS-1123 label): at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit';
const DNS_SUBDOMAIN_STRICT = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;
const HOSTNAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$/;
/** `<registry>/<path>:<tag>` or `<registry>/<path>@sha256:<digest>`; a tag or digest is required. */
const OCI_REF = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?\/[a-z0-9]+([._/-][a-z0-9]+)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$/;
const RELATIVE_PATH = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
/** `<registry>[:port][/<project path>]`, e.g. `harbor.example.com/images-llm-d`. */
const IMAGE_MIRROR = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;
const HF_REPO = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A part of the schema built the first time a stack reaches it (zod's lazy schema, built once):
 * constructing zod schemas was most of loading core on every command, and most stacks use a few of
 * these keys.
 */
function whenUsed<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  const schema = z.lazy(build);
  // zod asks a lazy schema whether it is optional or defaulted (`optin`, `optout`) by building it,
  // for every key of an object, present or not. Each of these is an object schema, neither (a test
  // holds that): said here, so that a key a stack leaves out builds nothing.
  for (const key of ['optin', 'optout'] as const) Object.defineProperty(schema._zod, key, { value: undefined, writable: true, configurable: true });
  return schema;
}

/** The wrapped secret type; a stack file writes it as `{secure: <ciphertext>}`. */
export const secretSchema = z
  .custom<Secret>(isSecret, { message: 'must be a Pulumi secret' })
  .meta({ description: 'A Pulumi secret (`pulumi config set --secret <key> <value>` writes `secure: v1:…`).' });

const quantity = z
  .string()
  .regex(QUANTITY, { message: 'must be a Kubernetes quantity such as 40Gi or 500Mi' });

const nodeSelector = nodeSelectorSchema('Node labels the model pods (and its gateway, EPP and pull Job) must run on; becomes a hard node affinity.');

function nodeSelectorSchema(description: string) {
  return z
    .record(z.string(), z.string())
    .superRefine((selector, ctx) => {
      for (const [key, value] of Object.entries(selector)) {
        if (!isLabelKey(key)) ctx.addIssue({ code: 'custom', path: [key], message: `"${key}" is not a valid node label key` });
        else if (!isLabelValue(value)) {
          ctx.addIssue({ code: 'custom', path: [key], message: `"${value}" is not a valid node label value (≤ 63 characters: letters, digits, "-", "_", ".")` });
        }
      }
    })
    .meta({ description });
}

export const huggingFaceSourceSchema = whenUsed(() =>
  z
    .strictObject({
      repo: z.string().regex(HF_REPO, { message: 'must be a Hugging Face repository id such as Qwen/Qwen3-0.6B' }).meta({ description: 'Hugging Face repository id, e.g. `Qwen/Qwen3-0.6B`.' }),
      revision: z.string().min(1).max(255).optional().meta({ description: 'Branch, tag or commit to download. Default: the repository default branch.' }),
    })
    .meta({ description: 'Download the weights from Hugging Face into the model volume (kserve platform).' }),
);

export const modelSourceSchema = whenUsed(() =>
  z
    .strictObject({
      harborRef: z
        .string()
        .regex(OCI_REF, { message: 'must be an OCI reference with a tag or digest, e.g. harbor.example.com/ai-models/qwen3:0.6b' })
        .optional()
        .meta({ description: 'OCI artifact holding the model, pulled with ORAS into the model volume.' }),
      modelUri: z
        .string()
        .regex(RELATIVE_PATH, { message: 'must be a relative path inside the model volume (no leading "/", no "..")' })
        .refine((p) => !p.split('/').includes('..') && !p.split('/').includes('.'), { message: 'must not contain "." or ".." segments' })
        .optional()
        .meta({ description: 'Path of the model inside the volume: `<hub-cache-dir>/<org>/<model>` for layout hf-cache, a directory for layout directory.' }),
      layout: z
        .enum(['hf-cache', 'directory'])
        .default('hf-cache')
        .meta({ description: 'hf-cache: the artifact is a Hugging Face hub cache (served as `pvc+hf://`); directory: a plain model directory (served as `pvc://`).' }),
      storageSize: quantity.meta({ description: 'Size of the model volume, e.g. `40Gi`.' }),
      storageClass: z.string().regex(DNS_SUBDOMAIN, { message: 'must be a StorageClass name (lower-case letters, digits, "-" and ".")' }).optional().meta({
        description: 'StorageClass of the PVC. Default: the cluster default (cloud) or `hostpath` (on-prem).',
      }),
      hostpathNode: z.string().regex(DNS_SUBDOMAIN, { message: 'must be a node name' }).optional().meta({
        description: 'On-prem only: create a static hostPath PV on this node.',
      }),
      hostpathDir: z
        .string()
        .regex(/^\/[A-Za-z0-9._\/-]*$/, { message: 'must be an absolute path' })
        .refine((p) => !p.split('/').includes('..'), { message: 'must not contain ".." segments' })
        .refine((p) => p.replace(/\/+$/, '') !== '', { message: 'must not be "/"' })
        .optional()
        .meta({ description: 'On-prem only: the hostPath directory. Default: `/var/lib/hostpath/models/<slug>`.' }),
      huggingFace: huggingFaceSourceSchema.optional(),
    })
    .meta({ description: 'Where the model weights come from and the volume that holds them.' }),
);

/**
 * An adapter's name: what clients send as `model`, what vLLM registers (`--lora-modules <name>=<path>`:
 * no "=" or ","), a folder on the volume (`adapters/<name>/`: no "/"), and a header value the
 * shared endpoint routes on. Letters, digits, ".", "_" and "-", at most 64.
 */
const ADAPTER_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$/;
const relativePath = (description: string) =>
  z
    .string()
    .regex(RELATIVE_PATH, { message: 'must be a relative path inside the model volume (no leading "/", no "..")' })
    .refine((p) => !p.split('/').includes('..') && !p.split('/').includes('.'), { message: 'must not contain "." or ".." segments' })
    .meta({ description });

export const adapterSchema = whenUsed(() =>
  z
    .strictObject({
      name: z
        .string()
        .regex(ADAPTER_NAME, { message: 'must be an adapter name: at most 64 letters, digits, ".", "_" and "-", starting and ending with a letter or digit (clients send it as `model`)' })
        .meta({ description: 'The name clients send as `model` to reach the adapter. Unique across the stack, and not any model\'s served name.' }),
      harborRef: z
        .string()
        .regex(OCI_REF, { message: 'must be an OCI reference with a tag or digest, e.g. harbor.example.com/ai-adapters/sql-lora:v1' })
        .optional()
        .meta({ description: `OCI artifact holding the adapter (adapter_config.json and its weights at the artifact's top), pulled by the model's pull Job into \`${ADAPTERS_FOLDER}/<name>/\` on its volume (the air-gapped way). Needs the model's modelSource.harborRef.` }),
      huggingFace: huggingFaceSourceSchema.optional().meta({
        description: 'A Hugging Face repository holding the adapter: downloaded by the model server at start-up (llm-d 2026-08, a model without modelSource) or by KServe\'s storage initializer (kserve).',
      }),
      path: relativePath(`A folder on the model's volume that already holds the adapter, relative to the volume (not under \`${ADAPTERS_FOLDER}/\`, the pull Job's). Nothing is pulled. Needs the model's modelSource.`).optional(),
    })
    .meta({ description: 'A LoRA adapter of the model, served under its own name: exactly one of harborRef, huggingFace or path.' }),
);

const durationSchema = z
  .string()
  .refine((text) => (durationSeconds(text) ?? 0) > 0, { message: 'must be a duration such as 30m, 1h or 1h30m (hours h, minutes m, seconds s)' });

const readyTimeoutSchema = durationSchema.superRefine((text, ctx) => {
  const seconds = durationSeconds(text);
  const problem = seconds === undefined ? null : durationLimitProblem(text, seconds, { seconds: MAX_READY_TIMEOUT_SECONDS, what: "Pulumi's await timeout", source: 'pulumi-kubernetes reads pulumi.com/timeoutSeconds into a Go time.Duration' }, { echo: false });
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const gpuTolerationSchema = z
  .strictObject({
    key: z.string().refine(isLabelKey, { message: 'must be a taint key: [<DNS subdomain>/]<name>, the name ≤ 63 letters, digits, "-", "_", "." starting and ending with a letter or digit' }),
    operator: z.enum(['Equal', 'Exists']).default('Equal'),
    value: z.string().refine(isLabelValue, { message: 'must be a taint value: ≤ 63 letters, digits, "-", "_", "." starting and ending with a letter or digit' }).optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  })
  .meta({ description: 'Toleration for the taint on GPU nodes; applied to model pods and pull Jobs.' });

export const chartOverrideSchema = z
  .strictObject({
    chart: z
      .string()
      .min(1)
      .refine((c) => !/[\s\u0000-\u001f\u007f]/.test(c), { message: 'must not contain white space or control characters (a chart name, an oci:// reference or a folder path)' })
      .refine(noCredentials, CREDENTIALS_IN_URL)
      .optional().meta({ description: 'Chart name (with `repo`) or an `oci://` reference.' }),
    version: z.string().min(1).optional(),
    repo: z.string().url().refine(noCredentials, CREDENTIALS_IN_URL).optional().meta({ description: 'Helm repository URL (not for `oci://` charts).' }),
  })
  .meta({ description: 'Override a pinned chart (a mirror, or an upgrade).' });

export const autoscalingSchema = whenUsed(() =>
  z
    .strictObject({
      minReplicas: z.number().int().min(0).max(1000).optional().meta({
        description:
          'Fewest model-server replicas. 0 scales the model to zero when idle (only where requests can wait for a replica: see docs/autoscaling.md). Default: 1 (a cold start takes minutes: image, weights, vLLM start-up).',
      }),
      maxReplicas: z.number().int().min(1).max(1000).meta({ description: 'Most model-server replicas: your GPU budget for this model. Required.' }),
      signal: z.enum(AUTOSCALING_SIGNALS).optional().meta({
        description:
          'What the autoscaler follows: `queue-depth` (vLLM `vllm:num_requests_waiting` per replica), `kv-cache` (vLLM KV-cache utilisation, 0–1, averaged over the replicas), `epp-queue` or `epp-kv-cache` (the EPP\'s pool-wide averages). Default: queue-depth.',
      }),
      target: z.number().positive().max(100000).optional().meta({
        description: 'The signal\'s value per replica the autoscaler holds the model at. Default: 5 waiting requests (queue-depth, epp-queue), 0.8 (kv-cache, epp-kv-cache).',
      }),
      cooldown: durationSchema.optional().meta({ description: 'How long the signal must stay low before a replica is removed (and before scaling to zero). Default: 5m.' }),
      pollingInterval: durationSchema.optional().meta({ description: 'How often KEDA queries Prometheus. Default: 15s.' }),
    })
    .meta({ description: 'Scale the model servers on an LLM signal (KEDA on llm-d, the LLMInferenceService\'s scaling on KServe). See docs/autoscaling.md.' }),
);

export const prometheusSchema = whenUsed(() =>
  z
    .strictObject({
      address: z
        .string()
        .url()
        .refine((u) => /^https?:\/\//.test(u), { message: 'must be an http:// or https:// URL' })
        .refine(noCredentials, CREDENTIALS_IN_PROMETHEUS_URL)
        .meta({ description: 'The Prometheus the autoscalers query, e.g. `http://prometheus-operated.monitoring.svc:9090`.' }),
      auth: z.enum(['bearer', 'basic']).optional().meta({ description: 'How KEDA authenticates to it; the token or password is the secret `prometheusCredentials`. Default: none.' }),
      username: z.string().min(1).optional().meta({ description: 'The user name, with auth: basic.' }),
      monitorLabels: nodeSelectorSchema('Labels on every PodMonitor app-serving creates, for the Prometheus\'s podMonitorSelector (kube-prometheus-stack: `release: <its release>`).').default({}),
    })
    .meta({ description: 'The Prometheus behind autoscaling: KEDA queries it, PodMonitors feed it.' }),
);
/** A key name: it names the key in `app-serving:apiKeys`, in the htpasswd user list and in the client header. */
const KEY_NAME = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const KEY_NAME_MESSAGE = 'must be a key name: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit';

/** `app-serving:apiKeys`: named API keys, each a Pulumi secret. */
export const apiKeysSchema = z
  .record(z.string().regex(KEY_NAME, { message: KEY_NAME_MESSAGE }), secretSchema)
  .meta({
    description:
      "Named API keys, each a Pulumi secret: `pulumi config set --secret --path 'app-serving:apiKeys.<name>' <key>`. A model's `access.apiKeys` lists the names it accepts.",
  });

export const accessSchema = whenUsed(() =>
  z
    .strictObject({
      apiKeys: z
        .array(z.string().regex(KEY_NAME, { message: KEY_NAME_MESSAGE }))
        .min(1)
        .max(16)
        .optional()
        .meta({ description: 'Names of `app-serving:apiKeys` this model accepts (HTTP Basic `<name>:<key>`); two at once rotate a key without downtime.' }),
      jwt: z
        .strictObject({
          issuer: z.string().min(1).max(253).refine(noCredentials, CREDENTIALS_IN_ISSUER).meta({ description: 'The `iss` the tokens must carry.' }),
          audiences: z.array(z.string().min(1).max(1024)).min(1).max(8).optional().meta({ description: 'Accepted `aud` values. Default: any audience.' }),
          jwksUri: z.string().url().refine(noCredentials, CREDENTIALS_IN_JWKS_URL).optional().meta({ description: 'Where the gateway fetches the signing keys (https).' }),
          jwks: z.string().min(1).optional().meta({ description: 'The signing keys inline, a JWKS JSON document (air gap: no fetch).' }),
        })
        .optional()
        .meta({ description: 'Require a JSON Web Token (`Authorization: Bearer <jwt>`) from this issuer.' }),
      open: z.literal(true).optional().meta({ description: 'Anyone who reaches the gateway may call the model (said explicitly: no warning).' }),
      rateLimit: z
        .strictObject({
          requestsPerMinute: z.number().int().min(1).max(1_000_000).optional().meta({ description: 'Requests per minute per key (apiKeys), per token subject (jwt), or for all callers together (open); per gateway pod.' }),
          tokensPerMinute: z.number().int().min(1).optional().meta({ description: 'LLM tokens per minute: not supported yet by either gateway setup (see docs/access.md).' }),
        })
        .optional()
        .meta({ description: 'Local rate limits enforced by the model\'s gateway.' }),
    })
    .meta({ description: 'Who may call the model: `apiKeys`, `jwt` or `open` (exactly one), and rate limits. Default: open (validate warns).' }),
);

export const modelEntrySchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .regex(FOLDER_NAME, { message: 'must be a model folder name (letters, digits, ".", "_", "-"; no "/" or ".."): the folder under models/<category>/' })
      .meta({ description: 'The model folder name under `models/<category>/`.' }),
    enabled: z.boolean().default(true).meta({ description: 'Disabled models are not read or deployed.' }),
    nodeSelector: nodeSelector.default({}),
    nameSpace: z.string().optional().meta({ description: 'Namespace override. Default: `llm-d-<slug>`.' }),
    releaseName: z
      .string()
      .optional()
      .meta({
        description:
          'llm-d: the release that names the model\'s gateway objects. 2026-08: the llm-d Router chart\'s release (EPP `<releaseName>-epp`, InferencePool and HTTPRoute `<releaseName>`, Gateway `<releaseName>-gateway`), default `router-<slug>`. 2026-02: the llm-d-infra release (Gateway `<releaseName>-inference-gateway`), default `infra-<slug>`.',
      }),
    platform: z.enum(PLATFORMS).optional().meta({ description: 'Serving platform of this model. Default: the stack `platform`.' }),
    modelSource: modelSourceSchema.optional(),
    upstream: z.enum(UPSTREAMS).optional().meta({
      description: "The set of upstream versions this model is deployed with (`2026-02` or `2026-08`), for moving a stack one model at a time. Default: the stack's `upstream`.",
    }),
    access: accessSchema.optional(),
    readyTimeout: readyTimeoutSchema.optional().meta({
      description:
        'llm-d: how long `pulumi up` waits for the model\'s Deployments to become ready (`pulumi.com/timeoutSeconds` on the decode and prefill Deployments), e.g. `45m`. Default: `30m` (a first pull of a CUDA image plus vLLM\'s start-up exceeds Pulumi\'s 10 minutes).',
    }),
    autoscaling: autoscalingSchema.optional(),
    adapters: z.array(adapterSchema).min(1).max(64).optional().meta({
      description: 'LoRA adapters the model server loads at start-up, each answering under its own name (2026-08 llm-d with launch: vllm, or kserve on 2026-08). See docs/configuration.md#adapters.',
    }),
    maxLoraRank: z
      .literal(LORA_RANKS, { message: `must be one of ${LORA_RANKS.join(', ')} (the ranks vLLM takes for --max-lora-rank)` })
      .optional()
      .meta({
        description: `The largest adapter rank the model server accepts (vLLM \`--max-lora-rank\`; KServe \`spec.model.lora.maxRank\`): at least the rank \`r\` of every adapter (its adapter_config.json). One of ${LORA_RANKS.join(', ')}. Default: ${DEFAULT_LORA_RANK}. A higher value reserves more GPU memory per adapter slot.`,
      }),
    gateway: z.boolean().optional().meta({
      description:
        "The model's own gateway (its own Gateway on llm-d; on the 2026-08 set `false` runs the llm-d Router's own proxy instead, reached in the cluster and through the stack's `endpoint`). Default: true.",
    }),
    endpoint: z.boolean().optional().meta({ description: "Whether the stack's `endpoint` serves this model (by its name). Default: true when the stack has an endpoint." }),
  })
  .meta({ description: 'One model of the stack.' });

export const modelGatewaySchema = z
  .strictObject({
    routeNamespaces: z
      .union([z.enum(['Same', 'All']), z.array(z.string().regex(DNS_LABEL, { message: 'must be a namespace name' })).min(1)])
      .default('Same')
      .meta({
        description:
          'Which namespaces may attach routes to a model\'s Gateway: `Same` (only the model\'s own namespace), `All` (any namespace: the llm-d-infra default), or a list of namespaces allowed besides the model\'s own. Default: `Same`.',
      }),
    // No zod default: validate must tell a value the stack sets (which has no effect on 2026-08
    // models, and says so) from none; the 2026-02 set reads an absent value as true.
    accessLogging: z
      .boolean()
      .optional()
      .meta({
        default: true,
        description:
          '2026-02 llm-d models: Envoy access logs of the gateway pods (an Istio `Telemetry` per Gateway, llm-d-infra `gateway.gatewayParameters.accessLogging`). Default: true. On 2026-08 app-serving sets no access logs (validate warns when this key is set): they are Istio\'s own, its Telemetry API or `meshConfig.accessLogFile`.',
      }),
  })
  .meta({ description: 'The Gateway of each llm-d model: who may attach routes to it, and (2026-02, llm-d-infra) its access logs.' });

export const kserveSchema = whenUsed(() =>
  z
    .strictObject({
      gateway: z
        .strictObject({
          name: z.string().regex(DNS_LABEL, { message: DNS_LABEL_MESSAGE }).default('kserve-ingress-gateway'),
          namespace: z.string().regex(DNS_LABEL, { message: DNS_LABEL_MESSAGE }).default('kserve'),
          className: z.string().regex(DNS_SUBDOMAIN_STRICT, { message: 'must be a GatewayClass name: a DNS subdomain (lower-case letters, digits, "-", "."), at most 253 characters' }).default('envoy'),
          create: z.boolean().default(true).meta({ description: 'Create the GatewayClass and Gateway. Set false when the cluster already has them.' }),
        })
        .prefault({})
        .meta({ description: 'The Envoy Gateway KServe routes through (KServe expects `kserve/kserve-ingress-gateway`).' }),
      imageMirror: z
        .string()
        .regex(IMAGE_MIRROR, { message: 'must be a registry with an optional project path, e.g. harbor.example.com/images-llm-d' })
        .optional()
        .meta({
          description:
            "Pull KServe's own images (vLLM, scheduler, tokenizer: those of KServe's well-known configs) from this mirror, `<registry>[/<project>]`, where `app-serving images --mirror-to` copies them. Default: the public images.",
        }),
    })
    .meta({ description: 'KServe platform settings.' }),
);

export const routerSchema = whenUsed(() =>
  z
    .strictObject({
      mode: z.enum(['gateway', 'standalone']).default('gateway').meta({
        description:
          '`gateway`: each model gets its own Gateway (class `gatewayClass`) whose HTTPRoute sends requests to the Router\'s InferencePool — for clients outside the namespace, TLS and policies at the gateway. `standalone`: no Gateway; the Router runs an Envoy proxy beside its endpoint picker and clients call its Service — fewer moving parts, no Gateway API controller needed. Default: `gateway`.',
      }),
      gatewayClass: z.enum(ROUTER_GATEWAY_CLASSES).default('istio').meta({
        description:
          'The GatewayClass of each model\'s Gateway in gateway mode: `istio` (Istio 1.29+, with the inference extension enabled), `agentgateway`, or `envoy` (Envoy Gateway ≥ v1.5: the stack\'s Envoy GatewayClass, the one KServe\'s Gateway uses, `kserve.gateway.className`; app-serving routes to the pool\'s pods through a Service and calls the EPP with an EnvoyExtensionPolicy). Default: `istio`.',
      }),
    })
    .meta({ description: '2026-08 llm-d: how the models are reached (the llm-d Router\'s gateway or standalone mode).' }),
);

/** A model name of the stack (`models.<category>[].name`), or `*` for every model the endpoint serves. */
const ENDPOINT_GRANT = z.string().regex(/^(\*|[A-Za-z0-9][A-Za-z0-9._-]*)$/, { message: 'must be a model name of the stack (models.<category>[].name) or "*"' });

export const endpointSchema = whenUsed(() =>
  z
    .strictObject({
      enabled: z.boolean().default(true).meta({ description: 'Set false to remove the endpoint and keep its settings.' }),
      name: z.string().regex(DNS_LABEL, { message: DNS_LABEL_MESSAGE }).default('endpoint').meta({ description: "The endpoint's Gateway. Default: `endpoint`." }),
      namespace: z.string().regex(DNS_LABEL, { message: DNS_LABEL_MESSAGE }).default('app-serving').meta({ description: 'The namespace app-serving creates for the endpoint (its Gateway, routes, policies and body-based router). Default: `app-serving`.' }),
      class: z.enum(['istio', 'envoy']).optional().meta({
        description:
          "The Gateway's class: `istio` (Istio ≥ 1.29 with the inference extension) or `envoy` (Envoy Gateway ≥ v1.5: the stack's Envoy GatewayClass, `kserve.gateway.className`). Default: `router.gatewayClass` (gateway mode) when that is istio or envoy, else `envoy`.",
      }),
      hostname: z
        .string()
        .regex(/^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, { message: 'must be a host name such as models.example.com (or *.example.com)' })
        .max(253)
        .optional()
        .meta({ description: "The listener's host name: requests for other hosts are not served. Default: any." }),
      access: z
        .strictObject({
          apiKeys: z
            .record(z.string().regex(KEY_NAME, { message: KEY_NAME_MESSAGE }), z.array(ENDPOINT_GRANT).min(1).max(256))
            .optional()
            .meta({ description: 'Key name (of `app-serving:apiKeys`) → the models it grants (model names of the stack, or `"*"`: every model the endpoint serves that the key may reach).' }),
          jwt: z
            .strictObject({
              issuer: z.string().min(1).max(253).meta({ description: 'The `iss` the tokens must carry.' }),
              audiences: z.array(z.string().min(1).max(1024)).min(1).max(8).optional().meta({ description: 'Accepted `aud` values. Default: any audience.' }),
              jwksUri: z.string().url().optional().meta({ description: 'Where the gateway fetches the signing keys (https).' }),
              jwks: z.string().min(1).optional().meta({ description: 'The signing keys inline, a JWKS JSON document (air gap: no fetch).' }),
              modelsClaim: z
                .string()
                .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/, { message: 'must be a claim name such as models (a nested claim: org.models)' })
                .max(253)
                .default('models')
                .meta({ description: 'The claim listing the models a token grants, as clients name them (served model names). Default: `models`.' }),
            })
            .optional()
            .meta({ description: 'Require a JSON Web Token (`Authorization: Bearer <jwt>`) from this issuer; its `modelsClaim` lists the models it grants.' }),
          open: z.literal(true).optional().meta({ description: 'Anyone who reaches the endpoint may call its models (said explicitly: no warning).' }),
          keyFormat: z.enum(['bearer', 'basic']).optional().meta({
            description:
              'How clients send a key: `bearer` (`Authorization: Bearer <key>`, what OpenAI SDKs send; Envoy Gateway only, which keeps the keys in clear in a Secret) or `basic` (HTTP Basic `<name>:<key>`; the gateway keeps SHA-1 hashes). Default: `bearer` on Envoy Gateway (validate warns that the keys are held in clear until you set it), `basic` on Istio.',
          }),
          rateLimit: z
            .strictObject({
              requestsPerMinute: z.number().int().min(1).max(1_000_000).optional().meta({ description: 'Requests per minute per key (or token subject; all callers together when open) to each model; per gateway pod.' }),
            })
            .optional(),
        })
        .optional()
        .meta({ description: 'Who may call which model through the endpoint: `apiKeys`, `jwt` or `open` (exactly one). Default: open (validate warns).' }),
      bbr: z
        .strictObject({
          image: z.string().regex(OCI_REF, { message: 'must be an image reference with a tag or digest, e.g. harbor.example.com/images-infra/bbr:v1.5.0' }).optional().meta({ description: "The body-based router's image. Default: GAIE's `registry.k8s.io/gateway-api-inference-extension/bbr:v1.5.0`." }),
          replicas: z.number().int().min(1).max(100).optional().meta({ description: "The body-based router's replicas. Default: 1." }),
        })
        .optional()
        .meta({ description: "The body-based router (GAIE's bbr): what reads each request's `model` and names it in a header the routes match." }),
    })
    .meta({ description: 'One OpenAI endpoint for every model of the stack: routes by the request\'s `model`, answers `/v1/models`, grants models per key (docs/endpoint.md).' }),
);

/** The `app-serving:*` keys, without the namespace prefix. */
export const stackConfigSchema = z
  .strictObject({
    cloudProvider: z.enum(['cloud', 'on-prem']).meta({ description: '`cloud` (nodes reach public registries) or `on-prem` (air-gapped, images and weights from Harbor).' }),
    platform: z.enum(PLATFORMS).default('llm-d').meta({ description: 'Default serving platform of every model.' }),
    upstream: z.enum(UPSTREAMS).optional().meta({
      description:
        'The set of upstream versions the models are deployed with: `2026-08` (current: the llm-d Router chart v0.10 with a plain vLLM Deployment, KServe v0.20) or `2026-02` (superseded: llm-d-infra, GAIE inferencepool v1.2.0, llm-d-modelservice, KServe v0.18). Default: `2026-02`, so that a stack written before this key keeps what it deploys; `validate` warns, with the way across (docs/upgrading.md).',
    }),
    router: routerSchema.optional(),
    models: z
      .strictObject({
        generative: z.array(modelEntrySchema).default([]),
        embedder: z.array(modelEntrySchema).default([]),
      })
      .meta({ description: 'The models of the stack, by category.' }),
    gpuToleration: gpuTolerationSchema.optional(),
    controlNodeSelector: nodeSelectorSchema('Node labels the control pods of every llm-d model (the EPP and the Istio gateway pods) must run on, for clusters that keep them apart from the GPU nodes; becomes a hard node affinity. Default: they follow the model\'s nodeSelector.').optional(),
    modelGateway: modelGatewaySchema.prefault({}),
    kubeconfig: z.union([z.string().min(1), secretSchema]).optional().meta({ description: 'Path of the kubeconfig (or its content as a secret). Default: the ambient kubeconfig.' }),
    harborHostname: z.string().regex(HOSTNAME, { message: 'must be a registry host name, optionally with a port' }).optional(),
    harborUser: z.string().min(1).optional().meta({ description: 'Harbor robot account, e.g. `robot$k8s-puller`.' }),
    harborToken: secretSchema.optional(),
    hfToken: secretSchema.optional(),
    apiKeys: apiKeysSchema.optional(),
    charts: z
      .strictObject({
        infra: chartOverrideSchema.optional(),
        gaie: chartOverrideSchema.optional(),
        modelService: chartOverrideSchema.optional(),
        routerGateway: chartOverrideSchema.optional().meta({ description: '2026-08: the llm-d Router chart of gateway mode (llm-d-router-gateway).' }),
        routerStandalone: chartOverrideSchema.optional().meta({ description: '2026-08: the llm-d Router chart of standalone mode (llm-d-router-standalone).' }),
        bodyBasedRouting: chartOverrideSchema.optional().meta({ description: "The stack's endpoint: GAIE's body-based-routing chart (the body-based router)." }),
      })
      .optional(),
    kserve: kserveSchema.optional(),
    prometheus: prometheusSchema.optional(),
    prometheusCredentials: secretSchema.optional().meta({ description: 'The bearer token (auth: bearer) or password (auth: basic) of the Prometheus, as a Pulumi secret.' }),
    endpoint: endpointSchema.optional(),
  })
  .meta({ description: 'app-serving stack configuration.' });

/** Whether two types are the same type (not only assignable both ways). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// The types of a stack are written out in types.ts (so that core's public declarations stay free
// of zod's). They are exactly what the schema reads and returns: the build (and every type check)
// fails here when one changes without the other.
true satisfies Same<z.input<typeof stackConfigSchema>, StackConfigInput>;
true satisfies Same<z.output<typeof stackConfigSchema>, ParsedStackConfig>;
true satisfies Same<z.output<typeof modelEntrySchema>, ModelEntry>;
true satisfies Same<z.input<typeof modelEntrySchema>, ModelEntryInput>;
true satisfies Same<z.output<typeof modelSourceSchema>, ModelSource>;
true satisfies Same<z.output<typeof gpuTolerationSchema>, GpuToleration>;
true satisfies Same<z.output<typeof chartOverrideSchema>, ChartOverride>;
true satisfies Same<z.output<typeof modelGatewaySchema>, ModelGateway>;
true satisfies Same<z.output<typeof kserveSchema>, KserveSettings>;
true satisfies Same<z.output<typeof routerSchema>, RouterSettings>;
true satisfies Same<z.output<typeof autoscalingSchema>, ModelAutoscaling>;
true satisfies Same<z.output<typeof prometheusSchema>, PrometheusSettings>;
true satisfies Same<z.output<typeof accessSchema>, ModelAccess>;
true satisfies Same<z.output<typeof adapterSchema>, ModelAdapter>;
true satisfies Same<z.output<typeof endpointSchema>, EndpointSettings>;
true satisfies Same<z.input<typeof endpointSchema>, EndpointSettingsInput>;
