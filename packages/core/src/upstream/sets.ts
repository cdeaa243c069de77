import { UPSTREAMS, type Upstream } from '../constants.ts';
import type { StackConfig } from '../config/load.ts';
import type { ModelEntry } from '../config/types.ts';
import { KSERVE_RELEASES, type KserveRelease } from '../kserve/releases.ts';
import { CHARTS_2026_02 } from './2026-02.ts';
import { ROUTER_2026_08 } from './2026-08/plan.ts';
import type { LlmdGeneration } from './generation.ts';
import { CURRENT_UPSTREAM, DEFAULT_UPSTREAM, modelUpstream } from './select.ts';

export { UPSTREAMS, type Upstream };

export { DEFAULT_UPSTREAM, CURRENT_UPSTREAM, modelUpstream };

/** One set of upstream versions: its llm-d generation and its KServe release. */
export interface UpstreamSet {
  readonly upstream: Upstream;
  /** One line naming what it deploys. */
  readonly summary: string;
  /** Whether upstream has moved on from it. */
  readonly superseded: boolean;
  readonly llmd: LlmdGeneration;
  readonly kserve: KserveRelease;
}

export const UPSTREAM_SETS: Readonly<Record<Upstream, UpstreamSet>> = {
  '2026-02': {
    upstream: '2026-02',
    summary: 'llm-d-infra v1.3.10, GAIE inferencepool v1.2.0 and llm-d-modelservice v0.4.12; KServe v0.18',
    superseded: true,
    llmd: CHARTS_2026_02,
    kserve: KSERVE_RELEASES['2026-02'],
  },
  '2026-08': {
    upstream: '2026-08',
    summary: 'the llm-d Router v0.10.0 with a plain vLLM Deployment and a Gateway per model; KServe v0.20',
    superseded: false,
    llmd: ROUTER_2026_08,
    kserve: KSERVE_RELEASES['2026-08'],
  },
};

/** The set of a model. */
export function upstreamSetOf(config: Pick<StackConfig, 'upstream'>, entry: Pick<ModelEntry, 'upstream'>): UpstreamSet {
  return UPSTREAM_SETS[modelUpstream(config, entry)];
}

// The command that moves a stack across lives beside the other small facts (discovery names it too).
export { migrationCommand } from './select.ts';
