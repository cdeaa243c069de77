/** Types of bytecode.mjs (a plain script, so that `node tools/data-path/bytecode.mjs` runs it without a build). */
import type { VllmPaths } from './vllm.mjs';
export declare const BYTECODE_MARKER: string;
export declare function ensureBytecode(python: string, options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): void;
export declare function ensureCompiledVllm(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): VllmPaths;
