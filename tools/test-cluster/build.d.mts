/** Types of build.mjs (a plain script, so that `node tools/test-cluster/build.mjs` runs it without a build). */
export declare const KWOK_VERSION: string;
export declare const COMMANDS: readonly string[];
export declare function kubernetesVersion(): string;
export declare function cacheRoot(env?: NodeJS.ProcessEnv): string;
export declare function binDir(env?: NodeJS.ProcessEnv): string;
export declare function ensureBinaries(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): string;
