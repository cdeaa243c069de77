import { describe, expect, it } from 'vitest';
import { applyCrd, createCrd, type ApiResponse } from './cluster.ts';

/** An API server stand-in that answers each POST with the next of `answers` (an Error: no answer in time). */
function api(answers: Array<ApiResponse | Error>) {
  const calls: Array<{ method: string; path: string; timeoutMs?: number }> = [];
  const fn = async (method: string, path: string, _body?: unknown, opts: { timeoutMs?: number } = {}) => {
    calls.push({ method, path, timeoutMs: opts.timeoutMs });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    if (next instanceof Error) throw next;
    return next;
  };
  return { fn, calls };
}

const crd = { metadata: { name: 'llminferenceservices.serving.kserve.io' } };
const fast = { firstDelayMs: 1 };

describe('creating a CRD on a loaded API server', () => {
  it('retries a 504 Timeout, a 429 and a request that got no answer; a 409 after them means an earlier attempt got through', async () => {
    const server = api([
      { status: 504, body: { kind: 'Status', reason: 'Timeout' } },
      new Error('POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions: timeout'),
      { status: 429, body: {} },
      { status: 409, body: { reason: 'AlreadyExists' } },
    ]);
    const lines: string[] = [];
    await createCrd(server.fn, crd.metadata.name, crd, (line) => lines.push(line), fast);
    expect(server.calls.map((c) => `${c.method} ${c.path} ${c.timeoutMs}`)).toEqual(Array(4).fill('POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions 180000'));
    expect(lines).toEqual([
      'CRD llminferenceservices.serving.kserve.io: 504 {"kind":"Status","reason":"Timeout"}; trying again (1/6)',
      'CRD llminferenceservices.serving.kserve.io: POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions: timeout; trying again (2/6)',
      'CRD llminferenceservices.serving.kserve.io: 429 {}; trying again (3/6)',
    ]);
  });

  it('does not retry a rejection, and a 409 on the first attempt is a real conflict', async () => {
    await expect(createCrd(api([{ status: 422, body: { message: 'spec.versions: Invalid value' } }]).fn, 'x.example.com', crd, undefined, fast)).rejects.toThrow(
      'CRD x.example.com not created: 422 {"message":"spec.versions: Invalid value"}',
    );
    await expect(createCrd(api([{ status: 409, body: { reason: 'AlreadyExists' } }]).fn, 'x.example.com', crd, undefined, fast)).rejects.toThrow('CRD x.example.com not created: 409');
  });

  it('gives up after a bounded number of attempts, naming the last answer', async () => {
    const server = api(Array.from({ length: 10 }, () => ({ status: 503, body: 'busy' })));
    await expect(createCrd(server.fn, 'x.example.com', crd, undefined, fast)).rejects.toThrow('CRD x.example.com not created after 6 attempts: 503 "busy"');
    expect(server.calls).toHaveLength(6);
  });
});

describe('installing a CRD into a running cluster under load', () => {
  const current = (resourceVersion: string): ApiResponse => ({ status: 200, body: { metadata: { name: crd.metadata.name, resourceVersion } } });

  it('reads it afresh before each attempt and retries a 504, a conflict and a request that got no answer', async () => {
    const server = api([
      current('1'),
      { status: 504, body: { kind: 'Status', reason: 'Timeout' } },
      current('2'),
      { status: 409, body: { reason: 'Conflict' } },
      current('3'),
      new Error('PUT: timeout'),
      current('4'),
      { status: 200, body: {} },
    ]);
    await applyCrd(server.fn, crd.metadata.name, crd, undefined, fast);
    expect(server.calls.map((c) => c.method)).toEqual(['GET', 'PUT', 'GET', 'PUT', 'GET', 'PUT', 'GET', 'PUT']);
  });

  it('creates it when absent; a create that raced with another is read again and replaced', async () => {
    const server = api([{ status: 404, body: {} }, { status: 409, body: { reason: 'AlreadyExists' } }, current('1'), { status: 200, body: {} }]);
    await applyCrd(server.fn, crd.metadata.name, crd, undefined, fast);
    expect(server.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      `GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      'POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      `GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      `PUT /apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
    ]);
  });

  it('does not retry a rejection', async () => {
    await expect(applyCrd(api([current('1'), { status: 422, body: { message: 'spec: Invalid value' } }]).fn, 'x.example.com', crd, undefined, fast)).rejects.toThrow(
      'CRD x.example.com not installed: 422 {"message":"spec: Invalid value"}',
    );
  });
});
