/** Types of go-flags.mjs (a plain script, shared by the build scripts). */
export declare const GO_BUILD_FLAGS: readonly string[];
export declare function goFlags(...extra: string[]): string;
