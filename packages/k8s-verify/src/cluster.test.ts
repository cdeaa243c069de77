import { describe, expect, it } from 'vitest';
import { startFakeKube } from '../test/fake-kube.ts';
import { httpGet as get } from '../test/http-get.ts';
import { startModelServer } from '../test/model-server.ts';
import { createCluster, execOutcome, KubeError, labelSelector, lastErrorLine, podSummary } from './cluster.ts';

const signal = () => AbortSignal.timeout(5000);

describe('the client-node cluster against a fake API server', () => {
  it('lists pods by an equality label selector and summarises their readiness', async () => {
    const kube = await startFakeKube({
      pods: [
        { namespace: 'llm-d-sim', name: 'decode-b', labels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'sim', 'llm-d.ai/role': 'decode' } },
        {
          namespace: 'llm-d-sim',
          name: 'decode-a',
          labels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'sim', 'llm-d.ai/role': 'decode' },
          ready: false,
          phase: 'Pending',
          status: { containerStatuses: [{ name: 'vllm', ready: false, restartCount: 0, image: 'x', imageID: '', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "vllm:bad"' } } }] },
        },
        { namespace: 'llm-d-sim', name: 'prefill-a', labels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'sim', 'llm-d.ai/role': 'prefill' } },
        { namespace: 'other', name: 'decode-x', labels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'sim', 'llm-d.ai/role': 'decode' } },
      ],
    });
    const cluster = await createCluster(kube.kubeConfig(), { source: 'test' });
    const pods = await cluster.listPods('llm-d-sim', { 'llm-d.ai/role': 'decode', 'llm-d.ai/model': 'sim', 'llm-d.ai/inference-serving': 'true' }, signal());
    expect(kube.log).toEqual(['GET /api/v1/namespaces/llm-d-sim/pods?labelSelector=llm-d.ai/inference-serving=true,llm-d.ai/model=sim,llm-d.ai/role=decode']);
    expect(pods.map((p) => [p.name, p.ready, p.phase, p.problem])).toEqual([
      ['decode-a', false, 'Pending', 'container vllm: ImagePullBackOff: Back-off pulling image "vllm:bad"'],
      ['decode-b', true, 'Running', null],
    ]);
    expect(cluster.context).toBe('fake');
    expect(cluster.source).toBe('test');
  });

  it('reads Services and Jobs, and answers null for what does not exist', async () => {
    const kube = await startFakeKube({
      services: [{ namespace: 'ns', name: 'svc', selector: { app: 'x' }, ports: [{ name: 'http', port: 8200, targetPort: 'http' }] }],
      jobs: [{ namespace: 'ns', name: 'pull', status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } }, { namespace: 'ns', name: 'broken', status: { failed: 4, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] } }],
    });
    const cluster = await createCluster(kube.kubeConfig());
    expect(await cluster.readService('ns', 'svc', signal())).toEqual({ name: 'svc', namespace: 'ns', selector: { app: 'x' }, ports: [{ name: 'http', port: 8200, targetPort: 'http' }] });
    expect(await cluster.readService('ns', 'missing', signal())).toBeNull();
    expect(await cluster.readJob('ns', 'pull', signal())).toEqual({ name: 'pull', active: 0, succeeded: 1, failed: 0, complete: true, failedCondition: null });
    expect(await cluster.readJob('ns', 'broken', signal())).toMatchObject({ complete: false, failedCondition: { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' } });
    expect(await cluster.readJob('ns', 'gone', signal())).toBeNull();
  });

  it('reads an LLMInferenceService as a custom object', async () => {
    const object = { apiVersion: 'serving.kserve.io/v1alpha1', kind: 'LLMInferenceService', metadata: { name: 'k' }, status: { addresses: [{ url: 'http://10.0.0.1/ns/k' }] } };
    const kube = await startFakeKube({ customObjects: [{ group: 'serving.kserve.io', version: 'v1alpha1', plural: 'llminferenceservices', namespace: 'ns', name: 'k', object }] });
    const cluster = await createCluster(kube.kubeConfig());
    const ref = { group: 'serving.kserve.io', version: 'v1alpha1', plural: 'llminferenceservices', namespace: 'ns' };
    expect(await cluster.readCustomObject({ ...ref, name: 'k' }, signal())).toEqual(object);
    expect(await cluster.readCustomObject({ ...ref, name: 'nope' }, signal())).toBeNull();
    expect(kube.log[0]).toBe('GET /apis/serving.kserve.io/v1alpha1/namespaces/ns/llminferenceservices/k');
  });

  it('reports an RBAC denial as forbidden, naming the rule', async () => {
    const kube = await startFakeKube({ forbidden: new Set(['list pods', 'get jobs']) });
    const cluster = await createCluster(kube.kubeConfig());
    const error = await cluster.listPods('ns', { a: 'b' }, signal()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeError);
    expect((error as KubeError).status).toBe(403);
    expect((error as KubeError).message).toBe(
      'forbidden: cannot list pods in namespace ns (RBAC: grant "list" on "pods"): pods is forbidden: User "system:serviceaccount:ci:verify" cannot list resource "pods" in the namespace "ns"',
    );
    await expect(cluster.readJob('ns', 'x', signal())).rejects.toMatchObject({ status: 403, message: expect.stringMatching(/^forbidden: cannot get jobs in namespace ns/) });
  });

  it('bounds an API call that never answers by its signal', async () => {
    const kube = await startFakeKube();
    // Never answer: the request stays open until the fake closes.
    kube.state.onRequest = () => 'hang';
    const cluster = await createCluster(kube.kubeConfig());
    const error = await cluster.listPods('ns', {}, AbortSignal.timeout(200)).catch((e: unknown) => e);
    expect((error as KubeError).message).toBe('list pods in namespace ns: the API call timed out');
  });

  it('execs test -f in a container: exit 0 when the file exists, 1 when not', async () => {
    const kube = await startFakeKube({ pods: [{ namespace: 'ns', name: 'p', labels: {}, files: ['/model-cache/.pulled'] }] });
    const cluster = await createCluster(kube.kubeConfig());
    expect(await cluster.exec('ns', 'p', 'vllm', ['test', '-f', '/model-cache/.pulled'], signal())).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    expect(await cluster.exec('ns', 'p', 'vllm', ['test', '-f', '/model-cache/.other'], signal())).toEqual({ exitCode: 1, stdout: '', stderr: '' });
    expect(await cluster.exec('ns', 'p', 'vllm', ['cat', '/x'], signal())).toMatchObject({ exitCode: 127, stderr: expect.stringContaining('executable file not found') });
    expect(kube.log.filter((l) => l.startsWith('EXEC'))).toEqual(['EXEC ns/p vllm: test -f /model-cache/.pulled', 'EXEC ns/p vllm: test -f /model-cache/.other', 'EXEC ns/p vllm: cat /x']);
  });

  it('reports exec without permission (403 on the upgrade) as forbidden', async () => {
    const kube = await startFakeKube({ pods: [{ namespace: 'ns', name: 'p', labels: {} }], forbidden: new Set(['create pods/exec']) });
    const cluster = await createCluster(kube.kubeConfig());
    await expect(cluster.exec('ns', 'p', 'vllm', ['test', '-f', '/x'], signal())).rejects.toMatchObject({
      status: 403,
      message: 'forbidden: cannot create pods/exec of pod p in namespace ns (RBAC: grant "get" and "create" on "pods/exec")',
    });
  });

  it('port-forwards real HTTP through the API server to a server in the pod', async () => {
    const server = await startModelServer({ models: ['m'] });
    const kube = await startFakeKube({ pods: [{ namespace: 'ns', name: 'p', labels: {}, forward: { 8200: server.port } }] });
    const cluster = await createCluster(kube.kubeConfig());
    const tunnel = await cluster.openTunnel('ns', 'p', 8200);
    expect(tunnel.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Two requests on two connections: each is its own port-forward stream.
    for (let i = 0; i < 2; i += 1) {
      const body = await get(`${tunnel.url}/v1/models`);
      expect(JSON.parse(body)).toEqual({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'test' }] });
    }
    expect(kube.log.filter((l) => l.startsWith('PORTFORWARD'))).toEqual(['PORTFORWARD ns/p:8200', 'PORTFORWARD ns/p:8200']);
    expect(tunnel.problem()).toBeNull();
    await cluster.close();
  });

  it('keeps the reason when nothing listens in the pod, or port-forward is forbidden', async () => {
    const kube = await startFakeKube({ pods: [{ namespace: 'ns', name: 'p', labels: {} }] });
    const cluster = await createCluster(kube.kubeConfig());
    const tunnel = await cluster.openTunnel('ns', 'p', 8000);
    await expect(get(`${tunnel.url}/v1/models`)).rejects.toThrow();
    expect(tunnel.problem()).toBe('pod p: error forwarding port 8000 to pod p: dial tcp4 127.0.0.1:8000: connect: connection refused');

    kube.state.forbidden.add('create pods/portforward');
    const denied = await cluster.openTunnel('ns', 'p', 8000);
    await expect(get(`${denied.url}/v1/models`)).rejects.toThrow();
    expect(denied.problem()).toBe('forbidden: cannot create pods/portforward of pod p in namespace ns (RBAC: grant "get" and "create" on "pods/portforward")');
    await cluster.close();
  });
});

