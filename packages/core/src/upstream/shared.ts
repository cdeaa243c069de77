import { DEFAULT_READY_TIMEOUT, EMBEDDINGS_SERVICE_PORT } from '../constants.ts';
import { durationSeconds } from '../config/formats.ts';
import type { StackConfig } from '../config/load.ts';
import type { ModelEntry } from '../config/types.ts';
import { serviceHost } from '../names.ts';
import { storagePlan, type StoragePlan } from '../storage.ts';

/**
 * Rules every set of upstream versions shares for an llm-d model: how long `pulumi up` waits for
 * it, where its control pods go, its storage, its embeddings Service. One place each; the sets'
 * plans call them.
 */

/** The model's readyTimeout (default 30m), as written and in seconds. */
export function readyTimeoutOf(entry: Pick<ModelEntry, 'readyTimeout'>): { text: string; seconds: number } {
  const text = entry.readyTimeout ?? DEFAULT_READY_TIMEOUT;
  return { text, seconds: durationSeconds(text)! };
}

/** Node labels of the control pods (EPP, gateway pods): the stack's controlNodeSelector, else the model's nodeSelector. */
export function controlNodeSelectorOf(config: Pick<StackConfig, 'controlNodeSelector'>, entry: Pick<ModelEntry, 'nodeSelector'>): Readonly<Record<string, string>> {
  return config.controlNodeSelector && Object.keys(config.controlNodeSelector).length > 0 ? config.controlNodeSelector : entry.nodeSelector;
}

/** The storage plan of a model with a `modelSource` (else null). */
export function storageOf(config: Pick<StackConfig, 'cloudProvider' | 'harborHostname'>, entry: Pick<ModelEntry, 'modelSource'>, slug: string): StoragePlan | null {
  return entry.modelSource ? storagePlan({ slug, source: entry.modelSource, cloudProvider: config.cloudProvider, harborHostname: config.harborHostname }) : null;
}

/** The embeddings Service of an embedding model: port 8200 in front of the model server's port. */
export function embeddingServiceOf(name: string, namespace: string, targetPort: number): { name: string; port: number; targetPort: number; host: string; url: string } {
  const host = serviceHost(name, namespace);
  return { name, port: EMBEDDINGS_SERVICE_PORT, targetPort, host, url: `http://${host}:${EMBEDDINGS_SERVICE_PORT}` };
}
