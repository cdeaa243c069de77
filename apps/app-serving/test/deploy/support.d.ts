import { type DeploymentPlan, type Upstream } from '@app-serving/core';
import { type NodeSpec, type TestCluster } from '@app-serving/test-cluster';
export declare const APP_DIR: string;
export declare const REPO_ROOT: string;
export declare const MODELS_DIR: string;
export declare const CLI_BIN: string;
/** The deploy tier's own stacks, beside the examples (suite.ts). */
export declare const STACKS_DIR: string;
/** Every example stack file of the app (`Pulumi.<stack>.yaml`, not the template). */
export declare function exampleStacks(dir?: string): string[];
/** A stack file made deployable on the test cluster. */
export interface StackUnderTest {
    /** The stack's name (`Pulumi.<name>.yaml`). */
    readonly name: string;
    /** The rewritten stack file (secrets as placeholders), for `app-serving` commands. */
    readonly file: string;
    /** The `config:` map without the secrets, for the engine. */
    readonly config: Record<string, unknown>;
    /**
     * The secrets with test values, by config path as `pulumi config set --path` takes it: a key
     * (`app-serving:harborToken`) or a key and the place inside its value (`app-serving:apiKeys["ci"]`).
     */
    readonly secrets: Record<string, string>;
    readonly modelsDir: string;
    readonly plan: DeploymentPlan;
    /** What verify sends per model name whose access is not open (`APP_SERVING_VERIFY_TOKEN`). */
    readonly credentials: Record<string, string>;
}
/**
 * The value the engine gets for a secret of the stack file: derived from its `secure:` text, so that
 * a changed ciphertext is a changed secret for the engine as it is for `app-serving diff`.
 */
export declare function secretValue(key: string, secure: string): string;
/**
 * Takes every secret (`{secure: …}`) out of a config map, at any depth (`pulumi config set --secret
 * --path` writes them inside a key's value, as `app-serving:apiKeys.<name>`): returns them by config
 * path with test values, and the map without them (a value left empty by it dropped).
 */
export declare function takeSecrets(config: Record<string, unknown>): {
    config: Record<string, unknown>;
    secrets: Record<string, string>;
};
/**
 * Reads a stack file and rewrites what the test cluster needs: every chart at a published package
 * under ../shared/upstream/charts (the air-gap way: `charts.<chart>.chart` as a path), the kubeconfig
 * key (if any) at the cluster's, each JWT model's keys at the harness's (./access.ts), and each
 * secret (`secure:`, at any depth) as a placeholder here and a test value for the engine. `edit` may
 * change the config map first (the change tests).
 */
export declare function stackUnderTest(file: string, options: {
    kubeconfig: string;
    modelsDir?: string;
    dir?: string;
    upstream?: Upstream;
    edit?: (config: Record<string, unknown>) => void;
}): StackUnderTest;
/**
 * The credential verify needs per model name (`APP_SERVING_VERIFY_TOKEN`): `<key name>:<key>` for
 * API keys (the first the model accepts, its value from `secrets` by config path), a harness-signed
 * token for JWT; none for an open model.
 */
export declare function credentials(plan: DeploymentPlan, secrets: Readonly<Record<string, string>>): Record<string, string>;
/** A node label key for every simulated node of one test, so that a test can find (and remove) its own. */
export declare const SHAPE_LABEL = "test.app-serving.io/shape";
/**
 * kwok nodes shaped like the cluster a plan expects, derived from the plan alone (so any valid stack
 * gets a cluster it fits): per distinct node selector of the models, a node with those labels,
 * GPUs where the model asks for them and, when the stack has a GPU toleration, the matching taint
 * on those GPU nodes (only tolerating pods land there, as on a real GPU pool); the hostPath node by
 * its own name; a node for the control pods' `controlNodeSelector`. Nodes are big enough for any
 * example (64 CPUs, 512 GiB, 8 GPUs).
 */
export declare function clusterShape(plan: DeploymentPlan, prefix: string): NodeSpec[];
/** Whether a node's labels satisfy a selector. */
export declare function matches(labels: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>>): boolean;
/**
 * What must be in the cluster once `pulumi up` of `plan` is done, checked against the API server:
 * every object the plan names, with its names, labels and placement; model pods Ready; each pull
 * Job Succeeded. Returns the problems (none: the deployment is what the plan says).
 */
export declare function deployedProblems(cluster: TestCluster, plan: DeploymentPlan): Promise<string[]>;
/** The served model name of every model of a plan (what the local model server answers for). */
export declare function servedNames(plan: DeploymentPlan): string[];
/**
 * `app-serving verify --kubeconfig` of a deployed stack, with what it needs where no controller and
 * no container runs ({@link wireForVerify}): a local model server behind every pod, refusing what
 * the deployed access policies refuse at the gateway pods (./access.ts). Models are verified in
 * groups of the same credential (`APP_SERVING_VERIFY_TOKEN` is one per run): the failed checks of
 * all runs, their stderr and exit codes.
 */
export declare function verifyDeployed(cluster: TestCluster, sut: Pick<StackUnderTest, 'file' | 'modelsDir' | 'plan' | 'credentials'>): Promise<{
    failing: string[];
    stderr: string;
    codes: (number | null)[];
}>;
/**
 * What verify needs where no controller and no container runs: the controllers' stand-ins (Istio's
 * gateway per llm-d model; KServe's workload, Envoy's proxy and the service's status), each Ready
 * pod's ports forwarded to the local port `serverFor` gives for the pod, and the weights marker in
 * each model-server pod's file system (as the pull Job left it on the volume).
 */
export declare function wireForVerify(cluster: TestCluster, plan: DeploymentPlan, serverFor: (pod: any) => Promise<number>): Promise<void>;
/**
 * What the controllers that do not run here would make, from the objects in the cluster: Istio's
 * gateway for each llm-d model behind a Gateway of class istio; KServe's workload, Envoy's proxy and
 * the LLMInferenceService's status for each KServe model. Resolves once their pods are Ready.
 */
export declare function standInControllers(cluster: TestCluster, plan: DeploymentPlan): Promise<void>;
/** Deletes what a stack put in the cluster (its namespaces, their PVs, its nodes) and waits until the namespaces are gone. */
export declare function removeStack(cluster: TestCluster, plan: DeploymentPlan, nodePrefix?: string): Promise<void>;
/** Runs the built `app-serving` command; resolves with its exit code and output. */
export declare function appServing(args: readonly string[], options?: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
}): Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
}>;
/** Every object of the cluster that a stack may have left: namespaces, PVs and cluster-scoped objects labelled as ours. */
export declare function leftovers(cluster: TestCluster, plan: DeploymentPlan): Promise<string[]>;
//# sourceMappingURL=support.d.ts.map