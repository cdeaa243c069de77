"""Makes a small LoRA adapter for a Hugging Face causal language model, with PEFT, for vLLM's
`--enable-lora --lora-modules NAME=DIR`.

    python make_lora.py BASE_MODEL_DIR OUT_DIR [--rank 8] [--base-model-name NAME] [--seed 0]

The adapter is not trained: it is a valid PEFT adapter (adapter_config.json and
adapter_model.safetensors) on the attention's q_proj and v_proj of every layer, of the given rank,
whose weights are small deterministic values (seeded), so that the same arguments always give the
same bytes. PEFT's default leaves B at zero (the adapter would be the base model); here both A and
B are set. Small, not nothing: on the tests' question about France, SmolLM2 with the adapter answers
as without it in float32, and otherwise in bfloat16 (as vLLM serves it, PEFT and vLLM alike).

`base_model_name_or_path` in adapter_config.json is --base-model-name (default: the base folder
as given); the caller names the model the adapter belongs to, not a folder that may move.

On success it prints one JSON line to stdout: the folder, the rank, the target modules, the tensor
count. On failure it prints `make_lora: <reason>` to stderr and exits non-zero (2 for a bad argument).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

# Nothing here downloads: transformers and PEFT must not ask the Hugging Face hub either.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_MODULES = ["q_proj", "v_proj"]


def fail(message: str, code: int = 1) -> int:
    print(f"make_lora: {message}", file=sys.stderr)
    return code


def make(base_dir: str, out_dir: str, rank: int, base_model_name: str, seed: int) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
    config = LoraConfig(
        r=rank,
        lora_alpha=2 * rank,
        lora_dropout=0.0,
        bias="none",
        target_modules=TARGET_MODULES,
        task_type="CAUSAL_LM",
        init_lora_weights=False,
    )
    peft_model = get_peft_model(model, config)
    generator = torch.Generator().manual_seed(seed)
    lora = sorted((name, parameter) for name, parameter in peft_model.named_parameters() if ".lora_A." in name or ".lora_B." in name)
    if not lora:
        raise ValueError(f"no {' or '.join(TARGET_MODULES)} module in {base_dir}")
    with torch.no_grad():
        for _, parameter in lora:
            # ~N(0, 0.01²): the update B·A·(alpha/r) stays far below the base weights.
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=torch.float32) * 0.01)
    peft_model.peft_config["default"].base_model_name_or_path = base_model_name
    # Not "auto": that looks the base model up by name (the hub) to see whether its vocabulary changed.
    peft_model.save_pretrained(out_dir, save_embedding_layers=False)
    # PEFT keeps target_modules as a set and writes it in Python's per-process hash order: sorted
    # here, the config is the same bytes every time (written as PEFT writes it).
    config_file = os.path.join(out_dir, "adapter_config.json")
    with open(config_file, encoding="utf-8") as file:
        written = json.load(file)
    written["target_modules"] = sorted(written["target_modules"])
    with open(config_file, "w", encoding="utf-8") as file:
        file.write(json.dumps(written, indent=2, sort_keys=True))
    return {
        "out": os.path.abspath(out_dir),
        "rank": rank,
        "targetModules": TARGET_MODULES,
        "tensors": len(lora),
        "baseModel": base_model_name,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Make a small deterministic LoRA adapter (PEFT) on q_proj and v_proj.")
    parser.add_argument("base", help="the base model's Hugging Face folder")
    parser.add_argument("out", help="the folder to write (must not exist, or be empty)")
    parser.add_argument("--rank", type=int, default=8, help="the LoRA rank (default: 8)")
    parser.add_argument("--base-model-name", default=None, help="base_model_name_or_path in adapter_config.json (default: BASE)")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the adapter's weights (default: 0)")
    args = parser.parse_args(argv)

    if not os.path.isfile(os.path.join(args.base, "config.json")):
        return fail(f"{args.base}: not a Hugging Face model folder (no config.json)", 2)
    if args.rank < 1:
        return fail(f"--rank {args.rank}: must be at least 1", 2)
    if os.path.exists(args.out) and (not os.path.isdir(args.out) or os.listdir(args.out)):
        return fail(f"{args.out}: exists and is not an empty folder", 2)
    try:
        summary = make(args.base, args.out, args.rank, args.base_model_name or args.base, args.seed)
    except Exception as error:  # noqa: BLE001 - one line naming the cause, not a traceback
        return fail(f"{args.base}: {type(error).__name__}: {error}")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
