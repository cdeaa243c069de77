/** Types of upstream.mjs (a plain script, so that `node tools/test-cluster/upstream.mjs` runs it without a build). */
export interface UpstreamEntry {
  readonly path: string;
  readonly url: string;
  readonly sha256: string;
  readonly chart?: { readonly oci?: string; readonly repo?: string; readonly name?: string; readonly version?: string };
  readonly contentSha256?: string;
  readonly render?: { readonly chart: string; readonly version: string; readonly args?: readonly string[]; readonly templates?: readonly string[] };
  readonly documentsSha256?: string;
  readonly note?: string;
}
export declare const MANIFEST_PATH: string;
export declare const FETCH_COMMAND: string;
export declare function localUpstream(env?: NodeJS.ProcessEnv, projectRoot?: string): { dir: string; source: 'APP_SERVING_UPSTREAM' | 'shared' } | null;
export declare function readManifest(path?: string): { files: UpstreamEntry[] };
export declare function cacheRoot(env?: NodeJS.ProcessEnv): string;
export declare function cacheDir(env?: NodeJS.ProcessEnv, manifestPath?: string): string;
export declare function sha256(data: string | Uint8Array): string;
export declare function contentSha256(tgz: Uint8Array): Promise<string>;
export declare function documentsSha256(text: string | Uint8Array): string;
export declare function renderPlainTemplates(texts: readonly string[]): string | null;
/** Most bytes of one download. */
export declare const MAX_DOWNLOAD_BYTES: number;
/** Redirects followed for one download. */
export declare const MAX_REDIRECTS: number;
export declare function allowedHosts(manifest: { files: UpstreamEntry[] }, env?: NodeJS.ProcessEnv): { hosts: Set<string>; patterns: RegExp[] };
export declare function readCapped(response: Response, url: string, limit?: number): Promise<Buffer>;
export declare function fetchEntry(entry: UpstreamEntry, options?: { env?: NodeJS.ProcessEnv }): Promise<{ data: Buffer; how: 'sha256' | 'content' | 'documents' }>;
export declare function fetchUpstream(options?: { env?: NodeJS.ProcessEnv; manifestPath?: string; log?: (line: string) => void }): Promise<{ dir: string; failures: Array<{ path: string; message: string }> }>;
export declare function pinFrom(folder: string, manifestPath?: string): Promise<void>;
