import type { IncomingMessage } from 'node:http';
import type { DeploymentPlan } from '@app-serving/core';
import { type Refusal, type TestCluster } from '@app-serving/test-cluster';
/** The harness's public key as a JWKS document (the text a stack's `access.jwt.jwks` holds). */
export declare function harnessJwks(): string;
/** A token signed with the harness's key (RS256) for `issuer` and the first of `audiences`, valid for a day (or `expiresIn` seconds: negative for one already expired). */
export declare function harnessToken(issuer: string, audiences: readonly string[], options?: {
    expiresIn?: number;
}): string;
/** A token like {@link harnessToken}'s, with the harness's key id, signed by another key: a forgery the gateway must refuse. */
export declare function forgedToken(issuer: string, audiences: readonly string[]): string;
/**
 * Points every JWT model of a stack's `app-serving:models` at the harness's key: `jwks` inline in
 * place of `jwksUri` or the stack's own keys (whose private halves the harness does not have).
 */
export declare function useHarnessKeys(config: Record<string, unknown>): void;
/** What one gateway checks for one model: the htpasswd users (name → `{SHA}` hash) and/or the JWT rules. */
export interface Rule {
    readonly users?: ReadonlyMap<string, string>;
    readonly jwt?: readonly {
        readonly issuer: string;
        readonly audiences: readonly string[];
        readonly jwks: string;
    }[];
    /** The status of a request without a token where JWT is required: 403 (Istio's ALLOW policy), 401 (Envoy Gateway). */
    readonly anonymous: number;
}
export declare function parseHtpasswd(text: string): Map<string, string>;
/** The answer a gateway with `rule` gives a request: a refusal, or undefined to let it through. */
export declare function check(rule: Rule, req: Pick<IncomingMessage, 'headers'>): Refusal | undefined;
/**
 * What the gateway pod `pod` would refuse, from the policies in the cluster: Istio's for a gateway
 * pod of an llm-d model, Envoy Gateway's (by the request's path prefix) for the Envoy proxy in front
 * of KServe models; undefined where nothing is checked.
 */
export declare function gatewayAuthorizer(cluster: TestCluster, plan: DeploymentPlan, pod: any): Promise<((req: IncomingMessage) => Refusal | undefined) | undefined>;
//# sourceMappingURL=access.d.ts.map