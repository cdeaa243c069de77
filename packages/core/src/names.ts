import { CLUSTER_DOMAIN, HARBOR_PULL_SECRET, ISTIO_GATEWAY_CLASS, LIMITS } from './constants.ts';

/**
 * Every Kubernetes and Helm name of one model, derived from its slug (DESIGN §5).
 * The charts derive the same names from the release names; these functions mirror their helpers
 * (llm-d-infra `gateway.fullname`, GAIE `gateway-api-inference-extension.name`, modelservice
 * `llm-d-modelservice.fullname`) so that every other tool can find the objects by name.
 */

/** The slug: lower-case letters, digits and `-`, starting with a letter, at most 33 characters. */
export const SLUG_PATTERN = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const HELM_RELEASE = DNS_SUBDOMAIN;

/** Why a slug is not valid, or `undefined` when it is. */
export function slugProblem(slug: string): string | undefined {
  if (slug.length === 0) return 'the slug is empty';
  if (!SLUG_PATTERN.test(slug)) {
    return `"${slug}" is not a valid slug: use lower-case letters, digits and "-", starting with a letter and not ending with "-"`;
  }
  if (slug.length > LIMITS.slug) {
    const service = istioGatewayServiceOf2026_02(slug);
    return `"${slug}" is ${slug.length} characters; a slug may have at most ${LIMITS.slug}, because the Istio gateway Service "${service}" would be ${service.length} characters (limit ${LIMITS.dnsLabel}) and the Gateway would never become Programmed`;
  }
  return undefined;
}

/**
 * The Service Istio makes for the Gateway of a 2026-02 model, before llm-d-infra's cut at 63: the
 * name that sets the slug's limit of 33 (30 + the slug's length).
 */
export function istioGatewayServiceOf2026_02(slug: string): string {
  return `infra-${slug}-inference-gateway-${ISTIO_GATEWAY_CLASS}`;
}

/** Name overrides a stack may set per model. */
export interface NameOverrides {
  /** Replaces `llm-d-<slug>`. */
  readonly nameSpace?: string | undefined;
  /** Replaces the llm-d-infra release `infra-<slug>` (and so the Gateway name). */
  readonly releaseName?: string | undefined;
}

/** All names of one llm-d model. */
export interface LlmdNames {
  readonly slug: string;
  readonly namespace: string;
  readonly releases: { readonly infra: string; readonly gaie: string; readonly modelService: string };
  /** The Gateway llm-d-infra creates: `<infra release>-inference-gateway`. */
  readonly gateway: string;
  /** The Service (and Deployment) Istio generates for the Gateway: `<gateway>-istio`. */
  readonly gatewayService: string;
  /** The Gateway's parametersRef ConfigMap (llm-d-infra names it after the Gateway). */
  readonly gatewayParameters: string;
  /** In-cluster FQDN of the gateway Service. */
  readonly gatewayHost: string;
  /** ExternalName Service that other apps use to reach the gateway: `llmd-gateway-<slug>`. */
  readonly gatewayAlias: string;
  readonly httpRoute: string;
  readonly inferencePool: string;
  /** EPP Deployment, Service, ServiceAccount and DestinationRule: `gaie-<slug>-epp`. */
  readonly epp: string;
  readonly eppHost: string;
  /** modelservice's fullname; also its ServiceAccount. */
  readonly modelServiceFullname: string;
  readonly decodeDeployment: string;
  readonly prefillDeployment: string;
  readonly embeddingsService: string;
  readonly storage: { readonly pvc: string; readonly pv: string; readonly job: string };
  readonly pullSecret: string;
}

/** Derives every name of an llm-d model from its slug and the stack's overrides. */
export function llmdNames(slug: string, overrides: NameOverrides = {}): LlmdNames {
  const namespace = overrides.nameSpace ?? `llm-d-${slug}`;
  const infra = overrides.releaseName ?? `infra-${slug}`;
  const gaie = `gaie-${slug}`;
  const modelService = `ms-${slug}`;
  const gateway = truncate(`${infra}-inference-gateway`, 63);
  const gatewayService = `${gateway}-${ISTIO_GATEWAY_CLASS}`;
  const epp = `${gaie.toLowerCase().trim().slice(0, LIMITS.gaieEppBase)}-epp`;
  const modelServiceFullname = modelServiceFullnameOf(modelService);
  return {
    slug,
    namespace,
    releases: { infra, gaie, modelService },
    gateway,
    gatewayService,
    gatewayParameters: gateway,
    gatewayHost: serviceHost(gatewayService, namespace),
    gatewayAlias: `llmd-gateway-${slug}`,
    httpRoute: `llm-d-${slug}`,
    inferencePool: gaie,
    epp,
    eppHost: serviceHost(epp, namespace),
    modelServiceFullname,
    decodeDeployment: `${modelServiceFullname}-decode`,
    prefillDeployment: `${modelServiceFullname}-prefill`,
    embeddingsService: `${modelService}-embeddings`,
    storage: storageNames(slug),
    pullSecret: HARBOR_PULL_SECRET,
  };
}

