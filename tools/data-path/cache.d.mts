/** Types of cache.mjs (shared by the data-path build scripts). */
export declare function cacheRoot(env?: NodeJS.ProcessEnv): string;
export declare function hashOf(parts: readonly (string | Uint8Array)[], files?: readonly string[]): string;
export declare function run(command: string, args: readonly string[], options?: import('node:child_process').SpawnSyncOptions): import('node:child_process').SpawnSyncReturns<Buffer>;
export declare function secondsSince(started: number): number;
export declare function stderrLog(line: string): void;
