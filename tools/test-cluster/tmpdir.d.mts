/** Types of tmpdir.mjs (vitest's global setup for every project: a TMPDIR of its own per run). */
export declare function mountsUnder(dir: string, mountinfo: string): string[];
export default function setup(project?: unknown): () => void;
