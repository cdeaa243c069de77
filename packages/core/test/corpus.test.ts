/**
 * The malformed-input corpus: every case is a stack plus model folders that must be refused with
 * the expected issue code at the expected key path — and with nothing but a StackError.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStackError, loadStackFile, planDeployment, type IssueCode } from '../src/index.ts';
import { tempRepo } from './helpers.ts';

interface Case {
  readonly name: string;
  /** The whole stack file, or the `app-serving:` keys (indented two spaces) after `config:`. */
  readonly stack: string;
  readonly files?: Record<string, string | undefined>;  // undefined removes a file of the base models
  readonly code: IssueCode;
  readonly path: string;
}

const GEN = 'models/generative/Gen';
const EMB = 'models/embedder/Emb';
const KS = 'models/generative/Ks';
const MODELS: Record<string, string> = {
  [`${GEN}/gaie-gen/values.yaml`]: 'inferenceExtension:\n  replicas: 1\n',
  [`${GEN}/ms-gen/values.yaml`]: 'modelArtifacts:\n  name: org/gen\n  uri: hf://org/gen\n',
  [`${EMB}/gaie-emb/values.yaml`]: '',
  [`${EMB}/ms-emb/values.yaml`]: 'routing:\n  servicePort: 8200\n  proxy:\n    enabled: false\n',
  [`${KS}/kserve-ks/values.yaml`]: 'model:\n  name: org/ks\n',
};
const HARBOR = '  app-serving:harborHostname: harbor.local\n  app-serving:harborUser: robot\n  app-serving:harborToken:\n    secure: v1:x\n';
const ONPREM = `  app-serving:cloudProvider: on-prem\n  app-serving:kubeconfig: ~/.kube/k\n${HARBOR}`;
const CLOUD = '  app-serving:cloudProvider: cloud\n';
const gen = (extra = '') => `  app-serving:models:\n    generative:\n      - name: Gen\n${extra}`;
const source = (lines: string) => `        modelSource:\n${lines}`;
const SRC = '          harborRef: harbor.local/ai/gen:1\n          modelUri: hub/org/gen\n          storageSize: 10Gi\n';
const ms = (text: string) => ({ [`${GEN}/ms-gen/values.yaml`]: text });
const gaie = (text: string) => ({ [`${GEN}/gaie-gen/values.yaml`]: text });
const infra = (text: string) => ({ [`${GEN}/infra-gen/values.yaml`]: text });
const ks = (text: string) => ({ [`${KS}/kserve-ks/values.yaml`]: text });
const KSTACK = `${CLOUD}  app-serving:models:\n    generative:\n      - name: Ks\n        platform: kserve\n`;

