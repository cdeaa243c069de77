/** Types of envoy.mjs (a plain script, so that `node tools/data-path/envoy.mjs` runs it without a build). */
export declare const ENVOY_VERSION: string;
export declare function envoyPath(env?: NodeJS.ProcessEnv): string;
export declare function envoyVersionOf(binary: string): string;
export declare function ensureEnvoy(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): string;
