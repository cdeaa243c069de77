/** Types of build.mjs (a plain script, so that `node tools/pulumi-sdkgen/build.mjs` runs it without a build). */
export declare const PYTHON_PULUMI: string;
export declare const GO_CONSUMER: string;
export declare function pkgVersion(): string;
export declare function cacheRoot(env?: NodeJS.ProcessEnv): string;
export declare function generatorPath(env?: NodeJS.ProcessEnv): string;
export declare function pythonVenv(env?: NodeJS.ProcessEnv): string;
export declare function goEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export declare function offlineGoEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export declare function layOutGoConsumer(dir: string, goSdk: string): void;
export declare function generateSdks(generator: string, schema: string, out: string): void;
export declare function ensureGenerator(options?: { env?: NodeJS.ProcessEnv }): string;
export declare function ensurePythonVenv(options?: { env?: NodeJS.ProcessEnv }): string;
export declare function ensureGoModules(options?: { env?: NodeJS.ProcessEnv; generator?: string }): void;
export declare function prepare(options?: { env?: NodeJS.ProcessEnv }): { generator: string; python: string };