const cases: Case[] = [
  // --- the stack file itself: YAML and shape
  { name: 'unclosed flow sequence', stack: 'config:\n  app-serving:cloudProvider: [cloud\n', code: 'yaml.syntax', path: '' },
  { name: 'tab indentation', stack: 'config:\n\tapp-serving:cloudProvider: cloud\n', code: 'yaml.syntax', path: '' },
  { name: 'duplicate key', stack: `config:\n${CLOUD}${CLOUD}${gen()}`, code: 'yaml.syntax', path: '' },
  { name: 'bad indentation', stack: 'config:\n  app-serving:cloudProvider: cloud\n    app-serving:models: {}\n', code: 'yaml.syntax', path: '' },
  { name: 'unterminated quote', stack: 'config:\n  app-serving:cloudProvider: "cloud\n', code: 'yaml.syntax', path: '' },
  { name: 'root is a list', stack: '- config\n', code: 'yaml.not-a-map', path: '' },
  { name: 'root is a scalar', stack: 'hello\n', code: 'yaml.not-a-map', path: '' },
  { name: 'no config section', stack: 'encryptionsalt: abc\n', code: 'config.missing-key', path: 'config' },
  { name: 'config is a list', stack: 'config:\n  - a\n', code: 'config.invalid', path: 'config' },
  { name: 'config is a string', stack: 'config: x\n', code: 'config.invalid', path: 'config' },
  { name: 'key set bare and namespaced', stack: `config:\n${CLOUD}  cloudProvider: cloud\n${gen()}`, code: 'config.invalid', path: 'cloudProvider' },
  // --- missing and unknown keys
  { name: 'no cloudProvider', stack: `config:\n${gen()}`, code: 'config.missing-key', path: 'cloudProvider' },
  { name: 'no models', stack: `config:\n${CLOUD}`, code: 'config.missing-key', path: 'models' },
  { name: 'model without name', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - enabled: true\n`, code: 'config.missing-key', path: 'models.generative[0].name' },
  { name: 'typo in a top-level key', stack: `config:\n${CLOUD}${gen()}  app-serving:harborHost: h\n`, code: 'config.unknown-key', path: 'harborHost' },
  { name: 'typo in models', stack: `config:\n${CLOUD}  app-serving:models:\n    generatve: []\n`, code: 'config.unknown-key', path: 'models.generatve' },
  { name: 'typo in a model entry', stack: `config:\n${CLOUD}${gen('        nodeSelecter: {}\n')}`, code: 'config.unknown-key', path: 'models.generative[0].nodeSelecter' },
  { name: 'typo in modelSource', stack: `config:\n${ONPREM}${gen(source(`${SRC}          storageClas: x\n`))}`, code: 'config.unknown-key', path: 'models.generative[0].modelSource.storageClas' },
  { name: 'typo in gpuToleration', stack: `config:\n${CLOUD}${gen()}  app-serving:gpuToleration:\n    key: gpu\n    efect: NoSchedule\n`, code: 'config.unknown-key', path: 'gpuToleration.efect' },
  { name: 'typo in charts', stack: `config:\n${CLOUD}${gen()}  app-serving:charts:\n    modelservice:\n      version: v1\n`, code: 'config.unknown-key', path: 'charts.modelservice' },
  { name: 'typo in a chart override', stack: `config:\n${CLOUD}${gen()}  app-serving:charts:\n    gaie:\n      verison: v1\n`, code: 'config.unknown-key', path: 'charts.gaie.verison' },
  { name: 'typo in kserve', stack: `config:\n${CLOUD}${gen()}  app-serving:kserve:\n    gatway: {}\n`, code: 'config.unknown-key', path: 'kserve.gatway' },
  { name: 'typo in kserve.gateway', stack: `config:\n${CLOUD}${gen()}  app-serving:kserve:\n    gateway:\n      nmae: g\n`, code: 'config.unknown-key', path: 'kserve.gateway.nmae' },
  { name: 'typo in huggingFace', stack: `config:\n${KSTACK}${source('          huggingFace:\n            repository: o/m\n          storageSize: 1Gi\n')}`, code: 'config.unknown-key', path: 'models.generative[0].modelSource.huggingFace.repository' },
  // --- wrong types and values
  { name: 'cloudProvider not in the enum', stack: `config:\n  app-serving:cloudProvider: gcp\n${gen()}`, code: 'config.invalid', path: 'cloudProvider' },
  { name: 'cloudProvider a number', stack: `config:\n  app-serving:cloudProvider: 1\n${gen()}`, code: 'config.invalid', path: 'cloudProvider' },
  { name: 'platform unknown', stack: `config:\n${CLOUD}  app-serving:platform: vllm\n${gen()}`, code: 'config.invalid', path: 'platform' },
  { name: 'model platform unknown', stack: `config:\n${CLOUD}${gen('        platform: ray\n')}`, code: 'config.invalid', path: 'models.generative[0].platform' },
  { name: 'models a list', stack: `config:\n${CLOUD}  app-serving:models: []\n`, code: 'config.invalid', path: 'models' },
  { name: 'generative a map', stack: `config:\n${CLOUD}  app-serving:models:\n    generative: {}\n`, code: 'config.invalid', path: 'models.generative' },
  { name: 'model entry a string', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - Gen\n`, code: 'config.invalid', path: 'models.generative[0]' },
  { name: 'name a number', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: 7\n`, code: 'config.invalid', path: 'models.generative[0].name' },
  { name: 'empty name', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: ""\n`, code: 'config.invalid', path: 'models.generative[0].name' },
  { name: 'name with a slash', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: a/b\n`, code: 'config.invalid', path: 'models.generative[0].name' },
  { name: 'name escaping the models folder', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: ..\n`, code: 'config.invalid', path: 'models.generative[0].name' },
  { name: 'enabled a string', stack: `config:\n${CLOUD}${gen('        enabled: "yes"\n')}`, code: 'config.invalid', path: 'models.generative[0].enabled' },
  { name: 'nodeSelector a list', stack: `config:\n${CLOUD}${gen('        nodeSelector: [gpu]\n')}`, code: 'config.invalid', path: 'models.generative[0].nodeSelector' },
  { name: 'nodeSelector value a number', stack: `config:\n${CLOUD}${gen('        nodeSelector:\n          gpus: 1\n')}`, code: 'config.invalid', path: 'models.generative[0].nodeSelector.gpus' },
  { name: 'nodeSelector bad key', stack: `config:\n${CLOUD}${gen('        nodeSelector:\n          "bad key": x\n')}`, code: 'config.invalid', path: 'models.generative[0].nodeSelector["bad key"]' },
  { name: 'nodeSelector bad value', stack: `config:\n${CLOUD}${gen('        nodeSelector:\n          workload: "gpu node"\n')}`, code: 'config.invalid', path: 'models.generative[0].nodeSelector.workload' },
  { name: 'nodeSelector value too long', stack: `config:\n${CLOUD}${gen(`        nodeSelector:\n          workload: ${'x'.repeat(64)}\n`)}`, code: 'config.invalid', path: 'models.generative[0].nodeSelector.workload' },
  { name: 'storageSize not a quantity', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b:1\n          modelUri: hub/o/m\n          storageSize: 40 GB\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.storageSize' },
  { name: 'storageSize a number', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b:1\n          modelUri: hub/o/m\n          storageSize: 40\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.storageSize' },
  { name: 'storageSize missing', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b:1\n          modelUri: hub/o/m\n'))}`, code: 'config.missing-key', path: 'models.generative[0].modelSource.storageSize' },
  { name: 'harborRef without tag', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b\n          modelUri: hub/o/m\n          storageSize: 1Gi\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.harborRef' },
  { name: 'harborRef with a scheme', stack: `config:\n${ONPREM}${gen(source('          harborRef: oci://harbor.local/a/b:1\n          modelUri: hub/o/m\n          storageSize: 1Gi\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.harborRef' },
  { name: 'harborRef upper case', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/AI/b:1\n          modelUri: hub/o/m\n          storageSize: 1Gi\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.harborRef' },
  { name: 'modelUri absolute', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b:1\n          modelUri: /hub/o/m\n          storageSize: 1Gi\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.modelUri' },
  { name: 'modelUri with ..', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b:1\n          modelUri: hub/../etc\n          storageSize: 1Gi\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.modelUri' },
  { name: 'modelUri too short for hf-cache', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b:1\n          modelUri: o/m\n          storageSize: 1Gi\n'))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.modelUri' },
  { name: 'layout unknown', stack: `config:\n${ONPREM}${gen(source(`${SRC}          layout: tar\n`))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.layout' },
  { name: 'hostpathDir relative', stack: `config:\n${ONPREM}${gen(source(`${SRC}          hostpathNode: n1\n          hostpathDir: data/m\n`))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.hostpathDir' },
  { name: 'hostpathDir is /', stack: `config:\n${ONPREM}${gen(source(`${SRC}          hostpathNode: n1\n          hostpathDir: /\n`))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.hostpathDir' },
  { name: 'hostpathDir with ..', stack: `config:\n${ONPREM}${gen(source(`${SRC}          hostpathNode: n1\n          hostpathDir: /var/../etc\n`))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.hostpathDir' },
  { name: 'hostpathNode invalid', stack: `config:\n${ONPREM}${gen(source(`${SRC}          hostpathNode: Node_1\n`))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.hostpathNode' },
  { name: 'storageClass invalid', stack: `config:\n${ONPREM}${gen(source(`${SRC}          storageClass: Fast SSD\n`))}`, code: 'config.invalid', path: 'models.generative[0].modelSource.storageClass' },
  { name: 'huggingFace repo without org', stack: `config:\n${KSTACK}${source('          huggingFace:\n            repo: model\n          storageSize: 1Gi\n')}`, code: 'config.invalid', path: 'models.generative[0].modelSource.huggingFace.repo' },
  { name: 'gpuToleration operator unknown', stack: `config:\n${CLOUD}${gen()}  app-serving:gpuToleration:\n    key: gpu\n    operator: In\n`, code: 'config.invalid', path: 'gpuToleration.operator' },
  { name: 'gpuToleration effect unknown', stack: `config:\n${CLOUD}${gen()}  app-serving:gpuToleration:\n    key: gpu\n    effect: NoRun\n`, code: 'config.invalid', path: 'gpuToleration.effect' },
  { name: 'gpuToleration without key', stack: `config:\n${CLOUD}${gen()}  app-serving:gpuToleration:\n    operator: Exists\n`, code: 'config.missing-key', path: 'gpuToleration.key' },
  { name: 'gpuToleration a string', stack: `config:\n${CLOUD}${gen()}  app-serving:gpuToleration: gpu\n`, code: 'config.invalid', path: 'gpuToleration' },
  { name: 'harborHostname with a scheme', stack: `config:\n${CLOUD}${gen()}  app-serving:harborHostname: https://harbor.local\n  app-serving:harborUser: u\n  app-serving:harborToken:\n    secure: x\n`, code: 'config.invalid', path: 'harborHostname' },
  { name: 'harborUser empty', stack: `config:\n${CLOUD}${gen()}  app-serving:harborHostname: h.local\n  app-serving:harborUser: ""\n  app-serving:harborToken:\n    secure: x\n`, code: 'config.invalid', path: 'harborUser' },
  { name: 'kubeconfig a number', stack: `config:\n${CLOUD}${gen()}  app-serving:kubeconfig: 3\n`, code: 'config.invalid', path: 'kubeconfig' },
  { name: 'chart repo not a URL', stack: `config:\n${CLOUD}${gen()}  app-serving:charts:\n    infra:\n      chart: llm-d-infra\n      repo: not a url\n`, code: 'config.invalid', path: 'charts.infra.repo' },
  { name: 'kserve gateway create a string', stack: `config:\n${CLOUD}${gen()}  app-serving:kserve:\n    gateway:\n      create: "no"\n`, code: 'config.invalid', path: 'kserve.gateway.create' },
  // --- secrets
  { name: 'plaintext harborToken', stack: `config:\n${CLOUD}${gen()}  app-serving:harborToken: hunter2\n`, code: 'config.not-secret', path: 'harborToken' },
  { name: 'plaintext hfToken', stack: `config:\n${CLOUD}${gen()}  app-serving:hfToken: hf_abc\n`, code: 'config.not-secret', path: 'hfToken' },
  { name: 'secret where no secret belongs', stack: `config:\n${CLOUD}${gen()}  app-serving:harborHostname:\n    secure: v1:x\n`, code: 'config.invalid', path: 'harborHostname' },
  { name: 'cloudProvider as a secret', stack: `config:\n  app-serving:cloudProvider:\n    secure: v1:x\n${gen()}`, code: 'config.invalid', path: 'cloudProvider' },
  // --- credentials per cloudProvider
  { name: 'on-prem without kubeconfig', stack: `config:\n  app-serving:cloudProvider: on-prem\n${HARBOR}${gen()}`, code: 'config.missing-credential', path: 'kubeconfig' },
  { name: 'on-prem without harborHostname', stack: `config:\n  app-serving:cloudProvider: on-prem\n  app-serving:kubeconfig: k\n  app-serving:harborUser: u\n  app-serving:harborToken:\n    secure: x\n${gen()}`, code: 'config.missing-credential', path: 'harborHostname' },
  { name: 'on-prem without harborUser', stack: `config:\n  app-serving:cloudProvider: on-prem\n  app-serving:kubeconfig: k\n  app-serving:harborHostname: h.local\n  app-serving:harborToken:\n    secure: x\n${gen()}`, code: 'config.missing-credential', path: 'harborUser' },
  { name: 'on-prem without harborToken', stack: `config:\n  app-serving:cloudProvider: on-prem\n  app-serving:kubeconfig: k\n  app-serving:harborHostname: h.local\n  app-serving:harborUser: u\n${gen()}`, code: 'config.missing-credential', path: 'harborToken' },
  { name: 'cloud model from Harbor without credentials', stack: `config:\n${CLOUD}${gen(source(SRC))}`, code: 'config.missing-credential', path: 'harborToken' },
  { name: 'cloud with a Harbor user only', stack: `config:\n${CLOUD}${gen()}  app-serving:harborUser: u\n`, code: 'config.missing-credential', path: 'harborHostname' },
  // --- contradictions between keys
  { name: 'hostpathNode on cloud', stack: `config:\n${CLOUD}${HARBOR}${gen(source(`${SRC}          hostpathNode: n1\n`))}`, code: 'config.contradiction', path: 'models.generative[0].modelSource.hostpathNode' },
  { name: 'hostpathDir without hostpathNode', stack: `config:\n${ONPREM}${gen(source(`${SRC}          hostpathDir: /data\n`))}`, code: 'config.missing-key', path: 'models.generative[0].modelSource.hostpathNode' },
  { name: 'harborRef on another registry', stack: `config:\n${ONPREM}${gen(source('          harborRef: other.local/a/b:1\n          modelUri: hub/o/m\n          storageSize: 1Gi\n'))}`, code: 'config.contradiction', path: 'models.generative[0].modelSource.harborRef' },
  { name: 'harborRef without modelUri', stack: `config:\n${ONPREM}${gen(source('          harborRef: harbor.local/a/b:1\n          storageSize: 1Gi\n'))}`, code: 'config.missing-key', path: 'models.generative[0].modelSource.modelUri' },
  { name: 'llm-d model from Hugging Face', stack: `config:\n${ONPREM}${gen(source('          huggingFace:\n            repo: o/m\n          storageSize: 1Gi\n'))}`, code: 'config.contradiction', path: 'models.generative[0].modelSource.huggingFace' },
  { name: 'kserve model with both sources', stack: `config:\n${CLOUD}${HARBOR}  app-serving:models:\n    generative:\n      - name: Ks\n        platform: kserve\n${source('          harborRef: harbor.local/a/b:1\n          modelUri: m\n          layout: directory\n          huggingFace:\n            repo: o/m\n          storageSize: 1Gi\n')}`, code: 'config.contradiction', path: 'models.generative[0].modelSource' },
  { name: 'kserve model with no source', stack: `config:\n${KSTACK}${source('          storageSize: 1Gi\n')}`, code: 'config.missing-key', path: 'models.generative[0].modelSource' },
  { name: 'kserve HF source with modelUri', stack: `config:\n${KSTACK}${source('          huggingFace:\n            repo: o/m\n          modelUri: x\n          storageSize: 1Gi\n')}`, code: 'config.contradiction', path: 'models.generative[0].modelSource.modelUri' },
  { name: 'Exists toleration with a value', stack: `config:\n${CLOUD}${gen()}  app-serving:gpuToleration:\n    key: gpu\n    operator: Exists\n    value: "true"\n`, code: 'config.contradiction', path: 'gpuToleration.value' },
  { name: 'oci chart with a repo', stack: `config:\n${CLOUD}${gen()}  app-serving:charts:\n    gaie:\n      chart: oci://m/c\n      repo: https://x.example\n`, code: 'config.contradiction', path: 'charts.gaie.repo' },
  { name: 'named chart without a repo', stack: `config:\n${CLOUD}${gen()}  app-serving:charts:\n    infra:\n      chart: my-infra\n`, code: 'config.missing-key', path: 'charts.infra.repo' },
  { name: 'model listed twice', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: Gen\n      - name: Gen\n`, code: 'model.duplicate', path: 'models.generative[1].name' },
  // --- discovery
  { name: 'model folder missing', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: Nope\n`, code: 'model.not-found', path: 'models.generative[0].name' },
  { name: 'model in the other category', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: Emb\n`, code: 'model.not-found', path: 'models.generative[0].name' },
  { name: 'no gaie folder', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/gaie-gen/values.yaml`]: undefined }, code: 'model.values-missing', path: 'models.generative[0].name' },
  { name: 'no ms folder', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/ms-gen/values.yaml`]: undefined }, code: 'model.values-missing', path: 'models.generative[0].name' },
  { name: 'two gaie folders', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/gaie-gen2/values.yaml`]: '' }, code: 'model.values-ambiguous', path: 'models.generative[0].name' },
  { name: 'two ms folders', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/ms-other/values.yaml`]: '' }, code: 'model.values-ambiguous', path: 'models.generative[0].name' },
  { name: 'two infra folders', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/infra-gen/values.yaml`]: '', [`${GEN}/infra-x/values.yaml`]: '' }, code: 'model.values-ambiguous', path: 'models.generative[0].name' },
  { name: 'values folder without values.yaml', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/gaie-gen/values.yaml`]: undefined, [`${GEN}/gaie-gen/values.yml`]: '' }, code: 'model.values-missing', path: 'models.generative[0].name' },
  { name: 'gaie and ms slugs differ', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/ms-gen/values.yaml`]: undefined, [`${GEN}/ms-other/values.yaml`]: '' }, code: 'model.slug-mismatch', path: 'models.generative[0].name' },
  { name: 'infra slug differs', stack: `config:\n${CLOUD}${gen()}`, files: { [`${GEN}/infra-other/values.yaml`]: '' }, code: 'model.slug-mismatch', path: 'models.generative[0].name' },
  { name: 'no kserve folder for a kserve model', stack: `config:\n${CLOUD}${gen('        platform: kserve\n')}`, code: 'model.values-missing', path: 'models.generative[0].name' },
  { name: 'slug with upper case', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: Up\n`, files: { 'models/generative/Up/gaie-Up/values.yaml': '', 'models/generative/Up/ms-Up/values.yaml': '' }, code: 'slug.invalid', path: 'models.generative[0].name' },
  { name: 'slug starting with a digit', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: D\n`, files: { 'models/generative/D/gaie-1d/values.yaml': '', 'models/generative/D/ms-1d/values.yaml': '' }, code: 'slug.invalid', path: 'models.generative[0].name' },
  { name: 'slug ending with a dash', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: D\n`, files: { 'models/generative/D/gaie-d-/values.yaml': '', 'models/generative/D/ms-d-/values.yaml': '' }, code: 'slug.invalid', path: 'models.generative[0].name' },
  { name: 'slug with an underscore', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: D\n`, files: { 'models/generative/D/gaie-a_b/values.yaml': '', 'models/generative/D/ms-a_b/values.yaml': '' }, code: 'slug.invalid', path: 'models.generative[0].name' },
  { name: 'slug of 34 characters', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: D\n`, files: { [`models/generative/D/gaie-${'s'.repeat(34)}/values.yaml`]: '', [`models/generative/D/ms-${'s'.repeat(34)}/values.yaml`]: '' }, code: 'slug.invalid', path: 'models.generative[0].name' },
  { name: 'one slug for two models', stack: `config:\n${CLOUD}${gen()}    embedder:\n      - name: Emb2\n`, files: { 'models/embedder/Emb2/gaie-gen/values.yaml': '', 'models/embedder/Emb2/ms-gen/values.yaml': '' }, code: 'slug.duplicate', path: 'models.embedder[0].name' },
  { name: 'values file with bad YAML', stack: `config:\n${CLOUD}${gen()}`, files: ms('decode:\n  replicas: [1\n'), code: 'yaml.syntax', path: '' },
  { name: 'values file with a duplicate key', stack: `config:\n${CLOUD}${gen()}`, files: ms('decode: {}\ndecode: {}\n'), code: 'yaml.syntax', path: '' },
  { name: 'values file that is a list', stack: `config:\n${CLOUD}${gen()}`, files: gaie('- a\n'), code: 'yaml.not-a-map', path: '' },
  { name: 'values file that is a scalar', stack: `config:\n${CLOUD}${gen()}`, files: ms('hello\n'), code: 'yaml.not-a-map', path: '' },
  // --- names
  { name: 'namespace override too long', stack: `config:\n${CLOUD}${gen(`        nameSpace: ${'n'.repeat(64)}\n`)}`, code: 'name.too-long', path: 'models.generative[0].nameSpace' },
  { name: 'namespace override with capitals', stack: `config:\n${CLOUD}${gen('        nameSpace: Team-A\n')}`, code: 'name.too-long', path: 'models.generative[0].nameSpace' },
  { name: 'release override too long for Istio', stack: `config:\n${CLOUD}${gen(`        releaseName: ${'r'.repeat(40)}\n`)}`, code: 'name.too-long', path: 'models.generative[0].releaseName' },
  { name: 'release override too long for Helm', stack: `config:\n${CLOUD}${gen(`        releaseName: ${'r'.repeat(54)}\n`)}`, code: 'name.too-long', path: 'models.generative[0].releaseName' },
  { name: 'release override with a dot at the end', stack: `config:\n${CLOUD}${gen('        releaseName: infra.\n')}`, code: 'name.too-long', path: 'models.generative[0].releaseName' },
  { name: 'two models in one namespace', stack: `config:\n${CLOUD}${gen('        nameSpace: shared\n')}    embedder:\n      - name: Emb\n        nameSpace: shared\n`, code: 'name.duplicate', path: 'models.embedder[0].nameSpace' },
  { name: 'GAIE ClusterRole name broken by a long namespace', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: L\n        nameSpace: ns-${'x'.repeat(45)}\n`, files: { [`models/generative/L/gaie-${'l'.repeat(33)}/values.yaml`]: 'inferenceExtension:\n  monitoring:\n    prometheus:\n      enabled: true\n', [`models/generative/L/ms-${'l'.repeat(33)}/values.yaml`]: '' }, code: 'name.too-long', path: 'models.generative[0].nameSpace' },
  { name: 'kserve namespace too long', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: Ks\n        platform: kserve\n        nameSpace: ${'k'.repeat(64)}\n`, code: 'name.too-long', path: 'models.generative[0].nameSpace' },
  // --- values conflicts and chart schemas
  { name: 'ms labels contradict the slug', stack: `config:\n${CLOUD}${gen()}`, files: ms('modelArtifacts:\n  labels:\n    llm-d.ai/model: other\n'), code: 'values.conflict', path: 'modelArtifacts.labels["llm-d.ai/model"]' },
  { name: 'ms drops the serving label', stack: `config:\n${CLOUD}${gen()}`, files: ms('modelArtifacts:\n  labels:\n    llm-d.ai/inference-serving: "false"\n'), code: 'values.conflict', path: 'modelArtifacts.labels["llm-d.ai/inference-serving"]' },
  { name: 'ms labels nulled', stack: `config:\n${CLOUD}${gen()}`, files: ms('modelArtifacts:\n  labels: null\n'), code: 'values.conflict', path: 'modelArtifacts.labels' },
  { name: 'ms modelArtifacts a string', stack: `config:\n${CLOUD}${gen()}`, files: ms('modelArtifacts: hf://x/y\n'), code: 'values.conflict', path: 'modelArtifacts' },
  { name: 'ms uri contradicts modelSource', stack: `config:\n${ONPREM}${gen(source(SRC))}`, files: ms('modelArtifacts:\n  uri: hf://org/gen\n'), code: 'values.conflict', path: 'modelArtifacts.uri' },
  { name: 'ms fullnameOverride', stack: `config:\n${CLOUD}${gen()}`, files: ms('fullnameOverride: short\n'), code: 'values.conflict', path: 'fullnameOverride' },
  { name: 'ms nameOverride', stack: `config:\n${CLOUD}${gen()}`, files: ms('nameOverride: x\n'), code: 'values.conflict', path: 'nameOverride' },
  { name: 'ms own node affinity terms', stack: `config:\n${CLOUD}${gen('        nodeSelector:\n          workload: gpu\n')}`, files: ms('decode:\n  extraConfig:\n    affinity:\n      nodeAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms: []\n'), code: 'values.conflict', path: 'decode.extraConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms' },
  { name: 'ms acceleratorTypes with a nodeSelector', stack: `config:\n${CLOUD}${gen('        nodeSelector:\n          workload: gpu\n')}`, files: ms('prefill:\n  acceleratorTypes:\n    labelKey: gpu\n'), code: 'values.conflict', path: 'prefill.acceleratorTypes.labelKey' },
  { name: 'ms unknown modelArtifacts key', stack: `config:\n${CLOUD}${gen()}`, files: ms('modelArtifacts:\n  path: /m\n'), code: 'values.unknown-key', path: 'modelArtifacts.path' },
  { name: 'ms legacy routing key', stack: `config:\n${CLOUD}${gen()}`, files: ms('routing:\n  modelName: x\n'), code: 'values.unknown-key', path: 'routing.modelName' },
  { name: 'ms unknown parallelism key', stack: `config:\n${CLOUD}${gen()}`, files: ms('decode:\n  parallelism:\n    pipeline: 2\n'), code: 'values.unknown-key', path: 'decode.parallelism.pipeline' },
  { name: 'ms unknown accelerator key', stack: `config:\n${CLOUD}${gen()}`, files: ms('accelerator:\n  count: 2\n'), code: 'values.unknown-key', path: 'accelerator.count' },
  { name: 'ms servicePort a string', stack: `config:\n${CLOUD}${gen()}`, files: ms('routing:\n  servicePort: "8000"\n'), code: 'values.invalid', path: 'routing.servicePort' },
  { name: 'ms targetPort out of range', stack: `config:\n${CLOUD}${gen()}`, files: ms('routing:\n  proxy:\n    targetPort: 70000\n'), code: 'values.invalid', path: 'routing.proxy.targetPort' },
  { name: 'ms replicas negative', stack: `config:\n${CLOUD}${gen()}`, files: ms('decode:\n  replicas: -1\n'), code: 'values.invalid', path: 'decode.replicas' },
  { name: 'ms tolerations a map', stack: `config:\n${CLOUD}${gen()}`, files: ms('prefill:\n  tolerations: {key: gpu}\n'), code: 'values.invalid', path: 'prefill.tolerations' },
  { name: 'ms containers a map', stack: `config:\n${CLOUD}${gen()}`, files: ms('decode:\n  containers: {name: vllm}\n'), code: 'values.invalid', path: 'decode.containers' },
  { name: 'ms labels with a number', stack: `config:\n${CLOUD}${gen()}`, files: ms('modelArtifacts:\n  labels:\n    team: 7\n'), code: 'values.invalid', path: 'modelArtifacts.labels' },
  { name: 'gaie provider gke', stack: `config:\n${CLOUD}${gen()}`, files: gaie('provider:\n  name: gke\n'), code: 'values.conflict', path: 'provider.name' },
  { name: 'gaie DestinationRule elsewhere', stack: `config:\n${CLOUD}${gen()}`, files: gaie('provider:\n  istio:\n    destinationRule:\n      host: x.svc\n'), code: 'values.conflict', path: 'provider.istio.destinationRule.host' },
  { name: 'gaie pool on another port', stack: `config:\n${CLOUD}${gen()}`, files: gaie('inferencePool:\n  targetPorts:\n    - number: 9000\n'), code: 'values.conflict', path: 'inferencePool.targetPorts' },
  { name: 'gaie v1alpha2 pool', stack: `config:\n${CLOUD}${gen()}`, files: gaie('inferencePool:\n  apiVersion: inference.networking.x-k8s.io/v1alpha2\n'), code: 'values.conflict', path: 'inferencePool.apiVersion' },
  { name: 'gaie selects a label pods lack', stack: `config:\n${CLOUD}${gen()}`, files: gaie('inferencePool:\n  modelServers:\n    matchLabels:\n      app: vllm\n'), code: 'values.conflict', path: 'inferencePool.modelServers.matchLabels.app' },
  { name: 'gaie matchLabels contradict the slug', stack: `config:\n${CLOUD}${gen()}`, files: gaie('inferencePool:\n  modelServers:\n    matchLabels:\n      llm-d.ai/model: x\n'), code: 'values.conflict', path: 'inferencePool.modelServers.matchLabels["llm-d.ai/model"]' },
  { name: 'infra second DestinationRule for the EPP', stack: `config:\n${CLOUD}${gen()}`, files: infra('gateway:\n  destinationRule:\n    enabled: true\n    host: gaie-gen-epp.llm-d-gen.svc.cluster.local\n'), code: 'values.conflict', path: 'gateway.destinationRule.enabled' },
  { name: 'infra renames the Gateway', stack: `config:\n${CLOUD}${gen()}`, files: infra('gateway:\n  fullnameOverride: gw\n'), code: 'values.conflict', path: 'gateway.fullnameOverride' },
  { name: 'infra kgateway class', stack: `config:\n${CLOUD}${gen()}`, files: infra('gateway:\n  gatewayClassName: kgateway\n'), code: 'values.conflict', path: 'gateway.gatewayClassName' },
  { name: 'infra disables the Gateway', stack: `config:\n${CLOUD}${gen()}`, files: infra('gateway:\n  enabled: false\n'), code: 'values.conflict', path: 'gateway.enabled' },
  { name: 'infra unknown root key (1.4 schema)', stack: `config:\n${CLOUD}${gen()}`, files: infra('istio:\n  accessLogging: true\n'), code: 'values.unknown-key', path: 'istio' },
  { name: 'infra unknown gateway key', stack: `config:\n${CLOUD}${gen()}`, files: infra('gateway:\n  provider: istio\n'), code: 'values.unknown-key', path: 'gateway.provider' },
  { name: 'infra parameters off with placement', stack: `config:\n${CLOUD}${gen('        nodeSelector:\n          workload: gpu\n')}`, files: infra('gateway:\n  gatewayParameters:\n    enabled: false\n'), code: 'values.conflict', path: 'gateway.gatewayParameters.enabled' },
  // --- what the pinned charts really do (issue 10)
  { name: 'ms extraConfig tolerations beside the GPU toleration', stack: `config:\n${CLOUD}  app-serving:gpuToleration:\n    key: gpu\n    operator: Exists\n${gen()}`, files: ms('decode:\n  extraConfig:\n    tolerations: []\n'), code: 'values.conflict', path: 'decode.extraConfig.tolerations' },
  { name: 'ms extraConfig serviceAccountName', stack: `config:\n${CLOUD}${gen()}`, files: ms('prefill:\n  extraConfig:\n    serviceAccountName: mine\n'), code: 'values.conflict', path: 'prefill.extraConfig.serviceAccountName' },
  { name: 'ms multinode', stack: `config:\n${CLOUD}${gen()}`, files: ms('multinode: true\n'), code: 'values.unsupported', path: 'multinode' },
  { name: 'ms requester', stack: `config:\n${CLOUD}${gen()}`, files: ms('requester:\n  enable: true\n'), code: 'values.unsupported', path: 'requester.enable' },
  { name: 'ms mountPath with modelSource', stack: `config:\n${ONPREM}${gen(source(SRC))}`, files: ms('modelArtifacts:\n  mountPath: /models\n'), code: 'values.conflict', path: 'modelArtifacts.mountPath' },
  { name: 'ms unknown podmonitor key', stack: `config:\n${CLOUD}${gen()}`, files: ms('decode:\n  monitoring:\n    podmonitor:\n      port: x\n'), code: 'values.unknown-key', path: 'decode.monitoring.podmonitor.port' },
  { name: 'ms unknown accelerator env item key', stack: `config:\n${CLOUD}${gen()}`, files: ms('accelerator:\n  env:\n    intel-xe:\n      - {name: A, valueFrom: {}}\n'), code: 'values.unknown-key', path: 'accelerator.env.intel-xe[0].valueFrom' },
  { name: 'infra unknown tls key', stack: `config:\n${CLOUD}${gen()}`, files: infra('gateway:\n  tls:\n    referenceGrant:\n      enable: true\n'), code: 'values.unknown-key', path: 'gateway.tls.referenceGrant.enable' },
  { name: 'infra listener from All', stack: `config:\n${CLOUD}${gen()}`, files: infra('gateway:\n  listeners:\n    - {name: default, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}\n'), code: 'values.conflict', path: 'gateway.listeners' },
  { name: 'gaie EPP affinity contradicts the nodeSelector', stack: `config:\n${CLOUD}${gen('        nodeSelector:\n          workload: gpu\n')}`, files: gaie('inferenceExtension:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms: []\n'), code: 'values.conflict', path: 'inferenceExtension.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms' },
  { name: 'readyTimeout not a duration', stack: `config:\n${CLOUD}${gen('        readyTimeout: soon\n')}`, code: 'config.invalid', path: 'models.generative[0].readyTimeout' },
  { name: 'modelGateway routeNamespaces a string', stack: `config:\n${CLOUD}  app-serving:modelGateway:\n    routeNamespaces: mine\n${gen()}`, code: 'config.invalid', path: 'modelGateway.routeNamespaces' },
  // --- kserve overlays
  { name: 'kserve uri contradicts modelSource', stack: `config:\n${KSTACK}${source('          huggingFace:\n            repo: o/m\n          storageSize: 1Gi\n')}`, files: ks('model:\n  uri: hf://o/m\n'), code: 'values.conflict', path: 'model.uri' },
  { name: 'kserve other gateway', stack: `config:\n${KSTACK}`, files: ks('model:\n  uri: hf://o/m\nrouter:\n  gateway:\n    refs: []\n'), code: 'values.conflict', path: 'router.gateway.refs' },
  { name: 'kserve other service account', stack: `config:\n${KSTACK}`, files: ks('model:\n  uri: hf://o/m\ntemplate:\n  serviceAccountName: default\n'), code: 'values.conflict', path: 'template.serviceAccountName' },
  { name: 'kserve unknown spec key', stack: `config:\n${KSTACK}`, files: ks('model:\n  uri: hf://o/m\nreplica: 2\n'), code: 'values.unknown-key', path: 'replica' },
  { name: 'kserve unknown router key', stack: `config:\n${KSTACK}`, files: ks('model:\n  uri: hf://o/m\nrouter:\n  routes: {}\n'), code: 'values.unknown-key', path: 'router.routes' },
  { name: 'kserve replicas a string', stack: `config:\n${KSTACK}`, files: ks('model:\n  uri: hf://o/m\nreplicas: two\n'), code: 'values.invalid', path: 'replicas' },
  { name: 'kserve baseRefs malformed', stack: `config:\n${KSTACK}`, files: ks('model:\n  uri: hf://o/m\nbaseRefs: [x]\n'), code: 'values.invalid', path: 'baseRefs' },
  { name: 'kserve bad model uri', stack: `config:\n${KSTACK}`, files: ks('model:\n  uri: /models/x\n'), code: 'values.invalid', path: 'model.uri' },
  { name: 'kserve no model uri at all', stack: `config:\n${KSTACK}`, code: 'config.missing-key', path: 'models.generative[0].modelSource' },
  { name: 'kserve Harbor hub-cache layout', stack: `config:\n${CLOUD}${HARBOR}  app-serving:models:\n    generative:\n      - name: Ks\n        platform: kserve\n${source('          harborRef: harbor.local/a/b:1\n          modelUri: hub/o/m\n          storageSize: 1Gi\n')}`, code: 'config.invalid', path: 'models.generative[0].modelSource.layout' },
  { name: 'kserve model with an infra release name', stack: `config:\n${CLOUD}  app-serving:models:\n    generative:\n      - name: Ks\n        platform: kserve\n        releaseName: r\n`, files: ks('model:\n  uri: hf://o/m\n'), code: 'config.contradiction', path: 'models.generative[0].releaseName' },
];

describe('malformed-input corpus', () => {
  it('has at least 100 cases, each named once', () => {
    expect(cases.length).toBeGreaterThanOrEqual(100);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  // Both ways a stack is loaded: rules checked by the loader (the Pulumi program), or by the
  // planner together with the model folders (the CLI).
  it.each(cases.flatMap((c) => [[`${c.name}`, c, true], [`${c.name} (rules while planning)`, c, false]] as const))('%s', (_name, c, checkRules) => {
    const files: Record<string, string> = { ...MODELS, 'Pulumi.corpus.yaml': c.stack };
    for (const [path, content] of Object.entries(c.files ?? {})) {
      if (content === undefined) delete files[path];
      else files[path] = content;
    }
    const dir = tempRepo(files);
    let thrown: unknown;
    try {
      planDeployment(loadStackFile(join(dir, 'Pulumi.corpus.yaml'), 'Pulumi.corpus.yaml', { checkRules }), join(dir, 'models'));
    } catch (error) {
      thrown = error;
    }
    expect(thrown, 'the stack must be refused').toBeDefined();
    if (!isStackError(thrown)) throw thrown;
    expect(thrown.issues.map(({ code, path }) => ({ code, path }))).toContainEqual({ code: c.code, path: c.path });
    for (const issue of thrown.issues) {
      expect(issue.message.length, 'every issue says something').toBeGreaterThan(5);
      expect(issue.file, 'every issue names a file').toBeDefined();
      expect(JSON.stringify(issue)).not.toMatch(/hunter2|hf_abc/);
    }
  });
});
