/** Types of helm.mjs (a plain script, so that `node tools/test-cluster/helm.mjs` runs it without a build). */
export declare const HELM_VERSION: string;
export declare function helmPath(env?: NodeJS.ProcessEnv): string;
export declare function ensureHelm(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): string;
