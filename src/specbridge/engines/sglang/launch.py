"""SGLang's launch line (LAUNCH: flags, the argv of each algorithm) and its server's start-up log (SERVE)."""

from __future__ import annotations

from ..serving import Phase, Serving
from ..spec import (
    FamilyLaunch,
    Launcher,
)

# algorithm DFLASH: the command for a DFlash drafter, and for a DFlash2 one (the same worker and flags; each family's
# launch row below cites where it is read)
DFLASH_ARGV = (
    "python",
    "-m",
    "sglang.launch_server",
    "--model-path",
    "{target}",
    "--speculative-algorithm",
    "DFLASH",
    "--speculative-draft-model-path",
    "{draft}",
    "--speculative-num-draft-tokens",
    "{draft_tokens}",
)

DSPARK_ARGV = tuple("DSPARK" if a == "DFLASH" else a for a in DFLASH_ARGV)
# the EAGLE worker's command (EAGLE3 for an EAGLE-3 drafter, EAGLE for EAGLE-1/2, STANDALONE for a plain draft model,
# which StandaloneWorker runs with the same steps / topk / draft-token flags): {method} is the algorithm
TREE_ARGV = (
    "python",
    "-m",
    "sglang.launch_server",
    "--model-path",
    "{target}",
    "--speculative-algorithm",
    "{method}",
    "--speculative-draft-model-path",
    "{draft}",
    "--speculative-num-steps",
    "{steps}",
    "--speculative-eagle-topk",
    "{topk}",
    "--speculative-num-draft-tokens",
    "{draft_tokens}",
)
TREE_TOKENS = "steps + 1 if topk == 1 else steps * topk"

