import { describe, expect, it } from 'vitest';
import { podStatusPatcher, type ContainerState } from './runtime.ts';

const container = (name: string, ready: boolean) => ({ spec: { name, image: 'x' }, run: { argv: ['x'] }, ready, started: true, restarts: 0, startedAt: 't', lastExit: null, waiting: null }) as unknown as ContainerState;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the pod runtime's status patches", () => {
  it('two changes at once: the API server ends with the later one, even when the first patch is the slower', async () => {
    const applied: boolean[] = [];
    let calls = 0;
    const request = async (_method: string, _path: string, body?: unknown) => {
      const delay = (calls += 1) === 1 ? 100 : 5;
      await sleep(delay);
      applied.push((body as any).status.containerStatuses[0].ready);
      return { status: 200, body: {} } as never;
    };
    const pod = { namespace: 'n', name: 'p', stopped: false, sent: '', containers: [container('envoy-proxy', false), container('epp', true)] };
    const patch = podStatusPatcher(request, () => {});
    const first = patch(pod);
    pod.containers[0]!.ready = true;
    const second = patch(pod);
    await Promise.all([first, second]);
    expect(applied.at(-1)).toBe(true);
  });

  it('a patch the API server refused is sent again on the next call, the state unchanged', async () => {
    const statuses = [500, 200];
    const sent: number[] = [];
    const request = async () => {
      const status = statuses.shift()!;
      sent.push(status);
      return { status, body: {} } as never;
    };
    const pod = { namespace: 'n', name: 'p', stopped: false, sent: '', containers: [container('epp', true)] };
    const patch = podStatusPatcher(request, () => {});
    await patch(pod);
    await patch(pod);
    await patch(pod);
    expect(sent).toEqual([500, 200]);
  });
});
