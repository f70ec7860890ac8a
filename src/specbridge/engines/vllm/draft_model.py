"""vLLM's plain draft model rows (method draft_model): vllm/config/speculative.py,
vllm/v1/spec_decode/draft_model.py (DRAFT_MODEL).
"""

from __future__ import annotations

from ..spec import DraftModelRange

# --- plain draft models (method draft_model): vllm/config/speculative.py, vllm/v1/spec_decode/draft_model.py ----------
DM_CFG = "vllm/config/speculative.py"
DM_VOCAB = (
    "ValueError (SpeculativeConfig's validator: a pydantic ValidationError): Target and draft model should have the same vocabulary size. Target model vocab_size={target}. "
    "Draft model vocab_size={draft}. Using models with different tokenizers can cause out-of-bounds errors during "
    "speculative decoding."
)
DM_MAX_LEN = (
    "the draft's max_model_len becomes min(draft, target) (SpeculativeConfig._maybe_override_draft_max_model_len); "
    "a speculative max_model_len above the draft's raises"
)
DRAFT_MODEL = (
    DraftModelRange(
        engine="vllm",
        first="0.10.0",
        last="0.14",
        method="",
        cite=f"{DM_CFG} @ 0.11.0–0.14.0 (__post_init__: a draft no other method claims), vllm/config.py @ 0.10.0; "
        "vllm/engine/arg_utils.py @ 0.10.0–0.14.0 (an explicit method draft_model)",
        versions_read=("0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0"),
        begins="the V1 engine builds no draft-model proposer: both the explicit method and the inferred one raise",
        refusal="NotImplementedError: Speculative decoding with draft model is not supported yet. Please consider using "
        "other speculative decoding methods such as ngram, medusa, eagle, or mtp.",
    ),
    DraftModelRange(
        engine="vllm",
        first="0.15.0",
        last="0.24",
        method="draft_model",
        cite=f"{DM_CFG} @ 0.15.0–0.24.0 (_verify_args → verify_equal_vocab_size_if_draft_model); "
        "vllm/v1/spec_decode/draft_model.py (DraftModelProposer)",
        versions_read=("0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.19.0", "0.20.0", "0.24.0"),
        begins="vllm/v1/spec_decode/draft_model.py appears and the NotImplementedError is gone (0.14.0 still raises)",
        vocab_size_raises=DM_VOCAB,
        max_len=DM_MAX_LEN,
    ),
    DraftModelRange(
        engine="vllm",
        first="0.25.0",
        last=None,
        method="draft_model",
        cite=f"{DM_CFG} @ 0.25.0–0.32.0 (use_heterogeneous_vocab; verify_equal_vocab_size_if_draft_model unless set); "
        "vllm/v1/spec_decode/draft_model.py @ 0.32.0 (VocabMapping when heterogeneous); run: vLLM's own SpeculativeConfig on "
        "0.27.0, 0.29.0 and 0.32.0 agrees with check on 4 drafts each (tests/test_conformance_vllm_draft_model.py, 2026-12-01)",
        versions_read=("0.25.0", "0.26.0", "0.27.0", "0.29.0", "0.32.0"),
        begins="SpeculativeConfig.use_heterogeneous_vocab appears (absent in 0.24.0)",
        vocab_size_raises=DM_VOCAB,
        vocab_opt_out='"use_heterogeneous_vocab": true in --speculative-config (greedy drafting only; the draft is '
        "constrained to the tokens both vocabularies share)",
        max_len=DM_MAX_LEN,
    ),
)