LAUNCH = Launcher(
    engine="sglang",
    program="sglang",
    flags={
        "--model-path": "target",
        "--model": "target",
        "--speculative-algorithm": "algorithm",
        "--speculative-draft-model-path": "draft",
        "--speculative-draft-model": "draft",
        "--speculative-num-steps": "steps",
        "--speculative-eagle-topk": "topk",
        "--speculative-num-draft-tokens": "draft_tokens",
        "--speculative-dflash-block-size": "block_size",  # DFLASH: an alias of --speculative-num-draft-tokens (0.5.11+)
        "--speculative-dspark-block-size": "dspark_block_size",  # DSPARK: gamma, the window less one (0.5.16+)
        "--tp": "tp",
        "--tp-size": "tp",
        "--tensor-parallel-size": "tp",
        "--context-length": "context_length",
        "--dtype": "dtype",
        "--quantization": "quantization",
        "--speculative-draft-model-quantization": "draft_quantization",
        "--attention-backend": "attention_backend",
    },
    argv=TREE_ARGV,
    cite="sglang/srt/server_args.py (flags; _handle_speculative_decoding: topk 1 sets num_draft_tokens = num_steps + 1)",
    draft_tokens=TREE_TOKENS,
    copies_quantization=True,  # server_args.py: speculative_draft_model_quantization defaults to --quantization
    topk1_draft_tokens="steps + 1",
    tree_bound=True,
    fa3_topk1_only=True,  # sgl-project/sglang issue #5491
    eagle_skips_fc=True,  # llama_eagle3.py forward: fc only when the hidden width differs from the draft's
    # NEXTN (an alias of EAGLE) without a draft path: the draft config falls back to the target's own path
    # (configs/model_config.py ModelConfig.from_server_args, 0.4.6.post5 … 0.5.23)
    mtp_argv=(
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "{target}",
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-steps",
        "{steps}",
        "--speculative-eagle-topk",
        "{topk}",
        "--speculative-num-draft-tokens",
        "{draft_tokens}",
    ),
    mtp_method="NEXTN",
    families={
        # EAGLE-1/2: algorithm EAGLE (NEXTN is its alias), the EAGLE-3 line's steps, topk and draft tokens
        "eagle": FamilyLaunch(
            family="eagle",
            argv=TREE_ARGV,
            steps="3",
            draft_tokens=TREE_TOKENS,
            tree=True,
            cite="sglang/srt/server_args.py @ 0.4.8.post1, 0.5.2, 0.5.11 (--speculative-algorithm EAGLE); "
            "speculative/eagle_worker.py, eagle_worker_v2.py (the non-EAGLE3 branch: the target's embedding and head)",
            spec_method="EAGLE",
        ),
        # a plain draft model: STANDALONE from the release's DRAFT_MODEL row ({method}), run by StandaloneWorker (an
        # EAGLEWorker) with the same steps / topk / draft-token flags
        "draft_model": FamilyLaunch(
            family="draft_model",
            argv=TREE_ARGV,
            steps="3",
            draft_tokens=TREE_TOKENS,
            tree=True,
            cite="sglang/srt/server_args.py @ 0.5.2+ (STANDALONE); sglang/srt/speculative/standalone_worker.py @ 0.5.2–0.5.14, "
            "standalone_worker_v2.py @ 0.5.15–0.5.23",
        ),
        # DFLASH takes no EAGLE steps/topk (forced to 1); its block is --speculative-num-draft-tokens, the verify window:
        # the anchor and the block_size - 1 mask slots (z-lab/dflash README: --speculative-num-draft-tokens 16 for a
        # block_size-16 drafter)
        "dflash": FamilyLaunch(
            family="dflash",
            argv=DFLASH_ARGV,
            steps="block - 1",
            draft_tokens="steps + 1",
            cite="sglang/srt/server_args.py @ 0.5.11, arg_groups/speculative_hook.py _handle_dflash @ 0.5.19 … 0.5.23; "
            "z-lab/dflash README (SGLang quick start)",
        ),
        # DFlash2DraftModel "reuses the DFLASH speculative worker": the same algorithm and flags (arg_groups/
        # speculative_hook.py _handle_dflash @ 0.5.19, 0.5.20, 0.5.23 has no DFlash2 branch); the architecture picks the class
        "dflash2": FamilyLaunch(
            family="dflash2",
            argv=DFLASH_ARGV,
            steps="block - 1",
            draft_tokens="steps + 1",
            cite="sglang/srt/models/dflash.py DFlash2DraftModel @ 0.5.19 … 0.5.23 ('Reuses the DFLASH speculative worker'); "
            "arg_groups/speculative_hook.py _handle_dflash @ 0.5.19 … 0.5.23",
        ),
        # DSPARK drafts gamma = the drafter's block_size positions per step (no anchor slot counted) and verifies
        # gamma + 1: --speculative-num-draft-tokens must be block_size + 1 (or absent: SGLang sets it so)
        "dspark": FamilyLaunch(
            family="dspark",
            argv=DSPARK_ARGV,
            steps="block",
            draft_tokens="steps + 1",
            cite="sglang/srt/arg_groups/speculative_hook.py _handle_dspark @ 0.5.16 … 0.5.23 (gamma from the draft config's "
            "block_size; speculative_num_draft_tokens must equal gamma + 1)",
        ),
    },
)


SERVE = Serving(
    engine="sglang",
    phases=(
        Phase("process started", r"", "the engine never logged: check the Python environment and the command"),
        Phase("engine init", r"server_args=|Init torch distributed", "model config loading: check paths"),
        Phase("weights loaded", r"Load weight end", "memory pool / KV-cache setup: lower --mem-fraction-static"),
        Phase(
            "target graphs",
            r"Capture cuda graph begin|Capture cuda graph end",
            "draft CUDA-graph capture (can take minutes, or hang with DeepEP/expert metrics): retry with --disable-cuda-graph or a smaller --cuda-graph-max-bs",
        ),
        Phase(
            "draft graphs",
            r"Capture draft cuda graph end|Capture draft extend cuda graph end|draft.*cuda graph.*end",
            "HTTP server start: check the port",
        ),
        Phase("ready", r"The server is fired up and ready to roll", ""),
    ),
    ready_path="/health",
    ready_line="The server is fired up and ready to roll (HTTP ready)",
    interpreter=(("python",), ("{python}",)),
    speculative_from="--speculative-algorithm",
    cite="SGLang 0.5.x start-up log lines; /health, /server_info internal_states and return_spec_tokens_details "
    "(sglang/srt/entrypoints/http_server.py)",
    trees=True,
    server_info_path="/server_info",
    request_extra={"return_spec_tokens_details": True},
)