/** Names of a model's storage: PVC `<slug>-model`, Job `<slug>-model-pull`, PV `<slug>-model-pv`. */
export function storageNames(slug: string): { pvc: string; pv: string; job: string } {
  return { pvc: `${slug}-model`, pv: `${slug}-model-pv`, job: `${slug}-model-pull` };
}

/** `<name>.<namespace>.svc.cluster.local`. */
export function serviceHost(service: string, namespace: string): string {
  return `${service}.${namespace}.svc.${CLUSTER_DOMAIN}`;
}

/** modelservice's `fullname` helper: the release, plus `-llm-d-modelservice` unless already contained, cut at 55. */
function modelServiceFullnameOf(release: string): string {
  const chartName = 'llm-d-modelservice';
  return truncate(release.includes(chartName) ? release : `${release}-${chartName}`, LIMITS.modelServiceFullname);
}

/** Helm's `trunc N | trimSuffix "-"`. */
function truncate(name: string, length: number): string {
  const cut = name.slice(0, length);
  return cut.endsWith('-') ? cut.slice(0, -1) : cut;
}

/** One name that would break, and why. */
export interface NameProblem {
  /** Which override key caused it (`nameSpace`, `releaseName`), or undefined when it follows from the slug. */
  readonly key?: 'nameSpace' | 'releaseName';
  readonly message: string;
}

interface NameRule {
  readonly object: string;
  readonly name: string;
  readonly limit: number;
  readonly pattern: RegExp;
  readonly kind: string;
  readonly key?: 'nameSpace' | 'releaseName';
  /** Extra explanation when the limit is not Kubernetes' own. */
  readonly why?: string;
}

/**
 * Checks every derived name of an llm-d model against the limit that binds it.
 * With a valid slug and no overrides nothing can break; overrides can.
 *
 * @param prometheusMonitoring whether GAIE's Prometheus monitoring is on (it adds a ClusterRole
 *   whose quoted name GAIE cuts at 84 characters, which breaks its YAML when too long).
 */
export function checkLlmdNames(names: LlmdNames, overrides: NameOverrides = {}, prometheusMonitoring = false): NameProblem[] {
  const ns = overrides.nameSpace !== undefined ? 'nameSpace' : undefined;
  const rel = overrides.releaseName !== undefined ? 'releaseName' : undefined;
  const rules: NameRule[] = [
    { object: 'namespace', name: names.namespace, limit: LIMITS.dnsLabel, pattern: DNS_LABEL, kind: 'DNS-1123 label', ...(ns && { key: ns }) },
    { object: 'llm-d-infra release', name: names.releases.infra, limit: LIMITS.helmRelease, pattern: HELM_RELEASE, kind: 'Helm release name', ...(rel && { key: rel }) },
    {
      object: 'Istio gateway Service',
      name: `${overrides.releaseName ?? names.releases.infra}-inference-gateway-${ISTIO_GATEWAY_CLASS}`,
      limit: LIMITS.dnsLabel,
      pattern: DNS_1035_LABEL,
      kind: 'DNS-1035 label',
      why: 'Istio names the gateway Service "<gateway>-istio" and does not shorten it: the Gateway would never become Programmed',
      ...(rel && { key: rel }),
    },
    { object: 'GAIE release', name: names.releases.gaie, limit: LIMITS.helmRelease, pattern: HELM_RELEASE, kind: 'Helm release name' },
    { object: 'modelservice release', name: names.releases.modelService, limit: LIMITS.helmRelease, pattern: HELM_RELEASE, kind: 'Helm release name' },
    {
      object: 'EPP name base',
      name: names.releases.gaie,
      limit: LIMITS.gaieEppBase,
      pattern: HELM_RELEASE,
      kind: 'GAIE release prefix',
      why: `GAIE cuts the release at 40 characters before "-epp", so the EPP would not be named "${names.releases.gaie}-epp"`,
    },
    {
      object: 'modelservice fullname',
      name: `${names.releases.modelService}-llm-d-modelservice`,
      limit: LIMITS.modelServiceFullname,
      pattern: HELM_RELEASE,
      kind: 'modelservice fullname',
      why: 'the chart cuts it at 55 characters, so the decode Deployment would not have its expected name',
    },
    { object: 'embeddings Service', name: names.embeddingsService, limit: LIMITS.dnsLabel, pattern: DNS_1035_LABEL, kind: 'DNS-1035 label' },
    { object: 'gateway alias Service', name: names.gatewayAlias, limit: LIMITS.dnsLabel, pattern: DNS_1035_LABEL, kind: 'DNS-1035 label' },
    { object: 'HTTPRoute', name: names.httpRoute, limit: LIMITS.dnsSubdomain, pattern: DNS_SUBDOMAIN, kind: 'DNS-1123 subdomain' },
    { object: 'model pull Job', name: names.storage.job, limit: LIMITS.dnsLabel, pattern: DNS_LABEL, kind: 'label value (Kubernetes labels the Job\'s pods with its name)' },
    { object: 'PVC', name: names.storage.pvc, limit: LIMITS.dnsSubdomain, pattern: DNS_SUBDOMAIN, kind: 'DNS-1123 subdomain' },
    { object: 'model label llm-d.ai/model', name: names.slug, limit: LIMITS.labelValue, pattern: DNS_LABEL, kind: 'label value' },
  ];
  const problems: NameProblem[] = [];
  for (const rule of rules) {
    const problem = ruleProblem(rule);
    if (problem) problems.push({ ...(rule.key && { key: rule.key }), message: problem });
  }
  if (prometheusMonitoring) {
    const quoted = `"${names.releases.gaie.slice(0, 40)}-${names.namespace.slice(0, 40)}-epp"`;
    if (quoted.length > LIMITS.gaieClusterRoleQuoted) {
      problems.push({
        ...(ns && { key: ns }),
        message: `the GAIE metrics ClusterRole name ${quoted} is ${quoted.length} characters with its quotes; GAIE cuts it at 84 and the rendered YAML breaks: use a shorter namespace or turn off inferenceExtension.monitoring.prometheus`,
      });
    }
  }
  return problems;
}

