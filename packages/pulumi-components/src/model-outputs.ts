import type * as pulumi from '@pulumi/pulumi';
import type { Category } from '@app-serving/core';

/**
 * What a consumer needs of one deployed model, typed per platform and category: a union
 * discriminated by `platform` (and, for llm-d, `category`), so an llm-d gateway URL is an
 * `Output<string>`, never `Output<string | undefined>`.
 *
 * When they resolve (`pulumi up`; in a preview they are unknown):
 * - llm-d: after the model's Deployments are Ready (the model servers and the EPP: `helm.v4.Chart`
 *   awaits a chart's Deployments unless `skipAwait`; on 2026-08 the model-server Deployment is
 *   awaited itself) and the route (generative) or the embeddings Service (embedder) is created.
 *   Nothing awaits the Gateway being Programmed, the HTTPRoute being Accepted or the InferencePool
 *   being reconciled (the provider has no status to wait on for them): `app-serving verify` proves
 *   the way in works.
 * - KServe: after the `LLMInferenceService` is created. The Kubernetes provider does not wait for
 *   KServe's `Ready` condition of a custom resource (unless you enable its generic await), so the
 *   KServe-managed names (route, InferencePool) may not exist yet: check with `app-serving verify`.
 */
interface ModelOutputsBase {
  /** The model folder name. */
  readonly name: string;
  /** The model's slug (every derived name starts from it). */
  readonly slug: string;
  readonly category: Category;
  /** The model's namespace. */
  readonly namespace: pulumi.Output<string>;
  /** The name clients send as `model` in OpenAI requests (vLLM's `--served-model-name`). */
  readonly servedModelName: pulumi.Output<string>;
  /** The InferencePool routing to the model's pods (llm-d: the GAIE chart's; KServe: the one KServe creates). */
  readonly inferencePoolName: pulumi.Output<string>;
  /** The model PVC (with a `modelSource`), else undefined. */
  readonly pvcName: pulumi.Output<string | undefined>;
}

/** The llm-d gateway of a model: Istio's Service for the model's own Gateway. */
interface LlmdGatewayOutputs {
  readonly platform: 'llm-d';
  /** The Service Istio generates for the Gateway (`<gateway>-istio`). */
  readonly gatewayService: pulumi.Output<string>;
  /** Its in-cluster FQDN. */
  readonly gatewayHost: pulumi.Output<string>;
  /** `http://<gatewayHost>:80`. */
  readonly gatewayUrl: pulumi.Output<string>;
}

/** An llm-d generative model: clients go through the gateway and the HTTPRoute. */
export interface LlmdGenerativeOutputs extends ModelOutputsBase, LlmdGatewayOutputs {
  readonly category: 'generative';
  /** The HTTPRoute from the gateway to the InferencePool. */
  readonly routeName: pulumi.Output<string>;
}

/** An llm-d embedding model: clients call the embeddings Service (GAIE's EPP rejects `/v1/embeddings`). */
export interface LlmdEmbedderOutputs extends ModelOutputsBase, LlmdGatewayOutputs {
  readonly category: 'embedder';
  /** The ClusterIP Service in front of the decode pods. */
  readonly embeddingsService: pulumi.Output<string>;
  /** `http://<embeddings Service FQDN>:8200`. */
  readonly embeddingsUrl: pulumi.Output<string>;
}

export type LlmdModelOutputs = LlmdGenerativeOutputs | LlmdEmbedderOutputs;

/** A KServe model: clients go through the stack's Envoy Gateway, under `pathPrefix`. */
export interface KserveModelOutputs extends ModelOutputsBase {
  readonly platform: 'kserve';
  /** The `LLMInferenceService`. */
  readonly serviceName: pulumi.Output<string>;
  /** The HTTPRoute KServe creates for the service. */
  readonly routeName: pulumi.Output<string>;
  /** The Gateway the model attaches to. */
  readonly gatewayName: pulumi.Output<string>;
  readonly gatewayNamespace: pulumi.Output<string>;
  /** The path prefix KServe routes on the Gateway: `/<namespace>/<name>`. */
  readonly pathPrefix: pulumi.Output<string>;
}

/** One model's outputs: switch on `platform`, then (llm-d) on `category`. */
export type ModelOutputs = LlmdModelOutputs | KserveModelOutputs;
