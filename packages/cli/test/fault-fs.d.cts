/** Types of fault-fs.cjs (see there). */
export interface FaultControl {
  mode: 'off' | 'count' | 'kill' | 'enospc';
  at: number;
  root: string;
  steps: string[];
  dead: boolean;
  full: boolean;
  onKill?: () => void;
  onStep?: ((n: number, name: string, path: string) => void) | undefined;
}
export declare function faultFs(fs: typeof import('node:fs'), control: FaultControl): Partial<typeof import('node:fs')>;
export declare class KilledError extends Error {}
