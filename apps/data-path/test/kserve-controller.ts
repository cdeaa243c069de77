/**
 * KServe v0.20 in the data-path tier, where its controller is not served (no Go module, no image):
 * {@link installKserve} puts in the cluster what KServe's install does for LLMInferenceServices (the
 * `kserve` namespace and the well-known LLMInferenceServiceConfigs of v0.20.0, from the upstream
 * files, as the chart `kserve-runtime-configs` installs them), and {@link startKserveController} stands
 * in for the controller: for each LLMInferenceService (v1alpha2) it computes what v0.20's controller
 * makes — with packages/core/test/kserve-controller.ts, which emulates each step from KServe's source
 * at the tag — and applies it: the self-signed certificates Secret the workload mounts, the workload
 * Deployment (whose pod the tier's runtime runs: vLLM, from the template's own command), its Service,
 * the managed HTTPRoute on the service's Gateway; then it writes the service's status from what the
 * cluster reports back — the Deployment's availability, the real Envoy Gateway's verdict on the route
 * and the Gateway — as v0.20 computes it (conditions, `url`, `addresses`).
 *
 * Only services without a scheduler are reconciled: with one, KServe's route goes to an
 * InferencePool, which needs Envoy AI Gateway (not served here); such a service is left alone (the
 * control-plane tiers' stand-in, tools/test-cluster `kserveStandIns`, covers it).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyObjects, list, type TestCluster } from '@app-serving/test-cluster';
import {
  KSERVE_NAMESPACE,
  KSERVE_V020_DEFAULTS,
  KserveConfigNotFound,
  combineBaseRefsV020,
  httpRouteV020,
  selfSignedCertsSecretName,
  statusV020,
  wellKnownConfigObjects,
  workloadDeploymentV020,
  workloadServiceV020,
  workloadServiceName,
  type FoundConfig,
  type KserveGlobalConfig,
  type KserveService,
} from '../../../packages/core/test/kserve-controller.ts';

type Values = Record<string, any>;

const API = '/apis/serving.kserve.io/v1alpha2';
/** The field manager of what the stand-in applies. */
const MANAGER = 'kserve-controller-stand-in';

/** KServe's namespace and the well-known LLMInferenceServiceConfigs of v0.20.0 in it. */
export async function installKserve(cluster: TestCluster): Promise<void> {
  await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: KSERVE_NAMESPACE } }]);
  const configs = wellKnownConfigObjects('v0.20.0').map((doc) => ({ ...doc, metadata: { ...(doc.metadata as Values), namespace: KSERVE_NAMESPACE } }));
  await applyObjects(cluster, configs);
}

export interface KserveController {
  /** What it did (objects applied, status written, services left alone), with times. */
  readonly log: string[];
  /** The last error of each service it could not reconcile (by `<namespace>/<name>`). */
  readonly errors: Map<string, string>;
  stop(): Promise<void>;
}

