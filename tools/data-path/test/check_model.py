"""The data-path tests' check that a converted model and its adapter load and answer (run by
prepare.test.ts with the vLLM venv's python; not part of the set-up).

    python check_model.py MODEL_DIR GGUF_FILE ADAPTER_DIR

Loads MODEL_DIR with transformers, and the GGUF it was converted from with transformers' own GGUF
loader, and answers one chat prompt with each, greedily; loads ADAPTER_DIR onto MODEL_DIR with
PEFT. Prints one JSON object: the token ids each produced, the converted model's text, the
largest difference of their next-token logits, and what PEFT loaded.
"""

import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from peft import PeftModel  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

PROMPT = [{"role": "user", "content": "What is the capital of France?"}]
NEW_TOKENS = 12


def main(model_dir: str, gguf_file: str, adapter_dir: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    inputs = tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    prompt_length = inputs["input_ids"].shape[1]
    converted = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    folder, name = os.path.split(os.path.abspath(gguf_file))
    reference = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)

    def greedy(model):
        with torch.no_grad():
            return model.generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False)[0][prompt_length:].tolist()

    with torch.no_grad():
        logit_difference = (converted(**inputs).logits[0, -1] - reference(**inputs).logits[0, -1]).abs().max().item()
    converted_ids = greedy(converted)
    reference_ids = greedy(reference)

    adapted = PeftModel.from_pretrained(converted, adapter_dir)
    lora = {name: p for name, p in adapted.named_parameters() if ".lora_" in name}
    print(
        json.dumps(
            {
                "convertedIds": converted_ids,
                "referenceIds": reference_ids,
                "text": tokenizer.decode(converted_ids, skip_special_tokens=True),
                "maxLogitDifference": logit_difference,
                "chatTemplate": bool(tokenizer.chat_template),
                "eosToken": tokenizer.eos_token,
                "adapterTensors": len(lora),
                "adapterNonZero": all(p.abs().sum().item() > 0 for p in lora.values()),
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
