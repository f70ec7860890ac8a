"""TensorRT-LLM's launch row (LAUNCH): `trtllm-serve MODEL --config FILE`, the speculative settings in FILE."""

from __future__ import annotations

from ..spec import (
    FamilyLaunch,
    Launcher,
    SpecFile,
)
from .common import TDF_DOCS, TDF_WORKER, TDS

# --- the trtllm-serve line: `trtllm-serve MODEL --config FILE`, the speculative settings in FILE ---------------------
# `--config` (preferred) and `--extra_llm_api_options` (its alias) name a YAML file whose speculative_config section
# is a *DecodingConfig: decoding_type picks it (Eagle3 with Eagle as an alias, MTP, DFlash, DSpark, …), max_draft_len is
# the draft length, speculative_model the drafter (speculative_model_dir its alias). Read in the 1.3.0rc27 docs
# (features/speculative-decoding.md "Usage with trtllm-bench and trtllm-serve", _includes/note_sections.rst
# config-flag-alias) and the llm_args of the releases above.
TRT_SERVE_ARGV = ("trtllm-serve", "{target}", "--config", "{config}")
TRT_DOCS = "docs features/speculative-decoding.md @ 1.3.0rc27 (trtllm-serve --config, decoding_type, speculative_model_dir alias)"
LAUNCH = Launcher(
    engine="trtllm",
    program="trtllm-serve",
    flags={"--tp_size": "tp", "--max_seq_len": "context_length"},
    argv=TRT_SERVE_ARGV,
    cite=f"{TRT_DOCS}; docs _includes/note_sections.rst @ 1.3.0rc27 (--config, alias --extra_llm_api_options)",
    target_after="trtllm-serve",
    # EagleDecodingConfig asserts max_draft_len is given (llm_args.py @ 1.2.0rc2.post1)
    requires_steps="TensorRT-LLM needs speculative_config.max_draft_len in the --config file (the decoding config asserts it is given).",
    spec_file_flags=("--config", "--extra_llm_api_options"),
    spec_file=SpecFile(
        section="speculative_config",
        method_key="decoding_type",
        steps_key="max_draft_len",
        # speculative_model_dir: the 1.0–1.2 name, an alias of speculative_model in 1.3 (written for every release)
        draft_keys=("speculative_model_dir", "speculative_model"),
        name="speculative_config.yaml",
        cite=TRT_DOCS,
    ),
    # decoding_type Eagle: EagleDecodingConfig (EAGLE-3) in 1.0–1.2, the backward-compatible alias of Eagle3 in 1.3
    eagle3_method="Eagle",
    method_aliases={"EAGLE": "EAGLE3"},
    mtp_argv=TRT_SERVE_ARGV,
    mtp_method="MTP",
    families={
        # the draft block is max_draft_len + 1 (TDF_WORKER): the mask slots are max_draft_len
        "dflash": FamilyLaunch(
            family="dflash",
            argv=TRT_SERVE_ARGV,
            steps="block - 1",
            cite=f"{TDF_WORKER} (block_size = max_draft_len + 1 when the draft has none); {TDF_DOCS}",
            spec_method="DFlash",
        ),
        # shift_label (default on): block_size == max_draft_len, every slot a prediction
        "dspark": FamilyLaunch(
            family="dspark",
            argv=TRT_SERVE_ARGV,
            steps="block",
            cite=f"{TDS} @ 008b54fe _init_dspark_heads; DSparkDecodingConfig (1.3.0rc24 llm_args)",
            spec_method="DSpark",
        ),
    },
    steps_flag="speculative_config.max_draft_len:",
    chain_only=True,
)
