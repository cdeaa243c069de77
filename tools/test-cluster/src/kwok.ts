/**
 * What kwok simulates in the test cluster: node and pod lifecycles (Stages, kwok's own API,
 * kwok.x-k8s.io/v1alpha1), and the CRDs through which a test maps a pod's exec and port-forward to
 * local targets. Written for this project; the Stage fields and template functions are kwok's
 * (sigs.k8s.io/kwok v0.8.0: pkg/apis/v1alpha1/stage_types.go, pkg/utils/gotpl/funcs.go).
 *
 * Pod outcomes, chosen per pod by the annotation {@link OUTCOME_ANNOTATION} on its template:
 * - (none): a scheduled pod becomes Running and Ready; a Job's pod then Succeeded.
 * - `fail`: a scheduled pod ends Failed (its containers exit 1), as a pull Job whose script fails.
 * - `unready`: a scheduled pod runs but never becomes Ready (a model server still loading).
 * A pod no node can take stays Pending with the scheduler's own reason, as in a real cluster.
 */

/** The annotation that picks a pod's simulated outcome: `fail` or `unready`. */
export const OUTCOME_ANNOTATION = 'test-cluster.app-serving.io/outcome';

/** The annotation kwok manages nodes by (`--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

const notDeleted = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' };
const outcome = (op: 'In' | 'NotIn', values: string[]) => ({
  key: `.metadata.annotations.["${OUTCOME_ANNOTATION}"]`,
  operator: op,
  values,
});
const phase = (value: string) => ({ key: '.status.phase', operator: 'In', values: [value] });

const now = '{{ $now := Now }}';

const podIps = `
{{ with NodeIPWith .spec.nodeName }}
hostIP: {{ . | Quote }}
hostIPs:
- ip: {{ . | Quote }}
{{ end }}
{{ with PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ . | Quote }}
podIPs:
- ip: {{ . | Quote }}
{{ end }}
startTime: {{ $now | Quote }}`;

function containers(state: string, ready: boolean): string {
  return `
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: ${ready}
  started: ${state === 'running'}
  restartCount: 0
  state:
    ${state}
{{ end }}
initContainerStatuses:
{{ range .spec.initContainers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  restartCount: 0
  {{ if eq (or .restartPolicy "") "Always" }}
  ready: ${ready}
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
  {{ else }}
  ready: true
  state:
    terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} }
  {{ end }}
{{ end }}`;
}

function conditions(ready: boolean): string {
  const r = ready ? 'True' : 'False';
  return `
conditions:
- { type: PodScheduled, status: "True", lastTransitionTime: {{ $now | Quote }} }
- { type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }} }
- { type: ContainersReady, status: "${r}", lastTransitionTime: {{ $now | Quote }} }
- { type: Ready, status: "${r}", lastTransitionTime: {{ $now | Quote }} }`;
}

function stage(name: string, kind: 'Node' | 'Pod', matchExpressions: object[], next: object): object {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name },
    spec: { resourceRef: { apiGroup: 'v1', kind }, selector: { matchExpressions }, next },
  };
}

/** Who makes a pod Ready: kwok (the default), or the data-path tier's pod runtime (pods/runtime.ts). */
export type PodLifecycle = 'kwok' | 'runtime';

const ownedByJob = (op: 'In' | 'NotIn') => ({ key: '.metadata.ownerReferences.[].kind', operator: op, values: ['Job'] });

/**
 * The Stages of the test cluster (kwok's `--config`). With `runtime`, a pod that is not a Job's is
 * made Running with its address but not Ready (`pod-running`): the pod runtime runs it and reports
 * its readiness; a Job's pod still runs to completion as kwok plays it.
 */
export function stages(lifecycle: PodLifecycle = 'kwok'): object[] {
  const runtime = lifecycle === 'runtime';
  return [
    stage('node-ready', 'Node', [{ key: '.status.conditions.[] | select( .type == "Ready" ) | .status', operator: 'NotIn', values: ['True'] }], {
      statusTemplate: `${now}
conditions:
{{ range NodeConditions }}
- lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
  message: {{ .message | Quote }}
  reason: {{ .reason | Quote }}
  status: {{ .status | Quote }}
  type: {{ .type | Quote }}
{{ end }}
addresses:
- { type: InternalIP, address: {{ NodeIP | Quote }} }
- { type: Hostname, address: {{ .metadata.name | Quote }} }
daemonEndpoints:
  kubeletEndpoint:
    Port: {{ NodePort }}
allocatable:
{{ with .status.allocatable }}{{ YAML . 1 }}{{ else }}  { cpu: "32", memory: 128Gi, pods: "110" }{{ end }}
capacity:
{{ with .status.capacity }}{{ YAML . 1 }}{{ else }}  { cpu: "32", memory: 128Gi, pods: "110" }{{ end }}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
  kernelVersion: ""
  kubeProxyVersion: ""
  osImage: ""
  bootID: ""
  machineID: ""
  systemUUID: ""
phase: Running`,
    }),
    ...(runtime
      ? [
          stage('pod-running', 'Pod', [notDeleted, phase('Pending'), ownedByJob('NotIn')], {
            statusTemplate: `${now}${conditions(false)}${containers(`waiting:\n      reason: ContainerCreating`, false)}${podIps}
phase: Running`,
          }),
        ]
      : []),
    stage('pod-ready', 'Pod', [notDeleted, phase('Pending'), outcome('NotIn', ['fail', 'unready']), ...(runtime ? [ownedByJob('In')] : [])], {
      statusTemplate: `${now}${conditions(true)}${containers(`running:\n      startedAt: {{ $now | Quote }}`, true)}${podIps}
phase: Running`,
    }),
    stage('pod-unready', 'Pod', [notDeleted, phase('Pending'), outcome('In', ['unready']), ...(runtime ? [ownedByJob('In')] : [])], {
      statusTemplate: `${now}${conditions(false)}${containers(`running:\n      startedAt: {{ $now | Quote }}`, false)}${podIps}
phase: Running`,
    }),
    stage('pod-fail', 'Pod', [notDeleted, phase('Pending'), outcome('In', ['fail']), ...(runtime ? [ownedByJob('In')] : [])], {
      statusTemplate: `${now}${conditions(false)}${containers(
        `terminated: { exitCode: 1, reason: Error, message: "simulated failure (${OUTCOME_ANNOTATION}: fail)", startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} }`,
        false,
      )}${podIps}
phase: Failed`,
    }),
    stage('pod-complete', 'Pod', [notDeleted, phase('Running'), ownedByJob('In')], {
      statusTemplate: `${now}${conditions(false)}${containers(
        `terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} }`,
        false,
      )}
phase: Succeeded`,
    }),
    stage('pod-delete', 'Pod', [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }], { delete: true }),
  ];
}

/**
 * Minimal CRDs for kwok's per-pod Exec and PortForward (`--enable-crds=Exec,PortForward`): kwok
 * watches them and serves a pod's exec and port-forward from them. Their schemas here accept any
 * fields; kwok itself reads `spec.execs[].local` and `spec.forwards[].target`.
 */
export function kwokCrds(): object[] {
  return (['Exec', 'PortForward'] as const).map((kind) => {
    const plural = `${kind.toLowerCase()}s`;
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.kwok.x-k8s.io` },
      spec: {
        group: 'kwok.x-k8s.io',
        scope: 'Namespaced',
        names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
  });
}
