import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { embeddingsServiceManifest, serviceHost } from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { childOptions } from './options.ts';

/** Arguments of {@link EmbeddingService}. */
export interface EmbeddingServiceArgs {
  /** The model namespace. */
  readonly namespace: pulumi.Input<string>;
  /** The model slug (labels). */
  readonly slug: pulumi.Input<string>;
  /** The Service's name: the plan's `embeddingService.name` (`ms-<slug>-embeddings`). */
  readonly serviceName: pulumi.Input<string>;
  /** Labels of the model-server pods: the plan's `modelServer.podLabels` (`llm-d.ai/role: decode` is added). */
  readonly podLabels: pulumi.Input<Readonly<Record<string, string>>>;
  /**
   * The port the server listens on in the decode pods: the plan's `embeddingService.targetPort`
   * (8200 behind the routing sidecar, `routing.servicePort` without it). Clients always use 8200.
   */
  readonly targetPort: pulumi.Input<number>;
}

/**
 * The ClusterIP Service of an embedding model, straight to its decode pods (GAIE v1.2's EPP
 * rejects `/v1/embeddings`).
 *
 * Order it with `dependsOn` after the {@link ModelService}: Pulumi waits for a Service's endpoints
 * to be ready, which they are once the chart's pods are. {@link LlmdModel} does this.
 *
 * Children: `<name>-service` (`v1/Service`).
 */
export class EmbeddingService extends pulumi.ComponentResource {
  readonly service: k8s.core.v1.Service;
  /** `http://<service>.<namespace>.svc.cluster.local:8200`, once the Service exists. */
  readonly url: pulumi.Output<string>;

  constructor(name: string, args: EmbeddingServiceArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.EmbeddingService, name, {}, opts);
    const svc = pulumi
      .output({ name: args.serviceName, namespace: args.namespace, slug: args.slug, podLabels: args.podLabels, targetPort: args.targetPort })
      .apply((a) => embeddingsServiceManifest(a));
    this.service = new k8s.core.v1.Service(childName(name, 'service'), { metadata: svc.metadata, spec: svc.spec }, childOptions(this, opts?.dependsOn));
    this.url = pulumi
      .all([this.service.metadata.name, this.service.metadata.namespace, svc.spec.ports])
      .apply(([service, namespace, ports]) => `http://${serviceHost(service!, namespace!)}:${ports[0]!.port}`);
    this.registerOutputs({ url: this.url });
  }
}
