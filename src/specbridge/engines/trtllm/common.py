"""Source files of TensorRT-LLM cited by more than one file of this package (a family's rows and the launch row)."""

from __future__ import annotations

TDF_WORKER = "tensorrt_llm/_torch/speculative/dflash.py @ 00679c66"
TDF_DOCS = "docs features/speculative-decoding.md @ 1.3.0rc27 (gh-pages 7568f407)"
TDS = "tensorrt_llm/_torch/models/modeling_dspark.py"
