/** Types of envoy-gateway.mjs (a plain script, so that `node tools/data-path/envoy-gateway.mjs` runs it without a build). */
export declare const ENVOY_GATEWAY_VERSION: string;
export declare function envoyGatewayPath(env?: NodeJS.ProcessEnv): string;
export declare function ensureEnvoyGateway(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): string;
