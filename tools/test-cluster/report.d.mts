/** Types of report.mjs (what scripts/test.mjs says of a vitest JSON report's failures). */
export declare const NAMED_PER_PROJECT: number;
export declare function failuresOf(project: string, report: unknown, root: string): string[];
export declare function failedToRun(suite: unknown): boolean;
