/** Types of netns.mjs (a plain script, so that `node tools/test-cluster/netns.mjs -- …` runs it without a build). */
export declare const NODE_IP: string;
export declare function setupScript(): string;
export declare function netnsProblem(): string | null;
