import type { ChartRef } from '../../constants.ts';

/**
 * What the endpoint relies on upstream, each read at the version named and held against the source
 * by tests (facts.test.ts):
 *
 * The body-based router (BBR) is GAIE's `cmd/bbr` with its chart `config/charts/body-based-routing`,
 * at **v1.5.0** (sigs.k8s.io/gateway-api-inference-extension, served by the Go module proxy): the
 * last GAIE release that has them. v1.6.0 removed `config/charts/*`, the EPP and BBR (v1.6.2 has only
 * `cmd/lwepp`; its README points BBR users to llm-d's Inference Payload Processor, whose module the
 * proxy does not serve). v1.5.0 is also the GAIE that KServe v0.20/v0.21 and the llm-d Router v0.10
 * pin; the 2026-08 set's InferencePool CRD is v1.6's, which the BBR never reads (it reads only request
 * bodies and, with the `base-model-to-header` plugin app-serving does not enable, ConfigMaps).
 *
 * - chart: published by GAIE's release (`cloudbuild.yaml` → `make bbr-helm-chart-push` →
 *   `hack/push-chart.sh` with `CHART=body-based-routing`, `helm package --version <tag>`) to
 *   `oci://registry.k8s.io/gateway-api-inference-extension/charts/body-based-routing` at `v1.5.0`;
 * - image: `registry.k8s.io/gateway-api-inference-extension/bbr:v1.5.0` (chart `values.yaml`,
 *   `bbr.image`);
 * - the Deployment and Service are `bbr.name` (`body-based-router`), the ServiceAccount
 *   `<bbr.name>-<release>`; it serves ext_proc on `bbr.port` (9004), gRPC health on 9005;
 * - its args are `--streaming`, then `--<key> "<value>"` per `bbr.flags` entry, then `--plugin`
 *   per `bbr.plugins` entry (templates/bbr.yaml). A boolean flag cannot be turned off as
 *   `{key: false}` (pflag reads `--key "false"` as `--key` and a positional argument), so the
 *   flag is given as the key `secure-serving=false` with an empty value;
 * - the `body-field-to-header` plugin writes the body's `model` into `X-Gateway-Model-Name`
 *   (pkg/bbr/plugins/bodyfieldtoheader: `ModelHeader`), then (streaming mode) answers Envoy's
 *   request headers with `clear_route_cache: true` (pkg/bbr/handlers/request.go), so that the route
 *   is chosen again by that header; a body without `model` leaves the header unset;
 * - `provider.name: istio` renders an EnvoyFilter (targetRefs: the Gateway `inferenceGateway.name`)
 *   inserting the ext_proc filter first in the gateway's HTTP chain, with `FULL_DUPLEX_STREAMED`
 *   bodies, and a DestinationRule (TLS SIMPLE, insecureSkipVerify) for the BBR's own certificate.
 */

/** GAIE's body-based-routing chart of the endpoint (chart key `charts.bodyBasedRouting`). */
export const BBR_CHART = { chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/body-based-routing', version: 'v1.5.0' } as const satisfies ChartRef;
/** The GAIE release the body-based router is from. */
export const BBR_GAIE_VERSION = 'v1.5.0';
/** The chart's default image (`bbr.image.{registry,repository,tag}`). */
export const BBR_IMAGE = 'registry.k8s.io/gateway-api-inference-extension/bbr:v1.5.0';
/** `bbr.name`: the Deployment and Service. */
export const BBR_NAME = 'body-based-router';
/** `bbr.port`: ext_proc (gRPC). */
export const BBR_PORT = 9004;
/** The header the `body-field-to-header` plugin sets from the body's `model` (GAIE v1.5.0 `bodyfieldtoheader.ModelHeader`). */
export const MODEL_HEADER = 'X-Gateway-Model-Name';
/** The plugin, as the chart's `bbr.plugins` entry: `--plugin body-field-to-header:model-extractor:{"fieldName":"model","headerName":"X-Gateway-Model-Name"}`. */
export const BBR_MODEL_PLUGIN = { type: 'body-field-to-header', name: 'model-extractor', json: { fieldName: 'model', headerName: MODEL_HEADER } } as const;
/** The chart's default values app-serving reasons about. */
export const BBR_DEFAULTS = { bbr: { name: BBR_NAME, replicas: 1, port: BBR_PORT, healthCheckPort: 9005 }, provider: { name: 'none' } } as const;

/**
 * How long the endpoint lets one request run (its routes' `timeouts.request`): the llm-d Router
 * chart's own route default (`httpRoute.requestTimeout: 300s`); Envoy's own default is 15 s.
 */
export const ENDPOINT_REQUEST_TIMEOUT = '300s';

/**
 * How long Envoy waits for the body-based router's answer to one message: the EPP's on class
 * `envoy` (upstream/2026-08 `EXT_PROC_MESSAGE_TIMEOUT`, the same reason: the body arrives in full first).
 */
export const BBR_MESSAGE_TIMEOUT = '10s';

/** The most model names (a model and its adapters) one HTTPRoute can match: Gateway API v1.5.1 `HTTPRoute` (64 matches per rule, 128 per route). */
export const ROUTE_MAX_NAMES = 128;
export const RULE_MAX_MATCHES = 64;

/**
 * Envoy Gateway's direct response body is a substitution format string (`HTTPDirectResponseFilter.body`:
 * "Supports Envoy command operators", v1.8.1 `api/v1alpha1/httproutefilter_types.go`), so a `%` in it
 * would be read as a command operator; names the endpoint answers with are held to this charset,
 * which also keeps them plain header values and Lua long-bracket strings on Istio.
 */
export const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,252}$/;

/**
 * Istio's proxy (istio/proxy `bazel/extension_config/extensions_build_config.bzl`) has
 * `envoy.filters.http.basic_auth` and `envoy.filters.http.lua`, and no `api_key_auth`, at 1.28.5,
 * 1.29.6, 1.30.3, 1.31.0-rc.0 and master of 2026-08-22: on Istio a key is checked only as HTTP Basic.
 * Envoy Gateway's `apiKeyAuth` (SecurityPolicy) is Envoy's `api_key_auth`, which strips a `Bearer `
 * prefix from the header it reads (go-control-plane envoy v1.37 `api_key_auth.v3.KeySource.header`).
 */
export const ISTIO_PROXY_FILTERS_SEEN = ['1.28.5', '1.29.6', '1.30.3', '1.31.0-rc.0'] as const;
