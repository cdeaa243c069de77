import type { Upstream } from '../constants.ts';
import type { StackConfig } from '../config/load.ts';
import type { ModelEntry } from '../config/types.ts';

/**
 * Which set of upstream versions a model is on, and what its model folder holds for it: the small
 * facts discovery needs, kept apart from the sets' implementations (upstream/sets.ts).
 */

/**
 * The set a stack without `upstream` deploys: the seed's pins, so that a stack written before the
 * key existed keeps what it deploys (no upgrade by surprise). `validate` warns about it.
 */
export const DEFAULT_UPSTREAM: Upstream = '2026-02';
/** The set of today's upstream: what `new-model`, the README and the new example stack use. */
export const CURRENT_UPSTREAM: Upstream = '2026-08';

/** The set a model is deployed with: its own `upstream`, else the stack's, else {@link DEFAULT_UPSTREAM}. */
export function modelUpstream(config: Pick<StackConfig, 'upstream'>, entry: Pick<ModelEntry, 'upstream'>): Upstream {
  return entry.upstream ?? config.upstream ?? DEFAULT_UPSTREAM;
}

/**
 * The values folders of an llm-d model folder, by set: those read (`wanted`) and those it must have
 * (`required`), as `<prefix>-<slug>/values.yaml` (discovery.ts `VALUES_FOLDERS` has the prefixes).
 * A folder may hold both sets' folders: only its set's are read (a model moves one set at a time).
 */
export const LLMD_VALUES_FOLDERS = {
  '2026-02': { wanted: ['gaie', 'modelService', 'infra'], required: ['gaie', 'modelService'] },
  '2026-08': { wanted: ['server', 'router'], required: ['server'] },
} as const satisfies Record<Upstream, { wanted: readonly string[]; required: readonly string[] }>;
