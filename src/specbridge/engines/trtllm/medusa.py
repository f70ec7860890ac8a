"""Medusa on TensorRT-LLM: the TensorRT engine backend only, none on the PyTorch backend modelled here (a range without classes)."""

from __future__ import annotations

from ..spec import (
    Dispatch,
    FamilyRange,
)

# --- Medusa: the TensorRT engine backend only ---------------------------------------------------------------------------
# tensorrt_llm/models/medusa/{config,model,weight}.py (MedusaForCausalLm, load_medusa_hf) build Medusa heads into a
# TensorRT engine (examples/medusa/convert_checkpoint.py); the PyTorch backend modelled here has no Medusa
# (tensorrt_llm/_torch/speculative/: eagle3, mtp, ngram, draft_target, dflash, dspark, pard, … no medusa module)
RANGES = (
    FamilyRange(
        engine="trtllm",
        family="medusa",
        first="1.0.0",
        last=None,
        dispatch=Dispatch("trtllm", {}, "", cite="tensorrt_llm/_torch/speculative/ (no medusa module)"),
        classes={},
        begins="Medusa is built only by the TensorRT engine backend (tensorrt_llm/models/medusa/), not the PyTorch backend",
        unmodelled="TensorRT-LLM builds Medusa only on its TensorRT engine backend (tensorrt_llm/models/medusa/model.py, "
        "weight.py load_medusa_hf, after examples/medusa/convert_checkpoint.py); its PyTorch backend, the one specbridge "
        "models, has no Medusa (tensorrt_llm/_torch/speculative/ has no medusa module)",
        reads=(),
    ),
)