/** Checks a namespace name given directly (KServe gateway namespace, overrides). */
export function dnsLabelProblem(what: string, name: string, pattern: RegExp = DNS_LABEL): string | undefined {
  return ruleProblem({ object: what, name, limit: LIMITS.dnsLabel, pattern, kind: 'DNS-1123 label' });
}

/** Checks a DNS-1123 subdomain (most object names). */
export function dnsSubdomainProblem(what: string, name: string): string | undefined {
  return ruleProblem({ object: what, name, limit: LIMITS.dnsSubdomain, pattern: DNS_SUBDOMAIN, kind: 'DNS-1123 subdomain' });
}

function ruleProblem(rule: NameRule): string | undefined {
  if (rule.name.length > rule.limit) {
    return `the ${rule.object} "${rule.name}" would be ${rule.name.length} characters; a ${rule.kind} may have at most ${rule.limit}${rule.why ? ` (${rule.why})` : ''}`;
  }
  if (!rule.pattern.test(rule.name)) {
    return `the ${rule.object} "${rule.name}" is not a valid ${rule.kind}: use lower-case letters, digits and "-"${rule.pattern === DNS_1035_LABEL ? ', starting with a letter' : ''}`;
  }
  return undefined;
}

/** All names of one KServe model (KServe derives its children's names from `service` with kmeta.ChildName). */
export interface KserveNames {
  readonly slug: string;
  readonly namespace: string;
  /** The LLMInferenceService. */
  readonly service: string;
  /** The LLMInferenceServiceConfig holding the serving defaults (and mirrored KServe images). */
  readonly config: string;
  /** ServiceAccount of the model pods and the download Job; carries the HF token Secret. */
  readonly serviceAccount: string;
  /** Secret with key `HF_TOKEN`. */
  readonly hfTokenSecret: string;
  /** KServe's vLLM Deployment `<service>-kserve`. */
  readonly workload: string;
  /**
   * KServe's Service in front of the vLLM pods, `<service>-kserve-workload-svc`: the managed
   * HTTPRoute's catch-all rule (every path but completions, chat and responses) goes straight to it.
   */
  readonly workloadService: string;
  /** KServe's managed HTTPRoute and InferencePool. */
  readonly route: string;
  readonly inferencePool: string;
  /** The URL path prefix KServe routes: `/<namespace>/<service>`. */
  readonly pathPrefix: string;
  readonly storage: { readonly pvc: string; readonly pv: string; readonly job: string };
  readonly pullSecret: string;
}

/** Derives every name of a KServe model from its slug. */
export function kserveNames(slug: string, overrides: Pick<NameOverrides, 'nameSpace'> = {}): KserveNames {
  const namespace = overrides.nameSpace ?? `llm-d-${slug}`;
  return {
    slug,
    namespace,
    service: slug,
    config: `${slug}-config`,
    serviceAccount: `${slug}-sa`,
    hfTokenSecret: 'hf-token',
    workload: `${slug}-kserve`,
    workloadService: `${slug}-kserve-workload-svc`,
    route: `${slug}-kserve-route`,
    inferencePool: `${slug}-inference-pool`,
    pathPrefix: `/${namespace}/${slug}`,
    storage: storageNames(slug),
    pullSecret: HARBOR_PULL_SECRET,
  };
}