/** A self-signed certificate for the workload Service's names (as workload_tls_self_signed.go makes one; TLS is off by default, the pod mounts it anyway). */
function selfSignedCertificate(names: readonly string[]): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-kserve-certs-'));
  try {
    const run = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '3650', '-subj', `/O=kserve`, '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`, '-keyout', 'tls.key', '-out', 'tls.crt'], { cwd: dir, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`openssl req -x509: ${run.stderr || run.error?.message}`);
    return { cert: readFileSync(join(dir, 'tls.crt'), 'utf8'), key: readFileSync(join(dir, 'tls.key'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the stand-in until `stop()`: every `pollMs`, each LLMInferenceService reconciled. */
export function startKserveController(cluster: TestCluster, options: { global?: KserveGlobalConfig; pollMs?: number } = {}): KserveController {
  const global = options.global ?? KSERVE_V020_DEFAULTS;
  const log: string[] = [];
  const errors = new Map<string, string>();
  const note = (line: string) => log.push(`${new Date().toISOString()} ${line}`);
  const applied = new Map<string, string>();
  const statuses = new Map<string, string>();
  const skipped = new Set<string>();
  let stopping = false;

  const get = async (path: string): Promise<Values | null> => {
    const res = await cluster.request('GET', path);
    return res.status === 200 ? (res.body as Values) : null;
  };

  /** Applies `objects` when they differ from what was applied last for `key`. */
  const apply = async (key: string, objects: Values[]) => {
    const text = JSON.stringify(objects);
    if (applied.get(key) === text) return;
    await applyObjects(cluster, objects, { fieldManager: MANAGER });
    applied.set(key, text);
    note(`applied ${objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).join(', ')}`);
  };

  const reconcile = async (object: Values) => {
    const service: KserveService = { apiVersion: object.apiVersion, metadata: object.metadata, spec: object.spec ?? {} };
    const { namespace, name } = service.metadata;
    const id = `${namespace}/${name}`;
    const key = `${id}/${service.metadata.uid}`;
    // getConfig: the service's namespace first, then kserve.
    const configs = new Map<string, FoundConfig>();
    for (const ns of [KSERVE_NAMESPACE, namespace]) {
      for (const c of await list(cluster, `${API}/namespaces/${ns}/llminferenceserviceconfigs`)) configs.set(c.metadata.name, { namespace: ns, spec: c.spec ?? {} });
    }
    let combined: ReturnType<typeof combineBaseRefsV020>;
    try {
      combined = combineBaseRefsV020(service, (n) => configs.get(n), global);
    } catch (error) {
      if (!(error instanceof KserveConfigNotFound)) throw error;
      // reconcileBaseRefs: PresetsCombined False, reason ConfigNotFound; nothing else is reconciled.
      await writeStatus(key, service, { conditions: [{ type: 'PresetsCombined', status: 'False', reason: 'ConfigNotFound', message: error.message }], appliedConfigRefs: null });
      return;
    }
    const merged: Values = combined.spec;
    const refs = combined.applied;
    if (merged.router?.scheduler) {
      if (!skipped.has(id)) note(`${id}: has a scheduler (its route goes to an InferencePool, which needs Envoy AI Gateway): left alone`);
      skipped.add(id);
      return;
    }
    const secretName = selfSignedCertsSecretName(service);
    if (!(await get(`/api/v1/namespaces/${namespace}/secrets/${secretName}`))) {
      const svc = workloadServiceName(service);
      const { cert, key } = selfSignedCertificate([svc, `${svc}.${namespace}`, `${svc}.${namespace}.svc`, `${svc}.${namespace}.svc.cluster.local`]);
      const owner = [{ apiVersion: 'serving.kserve.io/v1alpha2', kind: 'LLMInferenceService', name, uid: service.metadata.uid, controller: true, blockOwnerDeletion: true }];
      await applyObjects(
        cluster,
        [{
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: secretName, namespace, labels: { 'app.kubernetes.io/component': 'llminferenceservice-workload', 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': 'llminferenceservice' }, ownerReferences: owner },
          type: 'Opaque',
          stringData: { 'tls.crt': cert, 'tls.key': key, 'ca.crt': cert },
        }],
        { fieldManager: MANAGER },
      );
      note(`applied Secret ${namespace}/${secretName}`);
    }
    const gatewayRefs: Values[] = merged.router?.route?.http?.spec?.parentRefs ?? [];
    const gateways = (await Promise.all(gatewayRefs.map((r) => get(`/apis/gateway.networking.k8s.io/v1/namespaces/${r.namespace ?? namespace}/gateways/${r.name}`)))).filter((g): g is Values => g !== null);
    const route = httpRouteV020(service, merged, gateways, global) as Values | null;
    await apply(key, [workloadDeploymentV020(service, merged), workloadServiceV020(service, merged, global), ...(route ? [route] : [])]);

    const deployment = await get(`/apis/apps/v1/namespaces/${namespace}/deployments/${(workloadDeploymentV020(service, merged) as Values).metadata.name}`);
    const liveRoute = route ? await get(`/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes/${route.metadata.name}`) : null;
    // DiscoverGatewayService: a Service labelled with the Gateway's name in its namespace, else one named like it.
    const backing = new Map<string, Values | null>();
    for (const gateway of gateways) {
      const labelled = await list(cluster, `/api/v1/namespaces/${gateway.metadata.namespace}/services?labelSelector=${encodeURIComponent(`gateway.networking.k8s.io/gateway-name=${gateway.metadata.name}`)}`);
      labelled.sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
      backing.set(`${gateway.metadata.namespace}/${gateway.metadata.name}`, labelled[0] ?? (await get(`/api/v1/namespaces/${gateway.metadata.namespace}/services/${gateway.metadata.name}`)));
    }
    const status = statusV020(service, merged, refs, route, { deployment, route: liveRoute, gateways, backingService: (g: Values) => backing.get(`${g.metadata.namespace}/${g.metadata.name}`) ?? null }, global);
    await writeStatus(key, service, status);
  };

  const writeStatus = async (id: string, service: KserveService, status: Values) => {
    const text = JSON.stringify(status);
    if (statuses.get(id) === text) return;
    const now = new Date().toISOString();
    const body = { status: { ...status, conditions: (status.conditions as Values[]).map((c) => ({ ...c, lastTransitionTime: now })) } };
    const res = await cluster.request('PATCH', `${API}/namespaces/${service.metadata.namespace}/llminferenceservices/${service.metadata.name}/status`, body, { contentType: 'application/merge-patch+json' });
    if (res.status >= 300) throw new Error(`status of LLMInferenceService ${id}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
    statuses.set(id, text);
    const ready = (status.conditions as Values[]).find((c) => c.type === 'Ready');
    note(`${id}: status Ready=${ready?.status ?? '-'}${ready?.reason ? ` (${ready.reason}: ${String(ready.message ?? '').slice(0, 200)})` : ''}${status.url ? ` url ${status.url}` : ''}`);
  };

  const loop = (async () => {
    while (!stopping) {
      try {
        for (const object of await list(cluster, `${API}/llminferenceservices`)) {
          if (object.metadata.deletionTimestamp) continue;
          const id = `${object.metadata.namespace}/${object.metadata.name}`;
          try {
            await reconcile(object);
            errors.delete(id);
          } catch (error) {
            const message = (error as Error).message;
            if (errors.get(id) !== message) note(`${id}: ${message}`);
            errors.set(id, message);
          }
        }
      } catch (error) {
        note(`LLMInferenceServices not listed: ${(error as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, options.pollMs ?? 1000));
    }
  })();

  return {
    log,
    errors,
    stop: async () => {
      stopping = true;
      await loop;
    },
  };
}
