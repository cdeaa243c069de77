/** Types of keda.mjs (a plain script, so that `node tools/test-cluster/keda.mjs` runs it without a build). */
export declare const KEDA_VERSION: string;
export declare const KEDA_COMMANDS: string[];
export declare function kedaPath(env?: NodeJS.ProcessEnv): string;
export declare function ensureKeda(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): string;
