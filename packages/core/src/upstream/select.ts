import { LIMITS, type Upstream } from '../constants.ts';
import { SLUG_PATTERN, istioGatewayServiceOf2026_02, slugProblem } from '../names.ts';
import { gatewayServiceName, routerNames } from './2026-08/names.ts';
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

/** Whether the stack's endpoint serves a model: the stack has one (enabled), and the model does not opt out (`endpoint: false`). */
export function modelOnEndpoint(config: Pick<StackConfig, 'endpoint'>, entry: Pick<ModelEntry, 'endpoint'>): boolean {
  return config.endpoint !== undefined && config.endpoint.enabled && entry.endpoint !== false;
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

/**
 * Why a slug is not valid for a model on `set`, or `undefined`. The limit is one, 33 characters, on
 * both sets: it comes from the 2026-02 Istio gateway Service `infra-<slug>-inference-gateway-istio`
 * (63 at most), and a model on 2026-08 must be able to move back. On 2026-08 the message names that
 * set's own Service (`router-<slug>-gateway-istio`), and says why the shorter limit holds there too.
 */
export function slugProblemOn(slug: string, set: Upstream): string | undefined {
  const problem = slugProblem(slug);
  if (problem === undefined || set === '2026-02' || !SLUG_PATTERN.test(slug)) return problem;
  const own = gatewayServiceName(routerNames(slug).gateway, 'istio');
  const back = istioGatewayServiceOf2026_02(slug);
  const start = `"${slug}" is ${slug.length} characters; a slug may have at most ${LIMITS.slug}`;
  if (own.length > LIMITS.dnsLabel) {
    return `${start}, because the Istio gateway Service "${own}" would be ${own.length} characters (limit ${LIMITS.dnsLabel}) and the Gateway would never become Programmed`;
  }
  return `${start} on either set: on ${set} the Istio gateway Service "${own}" (${own.length} characters) fits, but the model must be able to move back to 2026-02, where its Istio gateway Service "${back}" would be ${back.length} characters (limit ${LIMITS.dnsLabel}) and the Gateway would never become Programmed`;
}

/** The command that moves a stack's model folders to the current set (the migration's first step). */
export function migrationCommand(stackFile: string): string {
  return `app-serving migrate --stack ${stackFile} --to ${CURRENT_UPSTREAM}`;
}
