/** Types of epp.mjs (a plain script, so that `node tools/data-path/epp.mjs` runs it without a build). */
export declare const GAIE_VERSION: string;
export declare const GAIE_COMMANDS: readonly string[];
export declare function gaieBinDir(env?: NodeJS.ProcessEnv): string;
export declare function ensureEpp(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): { epp: string; bbr: string };
