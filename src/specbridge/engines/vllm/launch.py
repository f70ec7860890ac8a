"""vLLM's launch line (LAUNCH: flags, `vllm serve` argv, the method of each family), how a launch line without a method
is read (METHOD_INFERENCE), and the start-up phases of `vllm serve` (SERVE).
"""

from __future__ import annotations

from ..serving import Phase, Serving
from ..spec import FamilyLaunch, Launcher, MethodInference

# every drafter, every family: `vllm serve` with the whole speculative config as one JSON argument
SERVE_ARGV = ("vllm", "serve", "{target}", "--speculative-config", "{spec}")
LAUNCH = Launcher(
    engine="vllm",
    program="vllm",
    flags={
        "--model": "target",
        "--tensor-parallel-size": "tp",
        "-tp": "tp",
        "--max-model-len": "context_length",
        "--dtype": "dtype",
        "--quantization": "quantization",
        "-q": "quantization",
    },
    argv=SERVE_ARGV,
    cite="vllm/engine/arg_utils.py (flags, --speculative-config JSON), vllm/config/speculative.py",
    spec_config_flags=("--speculative-config", "-sc", "--speculative_config"),
    target_after="serve",
    # vllm/transformers_utils/configs/eagle.py @ 0.27.0, 0.29.0, 0.32.0 (EAGLEConfig method eagle); run on 0.32.0 by
    # tests/test_conformance_vllm_launch_methods.py (SpecForge's LlamaForCausalLMEagle3: "Model architectures
    # ['EagleLlamaForCausalLMEagle3'] are not supported for now")
    eagle_on_eagle3="vLLM's EAGLEConfig(method='eagle') renames the architecture to Eagle{arch} unless it starts with "
    "Eagle: LlamaForCausalLMEagle3 becomes EagleLlamaForCausalLMEagle3, which no registry has (refused at start-up); "
    "Eagle3LlamaForCausalLM stays, run by the EAGLE-1/2 proposer, which captures no aux states",
    requires_steps="vLLM needs num_speculative_tokens in --speculative-config ('A speculative model was provided, but "
    "num_speculative_tokens was not provided').",
    # method mtp without a model: the draft is the target itself (config/speculative.py __post_init__, 0.11.0–0.32.0)
    mtp_argv=SERVE_ARGV,
    mtp_method="mtp",
    families={
        # method eagle: an EAGLE-1/2 drafter (EAGLEConfig renames architectures to Eagle{arch}, llama_eagle.py and its
        # siblings); one chain of num_speculative_tokens, 3 as for EAGLE-3
        "eagle": FamilyLaunch(
            family="eagle",
            argv=SERVE_ARGV,
            steps="3",
            cite="vllm/config/speculative.py @ 0.27.0, 0.29.0, 0.32.0 (method eagle: EAGLEConfig(method='eagle')); "
            "vllm/transformers_utils/configs/eagle.py (Eagle{arch})",
            spec_method="eagle",
        ),
        # P-EAGLE: method eagle3 with parallel_drafting true, the pair vLLM's speculators translation writes for
        # speculators_model_type "peagle" (configs/speculators/base.py); given only through --speculative-config,
        # parallel_drafting stays false and the drafter runs one token per forward. num_speculative_tokens: the
        # speculators config's proposal_methods[0].speculative_tokens (what the translation reads), else 3
        "peagle": FamilyLaunch(
            family="peagle",
            argv=SERVE_ARGV,
            steps="trained if trained is not None else 3",
            cite="vllm/transformers_utils/configs/speculators/base.py @ 0.27.0, 0.29.0, 0.32.0 (peagle → method eagle3, "
            "parallel_drafting True, num_speculative_tokens = speculative_tokens); vllm/config/speculative.py "
            "(parallel_drafting: False by default)",
            spec_method="eagle3",
            spec_extra=(("parallel_drafting", True),),
        ),
        # a plain draft model: the method is the release's DRAFT_MODEL row's ({method}); num_speculative_tokens 3
        "draft_model": FamilyLaunch(
            family="draft_model",
            argv=SERVE_ARGV,
            steps="3",
            cite="vllm/config/speculative.py @ 0.25.0–0.32.0 (method draft_model; num_speculative_tokens required)",
        ),
        # method dflash with the drafter as model; num_speculative_tokens = the block's mask slots (block_size - 1),
        # the setting z-lab's model cards serve with (num_speculative_tokens 15 for a block_size-16 drafter)
        "dflash": FamilyLaunch(
            family="dflash",
            argv=SERVE_ARGV,
            steps="block - 1",
            cite="vllm/config/speculative.py @ 0.27.0 … 0.32.0 (method dflash; num_speculative_tokens required); "
            "z-lab/dflash README (vLLM quick start: num_speculative_tokens 15 for block_size 16)",
            spec_method="dflash",
        ),
        # a DFlash2 drafter is served with method dflash (DFlashModelTypes is Literal["dflash"]; there is no method
        # dflash2): the DFlash2DraftModel architecture picks the class and Model Runner V2's DFlash2Speculator, which
        # drafts like DFlash's (one bonus query and num_speculative_tokens mask queries)
        "dflash2": FamilyLaunch(
            family="dflash2",
            argv=SERVE_ARGV,
            steps="block - 1",
            cite="vllm/config/speculative.py @ 0.28.0 … 0.32.0 (DFlashModelTypes = Literal['dflash']; num_speculative_tokens "
            "required for dflash); vllm/v1/worker/gpu/spec_decode/dflash2/speculator.py @ 0.32.0 (DFlash's speculator plus "
            "the candidate selector)",
            spec_method="dflash",
        ),
        # method dspark: num_speculative_tokens defaults to the draft's block_size (else dspark_block_size) and is the
        # whole block: N query tokens, anchor + N - 1 noise, every one a prediction (not DFlash's 1 + N); printed
        # explicitly all the same
        "dspark": FamilyLaunch(
            family="dspark",
            argv=SERVE_ARGV,
            steps="block",
            cite="vllm/config/speculative.py @ 0.32.0 SpeculativeConfig.__post_init__ (use_dspark(): num_speculative_tokens "
            "= block_size, else dspark_block_size); vllm/v1/worker/gpu/spec_decode/dspark/speculator.py @ 0.32.0 "
            "(N = num_speculative_tokens query tokens, anchor + N-1 noise)",
            spec_method="dspark",
        ),
    },
    # VLLM_USE_V2_MODEL_RUNNER set: use_v2_model_runner returns it as is, before any default or fallback (vllm/envs.py
    # maybe_convert_bool; vllm/config/vllm.py use_v2_model_runner @ 0.28.0 … 0.32.0); unset, a V2-only drafter gets V1
    # where Triton or a V2 feature is missing (0.29.0+: refused at start-up) or, on 0.28.0, from an inherited =0
    # (DFlash2 degrades to DFlash without a word)
    runner_env={"V2": "VLLM_USE_V2_MODEL_RUNNER=1"},
)
# What a launch line without a method (or with one the release does not keep) runs as: SpeculativeConfig.__post_init__
# sets method "draft_model" when none is given, then "Automatically detect the method" tests the draft's path,
# architectures and model_type in this order (methods eagle, eagle3, dflash, dspark are kept as named; an explicit
# draft_model is tested like none). Not tabled: the MTP model types (a draft whose model_type is one of MTPModelTypes
# runs as mtp). Read at the releases named; the releases between two reads are placed with the earlier one.
INFER_CITE = 'vllm/config/speculative.py SpeculativeConfig.__post_init__ ("Automatically detect the method")'
_INFER_HEAD = (("path", "eagle-", "EAGLE"), ("path", "eagle3", "EAGLE3"))
_INFER_TAIL = (("model_type", "medusa", "MEDUSA"), ("model_type", "mlp_speculator", "MLP_SPECULATOR"))
METHOD_INFERENCE = (
    MethodInference(
        engine="vllm",
        first="0.27.0",
        last="0.28",
        retests=("DRAFT_MODEL",),
        tests=_INFER_HEAD
        + (
            ("path", "dflash", "DFLASH"),
            ("path", "dspark", "DSPARK"),
            ("arch", "Qwen3DSparkModel", "DSPARK"),
            ("arch", "Gemma4DSparkModel", "DSPARK"),
        )
        + _INFER_TAIL,
        default="DRAFT_MODEL",
        cite=f"{INFER_CITE} @ 0.27.0",
        versions_read=("0.27.0",),
    ),
    MethodInference(
        engine="vllm",
        first="0.29.0",
        last=None,
        retests=("DRAFT_MODEL",),
        tests=_INFER_HEAD
        + (
            ("path", "dflash", "DFLASH"),
            ("arch", "MuseGlimmerAssistantModel", "DFLASH"),
            ("path", "dspark", "DSPARK"),
            ("arch", "Qwen3DSparkModel", "DSPARK"),
            ("arch", "Qwen3OmniDSparkModel", "DSPARK"),
            ("arch", "Gemma4DSparkModel", "DSPARK"),
            ("arch+model_type", "DSparkDraftModel/qwen3", "DSPARK"),
        )
        + _INFER_TAIL,
        default="DRAFT_MODEL",
        cite=f"{INFER_CITE} @ 0.29.0, 0.32.0 (the same tests)",
        versions_read=("0.29.0", "0.32.0"),
    ),
)
SERVE = Serving(
    engine="vllm",
    phases=(
        Phase("process started", r"", "the engine never logged: check the Python environment and the command"),
        Phase(
            "engine init",
            r"Initializing a V1 LLM engine|Initializing an LLM engine|vLLM API server version",
            "model config / tokenizer loading: check paths and trust_remote_code",
        ),
        Phase(
            "weights loaded",
            r"Loading weights took|Model loading took|Loading drafter model",
            "KV-cache profiling: lower --gpu-memory-utilization / VLLM_CPU_KVCACHE_SPACE or --max-model-len",
        ),
        Phase(
            "kv cache ready",
            r"GPU KV cache size|KV cache size|init engine \(profile",
            "CUDA-graph capture: retry with --enforce-eager; a drafter with many steps captures many graphs",
        ),
        Phase(
            "graphs captured",
            r"Graph capturing finished|Capturing CUDA graph.*100%|enforce_eager|Compilation .* took",
            "API server start: check the port and host",
        ),
        Phase("ready", r"Application startup complete|Uvicorn running|Starting vLLM API server", ""),
    ),
    ready_path="/v1/models",
    ready_line="Application startup complete (HTTP ready)",
    # the `vllm` console script is broken for the vllm-cpu dist: a given interpreter runs the API server module
    interpreter=(("vllm", "serve"), ("{python}", "-m", "vllm.entrypoints.openai.api_server", "--model")),
    speculative_from="--speculative-config",
    cite="the start-up log lines and /metrics spec_decode counters of vllm-cpu 0.32.0 runs (tests/test_engine_vllm.py)",
    # a small CPU server whose greedy tokens are eval's (float32; vLLM on a CPU downcasts to bfloat16 otherwise)
    sweep_flags=("--dtype", "float32", "--max-model-len", "256", "--max-num-seqs", "4", "--enforce-eager"),
    sweep_env={
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "TOKENIZERS_PARALLELISM": "false",
    },
    counters_path="/metrics",
)
