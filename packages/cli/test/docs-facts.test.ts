/**
 * Facts the documentation states that a command can check, held against the repository: the paths
 * it names exist, the cluster floor is one number everywhere, the kind recipe pins a node image
 * Istio supports, the example verify Job outlives verify's own deadline, a hand deletion is followed
 * by `pulumi up --refresh`, every published or private package is in RELEASING.md, the README lists
 * the prerequisites, and a stand-in stack file is said to stand for yours.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLUSTER_REQUIREMENTS, DEFAULT_CHARTS, ROUTER_CHARTS, ROUTER_PROXY_IMAGE, loadStackFile, planDeployment, preflightChecks, type PreflightCheckType } from '@app-serving/core';
import { verifyPlan, type Cluster } from '@app-serving/k8s-verify';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './run-cli.ts';
import { userDocs } from './docs-files.ts';

const read = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');
const docs = userDocs().map((file) => [file, read(file)] as const);

describe('facts of the docs', () => {
  it('every repository path a doc names in backticks exists (from the doc\'s folder or the top)', () => {
    const missing: string[] = [];
    for (const [file, text] of docs) {
      for (const [, path] of text.matchAll(/`((?:\.ci|apps|docs|models|packages|scripts|tools)\/[^`\s]*)`/g)) {
        if (/[<*[{]/.test(path!)) continue; // a pattern or a placeholder
        if (!existsSync(join(REPO_ROOT, path!)) && !existsSync(join(REPO_ROOT, dirname(file), path!))) missing.push(`${file}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('no doc sends a reader to files outside the repository (shared/reference, the workspace\'s notes)', () => {
    const outside = docs.flatMap(([file, text]) => [...text.matchAll(/shared\/reference\/[\w.-]+/g)].map((m) => `${file}: ${m[0]}`));
    expect(outside).toEqual([]);
  });

  it(`names one Kubernetes floor, ${CLUSTER_REQUIREMENTS.kubernetes}, wherever it names one`, () => {
    const floors = docs.flatMap(([file, text]) => [...text.matchAll(/Kubernetes ≥ (\d+\.\d+)/g)].map((m) => `${file}: ${m[1]}`));
    expect(floors.length).toBeGreaterThanOrEqual(3);
    expect(floors.filter((f) => !f.endsWith(`: ${CLUSTER_REQUIREMENTS.kubernetes}`))).toEqual([]);
  });

  it('the kind recipe pins a node image by digest, at a Kubernetes version Istio 1.28 supports (1.30 to 1.34)', () => {
    const creates = docs.flatMap(([file, text]) => [...text.replace(/\\\n\s*/g, ' ').matchAll(/kind create cluster[^\n]*/g)].map((m) => [file, m[0]] as const));
    expect(creates.length).toBeGreaterThan(0);
    for (const [file, command] of creates) {
      const image = /--image kindest\/node:v1\.(\d+)\.\d+@sha256:[0-9a-f]{64}/.exec(command);
      expect(image, `${file}: ${command}`).not.toBeNull();
      expect(Number(image![1]), `${file}: ${command}`).toBeGreaterThanOrEqual(30);
      expect(Number(image![1]), `${file}: ${command}`).toBeLessThanOrEqual(34);
    }
  });

  it("the example verify Job outlives verify's own deadline (15m default + --wait)", () => {
    const readme = read('packages/k8s-verify/README.md');
    const jobs = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .flatMap((m) => parseAllDocuments(m[1]!).map((d) => d.toJS() as { kind?: string; spec?: any }))
      .filter((o) => o?.kind === 'Job');
    expect(jobs.length).toBe(1);
    const job = jobs[0]!;
    const args: string[] = job.spec.template.spec.containers[0].args;
    const minutes = (flag: string, fallback: number) => {
      const at = args.indexOf(flag);
      return at < 0 ? fallback : Number(/^(\d+)m$/.exec(args[at + 1]!)![1]);
    };
    const verifyDeadlineSeconds = (minutes('--deadline', 15) + minutes('--wait', 0)) * 60;
    expect(job.spec.activeDeadlineSeconds).toBeGreaterThan(verifyDeadlineSeconds);
  });

  it('a stack snippet in the docs puts our keys under config:, never at the margin (where Pulumi ignores them)', () => {
    const atMargin = docs.flatMap(([file, text]) =>
      [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n').filter((line) => /^app-serving:/.test(line)).map((line) => `${file}: ${line}`)),
    );
    expect(atMargin).toEqual([]);
  });

  it('model storage: every recovery that deletes an object by hand ends with pulumi up --refresh', () => {
    const rows = read('docs/model-storage.md').split('\n').filter((line) => line.startsWith('|') && /kubectl[^|]*delete/.test(line));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row, row).toMatch(/pulumi up --refresh/);
  });

  it('RELEASING.md names every package folder (published or private)', () => {
    const releasing = read('RELEASING.md');
    const packages = readdirSync(join(REPO_ROOT, 'packages')).filter((p) => existsSync(join(REPO_ROOT, 'packages', p, 'package.json')));
    for (const folder of packages) {
      const { name } = JSON.parse(read(`packages/${folder}/package.json`)) as { name: string };
      expect(releasing.includes(`packages/${folder}`) || releasing.includes(name), `${name} (packages/${folder})`).toBe(true);
    }
  });

  it('the README lists the prerequisites of both set-up commands, at the versions the project asks for', () => {
    const readme = read('README.md');
    const node = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node.replace('>=', '');
    expect(readme).toContain(`Node ≥ ${node}`);
    // The newest `go` directive of the Go modules the tests build.
    const goMods = ['tools/test-cluster/go/go.mod', 'tools/test-cluster/go-etcd/go.mod', 'tools/pulumi/go.mod'];
    const minors = goMods.map((f) => Number(/^go 1\.(\d+)/m.exec(read(f))![1]));
    expect(readme).toContain(`Go ≥ 1.${Math.max(...minors)}`);
    expect(readme).toMatch(/Python 3 with `venv`/);
    expect(readme).toContain('npm run fetch-upstream');
  });

  it('a doc that uses Pulumi.prod.yaml says it stands for your own stack file (the repository has none)', () => {
    expect(existsSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.prod.yaml'))).toBe(false);
    const silent = docs.filter(([, text]) => text.includes('Pulumi.prod.yaml') && !/your own stack( file)?/.test(text)).map(([file]) => file);
    expect(silent).toEqual([]);
  });

  it("preflight --json's check types and ids are all in docs/cli.md, each id in docs/preflight.md's table, and every id of the example stacks matches one", () => {
    // One entry per type (a type added to core fails the type check here until it is named), with its id as the docs write it.
    const ids: Record<PreflightCheckType, string> = {
      'kubernetes-version': 'kubernetes-version',
      crd: 'crd:<plural>.<group>',
      'gateway-class': 'gateway-class:<name>',
      'custom-object': 'kserve-config:<name>',
      'envoy-inference-pool': 'envoy-inference-pool',
      placement: 'placement:<slug>',
      node: 'node:<name>',
      'storage-class': 'storage-class:<name>',
      namespace: 'namespace:<name>',
      permission: 'permission:create:<resource>[.<group>]:<namespace>',
      prometheus: 'prometheus:<address>',
      'registry-dns': 'registry-dns:<host>',
      istio: 'istio:<minimum>',
      'istio-support': 'istio-support',
    };
    const cliDoc = read('docs/cli.md');
    const row = (field: string) => cliDoc.split('\n').find((line) => line.startsWith(`| \`checks[].${field}\``))!;
    expect(Object.keys(ids).filter((type) => !row('type').includes(`\`${type}\``))).toEqual([]);
    expect(Object.values(ids).filter((id) => !row('id').includes(`\`${id}\``))).toEqual([]);
    const table = read('docs/preflight.md').split('\n').filter((line) => line.startsWith('| '));
    expect(Object.values(ids).filter((id) => !table.some((line) => line.includes(`\`${id.split('<')[0]}`)))).toEqual([]);
    // `<…>` stands for a name, `[.<group>]` for an optional group.
    const patterns = Object.values(ids).map(
      (id) => new RegExp(`^${id.split(/(\[\.<group>\]|<[a-z]+>)/).map((part, n) => (n % 2 === 0 ? part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : part === '[.<group>]' ? '(\\.[^:]+)?' : '[^ ]*')).join('')}$`),
    );
    const stacks = readdirSync(join(REPO_ROOT, 'apps/app-serving')).filter((f) => /^Pulumi\.(?!TEMPLATE).+\.yaml$/.test(f) && f !== 'Pulumi.yaml');
    const found = stacks.flatMap((f) => preflightChecks(planDeployment(loadStackFile(join(REPO_ROOT, 'apps/app-serving', f), f, { checkRules: false }), join(REPO_ROOT, 'models'))).map((c) => c.id));
    expect(found.length).toBeGreaterThan(50);
    expect(found.filter((id) => !patterns.some((p) => p.test(id)))).toEqual([]);
  });

  it("verify's RBAC Role: docs/verify.md and the k8s-verify README grant the same, and it allows every read verify makes of each example stack on both sets", async () => {
    const roleOf = (file: string, heading: string) => {
      const text = read(file);
      const yaml = /```yaml\n([\s\S]*?)```/.exec(text.slice(text.indexOf(heading)))![1]!;
      return parseAllDocuments(yaml).map((d) => d.toJS() as { kind?: string; rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> }).find((o) => o?.kind === 'Role')!;
    };
    const rules = roleOf('docs/verify.md', '\n## RBAC\n').rules!;
    expect(roleOf('packages/k8s-verify/README.md', '\n## RBAC\n').rules).toEqual(rules);
    const allowed = (group: string, resource: string, verb: string) => rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));

    // A cluster that records each call as the API request it is, and answers so that every check goes as far as it can.
    const calls = new Set<string>();
    const call = (group: string, resource: string, ...verbs: string[]) => verbs.forEach((verb) => calls.add(`${verb} ${group || 'core'} ${resource}`));
    const pod = { name: 'p', labels: {}, phase: 'Running', ready: true, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8000 }] }], problem: null };
    const cluster: Cluster = {
      source: 'test',
      context: 'test',
      inCluster: false,
      listPods: async () => (call('', 'pods', 'list'), [pod]),
      readService: async (namespace, name) => (call('', 'services', 'get'), { name, namespace, selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8000 }] }),
      listServices: async () => (call('', 'services', 'list'), []),
      readJob: async () => (call('batch', 'jobs', 'get'), null),
      readCustomObject: async (ref) => (call(ref.group, ref.plural, 'get'), null),
      // Kubernetes 1.31+ authorises the WebSocket upgrade as create, earlier ones as get.
      exec: async () => (call('', 'pods/exec', 'get', 'create'), { exitCode: 0, stdout: '', stderr: '' }),
      openTunnel: async () => {
        call('', 'pods/portforward', 'get', 'create');
        throw new Error('no tunnel in this test');
      },
      close: async () => undefined,
    };
    const stacks = readdirSync(join(REPO_ROOT, 'apps/app-serving')).filter((f) => /^Pulumi\.(?!TEMPLATE).+\.yaml$/.test(f) && f !== 'Pulumi.yaml');
    for (const file of stacks) {
      const config = loadStackFile(join(REPO_ROOT, 'apps/app-serving', file), file, { checkRules: false });
      for (const upstream of ['2026-02', '2026-08'] as const) {
        await verifyPlan(planDeployment({ ...config, upstream }, join(REPO_ROOT, 'models')), { cluster, timeoutMs: 5_000, deadlineMs: 60_000 });
      }
    }
    // The autoscaled cloud example reads KEDA's objects; KServe's, its LLMInferenceService.
    expect([...calls]).toEqual(expect.arrayContaining(['get keda.sh scaledobjects', 'get autoscaling horizontalpodautoscalers', 'get serving.kserve.io llminferenceservices', 'create core pods/exec']));
    const denied = [...calls].filter((c) => {
      const [verb, group, resource] = c.split(' ') as [string, string, string];
      return !allowed(group === 'core' ? '' : group, resource, verb);
    });
    expect(denied).toEqual([]);
  }, 120_000);

  it("air-gap.md mirrors every pinned chart of both sets at its pinned version, pushes what it pulled, and points each chart key of both sets at the mirror", () => {
    const text = read('docs/air-gap.md');
    const lines = text.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim());
    const pulled = lines
      .filter((l) => l.startsWith('helm pull '))
      .map((l) => {
        const [, ref] = /^helm pull (\S+)/.exec(l)!;
        const repo = /--repo (\S+)/.exec(l)?.[1];
        const version = /--version (\S+)/.exec(l)![1]!;
        return { chart: ref!, version, ...(repo && { repo }) };
      });
    const pinned = [...Object.values(ROUTER_CHARTS), ...Object.values(DEFAULT_CHARTS)];
    expect(pulled).toEqual(pinned.map((c) => ({ ...c })));
    const file = (c: { chart: string; version: string }) => `${c.chart.split('/').at(-1)}-${c.version}.tgz`;
    expect(lines.filter((l) => l.startsWith('helm push ')).map((l) => l.split(' ')[2])).toEqual(pinned.map(file));
    const snippet = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parseAllDocuments(m[1]!)[0]!.toJS() as any).find((y) => y?.config?.['app-serving:charts']);
    const charts = snippet.config['app-serving:charts'] as Record<string, { chart: string }>;
    expect(Object.keys(charts).sort()).toEqual([...Object.keys(ROUTER_CHARTS), ...Object.keys(DEFAULT_CHARTS)].sort());
    for (const [key, ref] of Object.entries({ ...ROUTER_CHARTS, ...DEFAULT_CHARTS })) expect(charts[key]!.chart, key).toBe(`oci://harbor.example.com/charts/${ref.chart.split('/').at(-1)}`);
    // Standalone mode's proxy: the image the set pins, and the key that mirrors it.
    expect(text).toContain(`\`${ROUTER_PROXY_IMAGE}\``);
    expect(text).toContain(`image: harbor.example.com/images-llm-d/${ROUTER_PROXY_IMAGE.replace(/^docker\.io\//, '')}`);
  });

  it("testing.md names vitest's timeout per test and hook as vitest.shared.ts sets it", () => {
    const shared = read('vitest.shared.ts');
    const test = Number(/testTimeout: ([\d_]+)/.exec(shared)![1]!.replaceAll('_', ''));
    const hook = Number(/hookTimeout: ([\d_]+)/.exec(shared)![1]!.replaceAll('_', ''));
    expect(hook).toBe(test);
    expect(test % 60_000).toBe(0);
    expect(read('docs/testing.md')).toContain(`vitest's ${test / 60_000}-minute\ntimeout per test and hook`);
  });
});