describe('pure helpers', () => {
  it('builds a sorted equality selector', () => {
    expect(labelSelector({ 'llm-d.ai/role': 'decode', 'llm-d.ai/model': 'x' })).toBe('llm-d.ai/model=x,llm-d.ai/role=decode');
  });

  it('reads exit codes from the exec status', () => {
    expect(execOutcome({ status: 'Success' }, 'o', 'e')).toEqual({ exitCode: 0, stdout: 'o', stderr: 'e' });
    expect(execOutcome({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '2' }] } }, '', '')).toEqual({ exitCode: 2, stdout: '', stderr: '' });
    expect(execOutcome({ status: 'Failure', reason: 'InternalError', message: 'container not found ("vllm")' }, '', '')).toEqual(new Error('container not found ("vllm")'));
  });

  it('explains pods that are not Ready', () => {
    const base = { metadata: { name: 'p' }, spec: { containers: [{ name: 'vllm' }] } };
    expect(podSummary({ ...base, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.' }] } }).problem).toBe(
      'Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.',
    );
    expect(
      podSummary({
        ...base,
        status: { phase: 'Running', containerStatuses: [{ name: 'vllm', ready: false, restartCount: 5, image: '', imageID: '', state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { reason: 'OOMKilled', exitCode: 137 } } }] },
      }).problem,
    ).toBe('container vllm: CrashLoopBackOff (last exit: OOMKilled 137)');
    // The end of the log the kubelet keeps (FallbackToLogsOnError): the line that says why.
    const message = 'INFO 12-06 api_server.py: args: …\nusage: vllm serve [model_tag] [options]\nvllm serve: error: unrecognized arguments: --max-modle-len 2048\n';
    expect(
      podSummary({
        ...base,
        status: { phase: 'Running', containerStatuses: [{ name: 'modelserver', ready: false, restartCount: 2, image: '', imageID: '', state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { reason: 'Error', exitCode: 2, message } } }] },
      }).problem,
    ).toBe('container modelserver: CrashLoopBackOff (last exit: Error 2: vllm serve: error: unrecognized arguments: --max-modle-len 2048)');
    expect(lastErrorLine('Traceback (most recent call last):\n  File "x.py", line 1\nValueError: max_model_len (99999) is greater than the model\'s context length\nINFO shutting down\n')).toBe(
      "ValueError: max_model_len (99999) is greater than the model's context length",
    );
    // Caught between two crashes: running again, not ready, the last exit said why.
    expect(
      podSummary({
        ...base,
        status: { phase: 'Running', containerStatuses: [{ name: 'modelserver', ready: false, restartCount: 3, image: '', imageID: '', state: { running: {} }, lastState: { terminated: { reason: 'Error', exitCode: 2, message } } }] },
      }).problem,
    ).toBe('container modelserver running again but not ready after 3 restarts (last exit: Error 2: vllm serve: error: unrecognized arguments: --max-modle-len 2048)');
    expect(lastErrorLine('all good\n')).toBe('all good');
    expect(lastErrorLine('\n \n')).toBeNull();
    expect(podSummary({ ...base, status: { phase: 'Running', containerStatuses: [{ name: 'vllm', ready: false, restartCount: 0, image: '', imageID: '', state: { running: {} } }] } }).problem).toBe(
      'container vllm running but not ready (readiness probe failing: model still loading?)',
    );
    expect(podSummary({ ...base, metadata: { name: 'p', deletionTimestamp: new Date() }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } })).toMatchObject({ ready: false, problem: 'Terminating' });
  });
});
