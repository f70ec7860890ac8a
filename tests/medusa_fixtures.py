"""Tiny Medusa heads for vLLM's medusa.py, sized for the producer fixtures' tiny Llama target (H 64, vocab 512): the
cases the conformance matrix loads (tests/test_conformance_vllm_medusa.py) and the rows tests read
(tests/test_medusa.py). Built on tests/zoo_fixtures.py's Medusa config and tensors."""

from __future__ import annotations

import numpy as np
import zoo_fixtures as z

K = 2  # the matrix's num_speculative_tokens: vLLM builds this many heads whatever the config says
TRUNC = 128  # truncated_vocab_size of the token_map cases


def token_map(n: int = TRUNC) -> np.ndarray:
    return np.arange(0, 2 * n, 2, dtype=np.int64)  # every other token: n ids inside the 512-token vocabulary


def cases() -> dict[str, tuple[dict, dict]]:
    """name → (config, tensors)."""
    old, new = z.medusa_tensors(), z.medusa_tensors(old_layout=False)
    heads = {"medusa_heads." + k: v for k, v in new.items()}
    orig = {k: v for k, v in new.items() if not k.startswith("lm_heads.") or k == "lm_heads.0.weight"}
    return {
        "old-layout": (z.medusa_config(), old),
        "old-layout-fc-bias": (z.medusa_config(medusa_fc_bias=True), old),
        "vllm-names": (z.medusa_config(), new),
        "medusa-heads-prefix": (z.medusa_config(), heads),
        "hf-medusa-head-names": (z.medusa_config(), {"medusa_head." + k: v for k, v in old.items()}),
        "three-heads-k2": (z.medusa_config(heads=3), z.medusa_tensors(heads=3, old_layout=False)),
        "one-head-k2": (z.medusa_config(heads=1), z.medusa_tensors(heads=1, old_layout=False)),
        "token-map-ignored": (z.medusa_config(), new | {"token_map": token_map()}),
        "truncated-no-token-map": (z.medusa_config(truncated_vocab_size=TRUNC), new),
        "token-map-per-head": (z.medusa_config(truncated_vocab_size=TRUNC), new | {"token_map": token_map()}),
        "token-map-original-head": (
            z.medusa_config(truncated_vocab_size=TRUNC, original_lm_head=True),
            orig | {"token_map": token_map()},
        ),
    }
