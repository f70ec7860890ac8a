"""SGLang: how each release range builds and loads an EAGLE-3 drafter.

Read from the PyPI wheels' source (0.4.6.post5 onwards: every release in the ERAS rows' `versions_read`): `sglang/srt/models/llama_eagle3.py`,
`kimi_k25_eagle3.py`, `sglang/srt/speculative/eagle_worker.py` (`eagle_worker_v2.py` from 0.5.16).
Key facts: unknown checkpoint names are skipped silently, missing parameters are never reported,
and the decoder is `midlayer.*` up to 0.5.11 and `layers.N.*` from 0.5.12.
"""

from __future__ import annotations

from dataclasses import replace

from .common import DECODER_PARTS, LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, eagle3_io, llama_decoder
from .serving import Phase, Serving
from .spec import (
    Buffer,
    CaptureRule,
    Derive,
    Dispatch,
    DraftClass,
    DraftModelRange,
    Drop,
    Era,
    FamilyLaunch,
    FamilyRange,
    Field,
    IgnoreSuffix,
    KeepLayers,
    LaunchCheck,
    Launcher,
    Param,
    Prefix,
    PrefixUnlessParam,
    QuantSkip,
    Raise,
    Rename,
    RenameRegex,
    Run,
    SkipUnless,
    Stack,
    all_agreed,
    in_release_range,
)

F = "sglang/srt/models/llama_eagle3.py"
KIMI = "sglang/srt/models/kimi_k25_eagle3.py"
WORKER = "sglang/srt/speculative/eagle_worker_v2.py (init_lm_head); eagle_worker.py before 0.5.16"

DRAFT_VOCAB_REQUIRED = (
    "AttributeError: 'LlamaConfig' object has no attribute 'draft_vocab_size' "
    "(SGLang reads config.draft_vocab_size as a plain attribute; write it, null means full vocab)"
)

COMMON_FIELDS = LLAMA_FIELDS + (
    Field("Vd_raw", ("draft_vocab_size",), required=DRAFT_VOCAB_REQUIRED, keep_null=True),
    # SGLang sizes fc with hasattr(config, "target_hidden_size"): a key present but null gives None * n_aux
    Field("Ht_key", ("target_hidden_size",), "absent", keep_null=True, kind="any"),
)
HT_NULL = Raise(
    "Ht_key is None",
    "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int' (config has \"target_hidden_size\": null; "
    "SGLang tests hasattr, not the value — drop the key or give the number)",
    f"{F} LlamaModel.__init__ (hidden_size_in = config.target_hidden_size if hasattr(...))",
)
VD_NULL_046 = Raise(
    "Vd_raw is None and not tie",
    "TypeError: ParallelLMHead(None, hidden_size): draft_vocab_size is null, and this release has no load_lm_head_from_target "
    "(added for nvidia/gpt-oss-120b-Eagle3 by sgl-project/sglang PR #9739, first in 0.5.2)",
    f"{F}@0.4.9.post6 LlamaForCausalLMEagle3.__init__ (ParallelLMHead(config.draft_vocab_size, …))",
)
COMMON_DERIVE = LLAMA_DERIVE + (
    Derive("Vd", "Vd_raw if Vd_raw is not None else V"),
    # 0.5.2+: draft_vocab_size null and untied head -> load_lm_head_from_target
    Derive("head_from_target", "Vd_raw is None and not tie"),
)

DROP_VOCAB = (
    Buffer("d2t", into="hot_token_id", why="d2t becomes hot_token_id = d2t + arange", cite=f"{F} load_weights"),
    Drop("t2d", why="SGLang never uses t2d", cite=f"{F} load_weights"),
)

SKIP_MSG = "no such parameter: skipped silently (SGLang logs nothing)"
# 0.4.6-0.4.8: sglang/srt/models/llama.py LlamaForCausalLM.load_weights (which llama_eagle3 calls per name) looks a
# q/k/v/gate/up name's fused parameter up with params_dict[name] unguarded; 0.4.9 adds `if name not in params_dict:
# continue` (wheels read; the 0.4.6.post5 run raised on the story's layers.0.mlp.gate_proj)
STACKED_KEYERROR = (
    "KeyError: '{name}' (sglang/srt/models/llama.py load_weights indexes params_dict with a fused q/k/v/gate/up "
    "name the drafter class does not have; SGLang 0.4.9+ skips it)"
)
# … except a .bias name: `if name.endswith(".bias") and name not in params_dict: continue` (the GPTQ guard) comes first,
# so it is skipped silently (read at 0.4.6.post5 and 0.4.8.post1; 0.4.8.post1 run: LlamaForCausalLMEagle with Qwen2's q/k/v
# biases loads without an error)
STACKED_BIAS_SKIP = (".bias",)


LINEAR = (
    "sglang/srt/layers/linear.py (weight_loader: loaded_weight.narrow(...) along the TP dim; pad_or_narrow_weight from 0.5.3, PR #10112)"
)
O_BIAS = "attention_bias or bias"  # sglang/srt/models/llama.py LlamaDecoderLayer: LlamaAttention(bias=attention_bias or bias)


def _midlayer_class(
    name_suffix: str, fc_bias: str, head_from_target: bool, cite_versions: str, pads: bool = False, stacked_keyerror: bool = False
) -> DraftClass:
    """`fc_bias`: when fc has a bias. 0.4.6.post5 builds torch.nn.Linear(Ht*3, H) with PyTorch's default
    bias=True whatever the config says; later releases pass bias=getattr(config, "bias", False). The
    config's `bias` (default False) is a separate question: it also gives o_proj a bias (llama.py
    LlamaAttention(bias=attention_bias or bias)), in every release."""
    return DraftClass(
        name="LlamaForCausalLMEagle3",
        file=f"{F} @ {cite_versions}",
        fields=COMMON_FIELDS + (Field("bias", ("bias",), False, kind="bool"),),
        derive=COMMON_DERIVE + (Derive("n_aux", "3"),),  # fc width hard-coded as target_hidden_size * 3
        # fc is always built; no input_norm / fc_norm before 0.5.12/0.5.17 (conformance runs of the real loader)
        params=eagle3_io("Ht*n_aux", fc_bias=fc_bias, fc_when="True", input_norm=False, fc_norm=False)
        + llama_decoder("model.midlayer.", per_layer=False, o_bias_when=O_BIAS),
        # 0.4.6-0.4.8 prefix every name but lm_head with "model." unconditionally (f"model.{name}"); 0.4.9+ only
        # names that are not already a parameter
        loader=DROP_VOCAB
        + STACK_LLAMA
        + (
            (Prefix("model.", unless="lm_head", cite=f"{F} load_weights @ 0.4.6.post5 … 0.4.8.post1 (new_name = f'model.{{name}}')"),)
            if stacked_keyerror
            else (PrefixUnlessParam("model.", cite=f"{F} load_weights"),)
        )
        + (
            (
                IgnoreSuffix(
                    ".bias",
                    why="llama.py load_weights skips a .bias name that has no parameter (before the KeyError)",
                    cite="sglang/srt/models/llama.py LlamaForCausalLM.load_weights @ 0.4.6.post5 … 0.4.8.post1",
                ),
            )
            if stacked_keyerror
            else ()
        ),
        unknown="skip",
        unknown_message=SKIP_MSG,
        unknown_stacked="raise" if stacked_keyerror else "",
        unknown_stacked_message=STACKED_KEYERROR,
        unknown_stacked_skips=STACKED_BIAS_SKIP if stacked_keyerror else (),
        raises=(
            Raise("L != 1", "ValueError: EAGLE3 currently only supports 1 layer", f"{F} LlamaForCausalLMEagle3.__init__ ({cite_versions})"),
            HT_NULL,
        )
        # before 0.5.2 a null draft_vocab_size reaches ParallelLMHead(config.draft_vocab_size, …) as None
        + (() if head_from_target else (VD_NULL_046,)),
        share_embed="'target' if Ht == H else 'own'",
        share_head="'target' if head_from_target else 'own'" if head_from_target else "'own'",
        share_cite=f"{WORKER}: set_embed replaces the draft embedding unless target_hidden_size differs; "
        "set_embed_and_head when load_lm_head_from_target",
        notes=(f"decoder parameters are model.midlayer.* ({name_suffix})",),
        wider_tp="truncate",
        narrower_tp="pad" if pads else "raise",
    )


def _layers_class(versions: str, input_norm: bool) -> DraftClass:
    return DraftClass(
        name="LlamaForCausalLMEagle3",
        file=f"{F} @ {versions}",
        fields=COMMON_FIELDS
        + (
            Field("bias", ("bias",), False, kind="bool"),
            Field("n_aux", ("num_aux_hidden_states", "len:eagle_config.eagle_aux_hidden_state_layer_ids"), 3),
        ),
        derive=COMMON_DERIVE,
        # every EAGLE-3 layer has its own hidden_norm; input_norm exists from 0.5.17 (0.5.19 run, wheels read)
        params=eagle3_io("Ht*n_aux", fc_bias="bias", fc_when="True", input_norm=input_norm)
        + llama_decoder("model.layers.{i}.", per_layer=True, hidden_norm_when="True", o_bias_when=O_BIAS),
        loader=(
            Rename(old="midlayer", new="layers.0", cite=f"{F} load_weights (legacy rename, 0.5.12+)"),
            Rename(old="aux_norm_low", new="fc_norm.0", cite=f"{F} load_weights"),
            Rename(old="aux_norm_mid", new="fc_norm.1", cite=f"{F} load_weights"),
            Rename(old="aux_norm_high", new="fc_norm.2", cite=f"{F} load_weights"),
        )
        + DROP_VOCAB
        + STACK_LLAMA
        + (PrefixUnlessParam("model.", cite=f"{F} load_weights"),),
        unknown="skip",
        unknown_message=SKIP_MSG,
        raises=(HT_NULL,),
        share_embed="'target' if Ht == H else 'own'",
        share_head="'target' if head_from_target else 'own'",
        share_cite=f"{WORKER}: set_embed / set_embed_and_head",
        wider_tp="truncate",
        narrower_tp="pad",
    )


LAYERS_CLASS = _layers_class("0.5.12 … 0.5.16", input_norm=False)
LAYERS_CLASS_INPUT_NORM = _layers_class("0.5.17 and every later release read", input_norm=True)

MLA = "Eagle3DeepseekV2ForCausalLM"
KIMI_CLASS = DraftClass(
    name=MLA,
    file=f"{KIMI} @ 0.5.12 and every later release read",
    fields=COMMON_FIELDS
    + (
        Field("n_aux", ("len:eagle_config.eagle_aux_hidden_state_layer_ids", "len:eagle_aux_hidden_state_layer_ids"), 3),
        Field("q_lora", ("q_lora_rank",), required="KeyError: q_lora_rank (the MLA drafter needs it)"),
        Field("kv_lora", ("kv_lora_rank",), 512),
        Field("nope", ("qk_nope_head_dim",), 128),
        Field("rope", ("qk_rope_head_dim",), 64),
        Field("vhd", ("v_head_dim",), 128),
    ),
    derive=COMMON_DERIVE,
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "Ht*n_aux"), role="fc"),
        Param(
            "model.midlayer.self_attn.fused_qkv_a_proj_with_mqa.weight",
            shards=(("q_a", ("q_lora", "2*H")), ("kv_a", ("kv_lora+rope", "2*H"))),
            role="decoder",
        ),
        Param("model.midlayer.self_attn.q_a_layernorm.weight", ("q_lora",), role="decoder"),
        Param("model.midlayer.self_attn.q_b_proj.weight", ("nh*(nope+rope)", "q_lora"), role="decoder"),
        Param("model.midlayer.self_attn.kv_a_layernorm.weight", ("kv_lora",), role="decoder"),
        Param("model.midlayer.self_attn.kv_b_proj.weight", ("nh*(nope+vhd)", "kv_lora"), role="decoder"),
        Param("model.midlayer.self_attn.o_proj.weight", ("H", "nh*vhd"), role="decoder"),
        Param("model.midlayer.mlp.gate_up_proj.weight", shards=(("0", ("I", "H")), ("1", ("I", "H"))), role="decoder"),
        Param("model.midlayer.mlp.down_proj.weight", ("H", "I"), role="decoder"),
        Param("model.midlayer.input_layernorm.weight", ("H",), role="decoder"),
        Param("model.midlayer.hidden_norm.weight", ("H",), role="decoder"),
        Param("model.midlayer.post_attention_layernorm.weight", ("H",), role="decoder"),
        Param("model.fc_norm.{j}.weight", ("Ht",), when="fc_norm", role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
        Param("lm_head.weight", ("Vd", "H"), when="not tie", share="head", role="head"),
    ),
    loader=DROP_VOCAB
    + (
        RenameRegex(pattern=r"^layers\.0\.", new="midlayer.", cite=f"{KIMI} load_weights"),
        Prefix("model.", unless="lm_head", cite=f"{KIMI} load_weights"),
        Stack(".gate_proj", fused=".gate_up_proj", shard="0"),
        Stack(".up_proj", fused=".gate_up_proj", shard="1"),
        Stack(".q_a_proj", fused=".fused_qkv_a_proj_with_mqa", shard="q_a", cite=f"{KIMI} load_weights (cached, then concatenated)"),
        Stack(".kv_a_proj_with_mqa", fused=".fused_qkv_a_proj_with_mqa", shard="kv_a"),
    ),
    unknown="warn",
    unknown_message="logged as a warning ('Eagle3 MLA: skipping unexpected weight {name}') and skipped",
    raises=(Raise("L != 1", "ValueError: Eagle3 MLA drafter supports only 1 layer", f"{KIMI} __init__"),),
    share_embed="'target' if Ht == H else 'own'",
    share_head="'target' if head_from_target else 'own'",
    share_cite=WORKER,
)

_DISPATCH_CITE = "SGLang dispatches on architectures[0] via EntryClass; no speculators support (every release read)"

# A draft config naming an ordinary model class (the EAGLE research configs say LlamaForCausalLM) is not refused:
# model_config.py renames no Llama architecture for a draft, so SGLang builds that plain model (one ordinary
# layer; midlayer.* skipped by its load_weights), and the EAGLE3 worker then asks it for the hot-token map.
# (Llama and its subclass Mistral have set_embed, so the worker gets as far as the hot-token map; Qwen classes
# have no set_embed and fail one line earlier: not tabled here.)
PLAIN = ("LlamaForCausalLM", "MistralForCausalLM")
PLAIN_046 = (
    "AttributeError: '{arch}' object has no attribute 'get_hot_token_id': SGLang builds the plain {arch} as the draft "
    "(a registered target class) and its EAGLE3 worker needs an EAGLE-3 class "
    "(sglang/srt/speculative/eagle_worker.py@0.4.6.post5 EAGLEWorker.__init__); architectures must be LlamaForCausalLMEagle3"
)
PLAIN_MSG = (
    "AttributeError: '{arch}' object has no attribute 'hot_token_id': SGLang builds the plain {arch} as the draft "
    "(a registered target class; sglang/srt/configs/model_config.py _config_draft_model renames no Llama architecture) "
    "and its EAGLE3 worker needs an EAGLE-3 class (speculative/eagle_worker.py; eagle_worker_v2.py init_lm_head from 0.5.16); "
    "architectures must be LlamaForCausalLMEagle3"
)
UNKNOWN_046 = "ValueError: Model architectures {archs} are not supported for now (sglang/srt/models/registry.py@0.4.6.post5)"
UNKNOWN_MSG = (
    "ValueError: Cannot find model module. '{arch}' is not a registered model in the Transformers library ... and 'AutoModel' "
    "is not present in the model config's 'auto_map' (sglang/srt/model_loader/utils.py resolve_transformers_arch, 0.4.9+: "
    "an architecture SGLang has no class for falls back to Transformers, which has none either)"
)
_EAGLE3 = {"LlamaForCausalLMEagle3": "LlamaForCausalLMEagle3"}


def _dispatch(registry: dict[str, str], unknown: str, plain: str) -> Dispatch:
    return Dispatch(
        "sglang",
        registry,
        "LlamaForCausalLMEagle3",
        cite=_DISPATCH_CITE,
        unknown_message=unknown,
        plain_classes=PLAIN,
        plain_message=plain,
        speculators_refusal=unknown + " (SGLang has no speculators-config support)",
    )


# SGLang dispatches on architectures[0]; the Kimi MLA drafter class exists from 0.5.12
DISPATCH_046 = _dispatch(_EAGLE3, UNKNOWN_046, PLAIN_046)
MIDLAYER_DISPATCH = _dispatch(_EAGLE3, UNKNOWN_MSG, PLAIN_MSG)
LAYERS_DISPATCH = _dispatch({**_EAGLE3, MLA: MLA}, UNKNOWN_MSG, PLAIN_MSG)

# Conformance runs: SGLang's own class built and its own load_weights run on CPU over every case of
# tests/test_conformance_sglang.py (30 cases: 5 producer fixtures + 25 mutations), check agreeing on each
# (the date is the last full run; 0.4.9.post6, 0.5.2, 0.5.11, 0.5.12, 0.5.23 were first run on 2026-11-30).
CONF = "tests/test_conformance_sglang.py"


def _runs(date: str, *releases: str, cases: int = 30) -> tuple[Run, ...]:
    return all_agreed(CONF, date, cases, *releases)


ERAS = (
    Era(
        engine="sglang",
        name="0.4.6–0.4.8 midlayer (fc with bias)",
        first="0.4.6",
        last="0.4.8",
        native_layout="sglang",  # convert --engine writes this layout (layouts/table.py)
        multi_layer_layout="vllm",  # more than one layer: layers.N.* (the sglang layout holds one midlayer; before 0.5.12 L != 1 raises)
        # llama_eagle3.py never reads norm_before_residual (residual taken before hidden_norm): read in every wheel, not run
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.4.6.post5", "0.4.7.post1", "0.4.8.post1"),
        dispatch=DISPATCH_046,
        classes={
            "LlamaForCausalLMEagle3": _midlayer_class(
                "0.4.6.post5: fc bias=True", "True", False, "0.4.6.post5 … 0.4.8.post1", stacked_keyerror=True
            )
        },  # nn.Linear default
        begins="0.4.6.post5 is the oldest release modelled (llama_eagle3.py: fc = nn.Linear(target_hidden_size * 3, hidden_size), "
        "PyTorch's default bias=True; the same line in the 0.4.7.post1 and 0.4.8.post1 wheels)",
        runs=_runs("2026-12-01", "0.4.6.post5", "0.4.7.post1", "0.4.8.post1"),
        notes=("fc is nn.Linear(target_hidden_size*3, hidden_size) with PyTorch's default bias=True",),
    ),
    Era(
        engine="sglang",
        name="0.4.9–0.5.1 midlayer",
        first="0.4.9",
        last="0.5.1",
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.4.9", "0.4.9.post6", "0.4.10.post2", "0.5.1", "0.5.1.post3"),
        dispatch=MIDLAYER_DISPATCH,
        classes={"LlamaForCausalLMEagle3": _midlayer_class("0.4.9.post6", "bias", False, "0.4.9.post6")},
        begins="llama_eagle3.py builds fc with bias=getattr(config, 'bias', False): first in the 0.4.9 wheel (0.4.8.post1: nn.Linear "
        "default bias)",
        runs=_runs("2026-12-01", "0.4.9.post6", "0.5.1.post3"),
        notes=("no load_lm_head_from_target yet: the drafter must ship lm_head",),
    ),
    Era(
        engine="sglang",
        name="0.5.2 midlayer",
        first="0.5.2",
        last="0.5.2",
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.5.2",),
        dispatch=MIDLAYER_DISPATCH,
        classes={"LlamaForCausalLMEagle3": _midlayer_class("0.5.2", "bias", True, "0.5.2")},
        begins="load_lm_head_from_target (draft_vocab_size null and an untied head take the target's lm_head; llama_eagle3.py, "
        "speculative/eagle_worker.py): first in the 0.5.2 wheel, absent from 0.5.1 and 0.5.1.post3",
        runs=_runs("2026-12-01", "0.5.2"),
    ),
    Era(
        engine="sglang",
        name="0.5.3–0.5.11 midlayer",
        first="0.5.3",
        last="0.5.11",
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.5.3", "0.5.3.post3", "0.5.4", "0.5.4.post1", "0.5.4.post3", "0.5.5.post3", "0.5.8", "0.5.9", "0.5.10", "0.5.11"),
        dispatch=MIDLAYER_DISPATCH,
        classes={"LlamaForCausalLMEagle3": _midlayer_class("0.5.3–0.5.11", "bias", True, "0.5.3 … 0.5.11", pads=True)},
        begins="layers/linear.py zero-pads a weight narrower than its parameter (pad_or_narrow_weight, sgl-project/sglang PR #10112): "
        "first in the 0.5.3 wheel, absent from 0.5.2; the 0.5.4.post3 run pads (the table had this era start at 0.5.5 until that run)",
        runs=_runs("2026-12-01", "0.5.4.post3", "0.5.5.post3", "0.5.8", "0.5.9", "0.5.10", "0.5.11"),
        notes=("gate_up/down weights narrower than the parameter are zero-padded silently (linear.py pad_or_narrow_weight)",),
    ),
    Era(
        engine="sglang",
        name="0.5.12–0.5.16 layers",
        first="0.5.12",
        last="0.5.16",
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.5.12", "0.5.16"),
        dispatch=LAYERS_DISPATCH,
        classes={"LlamaForCausalLMEagle3": LAYERS_CLASS, MLA: KIMI_CLASS},
        begins="LlamaModel keeps nn.ModuleList `layers`; load_weights renames midlayer -> layers.0 (llama_eagle3.py; 0.5.11 run: midlayer, 0.5.12 run: layers)",
        runs=_runs("2026-12-01", "0.5.12", "0.5.16"),
        variants=frozenset({"fc_norm", "norm_output"}),
        notes=("midlayer.* and layers.N.* both load; multi-layer drafters supported; no input_norm (norm_before_fc) yet",),
    ),
    Era(
        engine="sglang",
        name="0.5.17+ layers",
        first="0.5.17",
        last=None,
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"),
        dispatch=LAYERS_DISPATCH,
        classes={"LlamaForCausalLMEagle3": LAYERS_CLASS_INPUT_NORM, MLA: KIMI_CLASS},
        begins="LlamaModel builds input_norm when norm_before_fc (llama_eagle3.py): first in the 0.5.17 wheel, absent from 0.5.16 "
        "(the table had this era start at 0.5.20 until the 0.5.19 run loaded input_norm)",
        runs=_runs("2026-12-01", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"),
        variants=frozenset({"fc_norm", "norm_output", "norm_before_fc"}),
        notes=("adds input_norm (norm_before_fc)",),
    ),
)


# --- targets that capture aux hidden states (set_eagle3_layers_to_capture in sglang/srt/models/*.py), and the first
# release that has it (read in every wheel of versions_read; a target's capture support is part of adding a release)
CAPTURE_SINCE: dict[str, str] = {
    **dict.fromkeys(["LlamaForCausalLM", "Phi3ForCausalLM", "InternLM3ForCausalLM"], "0.4.6"),
    **dict.fromkeys(["Llama4ForConditionalGeneration", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM"], "0.4.9"),
    **dict.fromkeys(["GptOssForCausalLM"], "0.5.1"),
    **dict.fromkeys(["Qwen2ForCausalLM", "Qwen2_5_VLForConditionalGeneration", "Qwen2MoeForCausalLM"], "0.5.2"),
    **dict.fromkeys(["ApertusForCausalLM"], "0.5.3"),
    **dict.fromkeys(
        ["DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "Glm4MoeForCausalLM", "MiniMaxM2ForCausalLM"], "0.5.5"
    ),
    **dict.fromkeys(["LongcatFlashForCausalLM", "MiMoV2FlashForCausalLM"], "0.5.8"),
    **dict.fromkeys(["BailingMoEForCausalLM", "ExaoneMoEForCausalLM", "Qwen3NextForCausalLM"], "0.5.9"),
    **dict.fromkeys(["KimiK25ForConditionalGeneration", "MindSporeForCausalLM"], "0.5.10"),
    **dict.fromkeys(["Qwen3VLForConditionalGeneration"], "0.5.11"),
    **dict.fromkeys(
        [
            "Gemma3ForCausalLM",
            "Gemma3ForConditionalGeneration",
            "Gemma4ForCausalLM",
            "Gemma4ForConditionalGeneration",
            "Qwen3_5ForCausalLM",
            "Glm4MoeLiteForCausalLM",
            "Glm5NextForConditionalGeneration",
        ],
        "0.5.12",
    ),
}
# read in the wheels: GptOss from 0.5.1, Apertus 0.5.3, BailingMoE/ExaoneMoE/Qwen3Next 0.5.9, MindSpore 0.5.10 and
# Qwen3-VL 0.5.11 define it in their model file (the release before does not); earlier tables said 0.5.2/0.5.5/0.5.12

# DeepSeek-family targets number explicit capture ids differently from 0.5.16 (sgl-project/sglang PR #25454)
DEEPSEEK_FAMILY = frozenset(
    {
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "KimiK25ForConditionalGeneration",
    }
)
CAPTURE_CITE = "sglang/srt/models/*.py set_eagle3_layers_to_capture, in every wheel read from 0.4.6.post5 on"
_CAPTURE = CaptureRule(
    first="0.4.6",
    last="0.5.4",
    # set_eagle3_layers_to_capture(layer_ids) stores val + 1 for each id and captures before layer i for i in range(N);
    # the ids come from the draft's eagle_config only (read in the wheels)
    ids_from=("eagle_config",),
    id_labels={"eagle_config": "eagle_config.eagle_aux_hidden_state_layer_ids", "default": "engine default [2, N//2, N-3]"},
    shift=1,
    boundaries="before-each-layer",
    cite=CAPTURE_CITE,
    unread_note="SGLang reads capture ids only from eagle_config; the top-level eagle_aux_hidden_state_layer_ids is ignored",
    unreachable_note="boundary {n} (after the last layer) cannot be captured by SGLang's loop: it is silently missing",
    supported_since=CAPTURE_SINCE,
    support_ok="{arch} captures aux states since SGLang {since}",
    support_later="{arch} gained set_eagle3_layers_to_capture only in SGLang {since}",
    support_never="{arch} has no set_eagle3_layers_to_capture in any SGLang release we read ({read})",
)
CAPTURE = (
    _CAPTURE,
    replace(
        _CAPTURE,
        first="0.5.5",
        last="0.5.10",
        # a no-arg set_eagle3_layers_to_capture() at CUDA-graph init replaces the draft's ids (fixed by #22836)
        resets_to_default="SGLang 0.5.5.post3–0.5.10 reset capture to the default layers at CUDA-graph init (no-arg call), "
        "ignoring the draft's ids (fixed by #22836)",
    ),
    replace(_CAPTURE, first="0.5.11", last="0.5.15"),
    replace(
        _CAPTURE,
        first="0.5.16",
        last=None,
        first_id_rule=DEEPSEEK_FAMILY,
        first_id_note="DeepSeek-family target on SGLang ≥ 0.5.16: +1 only when the first id is 1 (#25454)",
    ),
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


# --- DFlash: sglang/srt/models/dflash.py (DFlashDraftModel), read in the 0.5.11 … 0.5.23 wheels ---------------------
DFM = "sglang/srt/models/dflash.py"
DFU = "sglang/srt/speculative/dflash_utils.py"
DFLASH_FIELDS = (
    Field("H", ("hidden_size",), 4096),
    Field("L", ("num_hidden_layers",), 1),
    Field("nh", ("num_attention_heads",), 32),
    Field("nkv_raw", ("num_key_value_heads",), None),
    Field("hd_raw", ("head_dim",), None),
    Field("I", ("intermediate_size",), 0),
    Field("attention_bias", ("attention_bias",), False, kind="bool"),
    Field("n_ids", ("len:dflash_config.target_layer_ids", "len:target_layer_ids"), None),
    Field("max_id", ("max:dflash_config.target_layer_ids", "max:target_layer_ids"), None),
    Field("ntl", ("dflash_config.num_target_layers", "num_target_layers"), None),
    Field("sink", ("dflash_config.attention_sink_bias",), False, kind="bool"),
)
DFLASH_DERIVE = (
    Derive("nkv", "nkv_raw if nkv_raw is not None else nh"),
    Derive("hd", "hd_raw if hd_raw is not None else H // nh"),
    # fc reads one target state per id; without ids SGLang spreads one per draft layer over the target
    Derive("K", "n_ids if n_ids is not None else L"),
)
NO_MLP = Raise("I == 0", "ValueError: Invalid intermediate_size=0 for DFlash MLP.", f"{DFM} (DFlashMLP; every release read)")
# without target_layer_ids the drafter spreads one id per draft layer over num_target_layers (else its own layer
# count), which needs at least 4 layers when it has more than one (build_target_layer_ids)
NO_IDS_FEW_LAYERS = Raise(
    "n_ids is None and L > 1 and (ntl if ntl is not None else L) < 4",
    "ValueError: DFlash layer selection requires num_target_layers >= 4 (no target_layer_ids: one id per draft layer is "
    "spread over num_target_layers, else the draft's own layer count; give target_layer_ids or num_target_layers)",
    f"{DFU} build_target_layer_ids (0.5.11 :162-199; every release read)",
)


def _ids_out_of_range(when: str, bound: str, cite: str) -> Raise:
    return Raise(
        when,
        f"ValueError: DFLASH target_layer_ids contains an out-of-range layer id (checked against {bound} while the drafter is "
        "built; give num_target_layers, the target's layer count, in dflash_config)",
        cite,
    )


# What SGLang does with a DFLASH launch line, the same in every release read (0.5.11 server_args.py
# ServerArgs._handle_speculative_decoding; 0.5.19, 0.5.20, 0.5.23 arg_groups/speculative_hook.py _handle_dflash; the
# worker: speculative/dflash_worker.py @ 0.5.11, dflash_worker_v2.py @ 0.5.19+): --speculative-num-draft-tokens is the
# verify window, the drafter's block (anchor + block_size - 1 mask slots); without it SGLang reads block_size from the
# draft config (dflash_config.block_size, else the top-level block_size), else 16; one that differs from the config's
# block_size is only logged ("DFLASH block size mismatch") and the window the flag names is run.
DF_ARGS = "sglang/srt/server_args.py @ 0.5.11, arg_groups/speculative_hook.py _handle_dflash @ 0.5.19 … 0.5.23"
DF_WORKER = "sglang/srt/speculative/dflash_worker.py @ 0.5.11, dflash_worker_v2.py @ 0.5.19 … 0.5.23 (block size mismatch)"
DFLASH_LAUNCH = (
    LaunchCheck(
        "block_flag is not None and block_flag <= 0",
        "error",
        "ValueError: DFLASH requires --speculative-dflash-block-size to be positive, got {block_flag}.",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "block_flag is not None and draft_tokens is not None and block_flag != draft_tokens",
        "error",
        "ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they differ. "
        "For DFLASH they must match. (speculative_num_draft_tokens={draft_tokens}, speculative_dflash_block_size={block_flag})",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and steps != 1",
        "warning",
        "DFLASH only supports speculative_num_steps == 1; overriding speculative_num_steps={steps} to 1 (SGLang's own "
        "warning: the flag is an EAGLE setting, the DFlash block is --speculative-num-draft-tokens)",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "topk is not None and topk != 1",
        "warning",
        "DFLASH only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk={topk} to 1 (SGLang's own "
        "warning: a DFlash drafter proposes one chain)",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "window is not None and block is not None and 0 < window < block",
        "warning",
        "--speculative-num-draft-tokens {window} is below the drafter's block_size {block}: SGLang logs 'DFLASH block size "
        "mismatch' and runs a block of {window}, so each step accepts at most {window} tokens; accept lengths published "
        "for the drafter were measured with the whole block",
        f"{DF_ARGS}; {DF_WORKER}",
        code="D005",
    ),
    LaunchCheck(
        "window is not None and block is not None and window > block",
        "warning",
        "--speculative-num-draft-tokens {window} is above the drafter's block_size {block}: SGLang logs 'DFLASH block size "
        "mismatch' and runs a block of {window}, mask slots the drafter was never trained on; nothing fails, the slots "
        "past the block are rarely accepted and cost a wider verify",
        f"{DF_ARGS}; {DF_WORKER}",
        code="D005",
    ),
    LaunchCheck(
        "window is None and block is None",
        "warning",
        "no --speculative-num-draft-tokens and no block_size in the drafter's config: SGLang defaults the DFlash block to 16 "
        "('speculative_num_draft_tokens is not set; defaulting to 16 for DFLASH')",
        DF_ARGS,
        code="D005",
    ),
)


# DFlashDraftModel's grouped dynamic convolutions (sglang/srt/models/dflash.py DFlashGroupedConv, built around each
# layer's attention and MLP when dflash_config.conv_kernel_size is set; parsed by dflash_utils.py
# parse_dflash_draft_config): first in the 0.5.19 wheel, absent from 0.5.18; the same in 0.5.19, 0.5.20, 0.5.23.
# DFlash2DraftModel (0.5.19+) is DFlashDraftModel plus a CandidateSelector.
DFU_PARSE = f"{DFU} parse_dflash_draft_config @ 0.5.19, 0.5.20, 0.5.23"
CONV_FIELDS = (
    # dflash_cfg.get(..., 0) through _parse_optional_int: absent is 0 (no convolution)
    Field("taps", ("dflash_config.conv_kernel_size",), 0),
    Field("grp", ("dflash_config.conv_group_size",), 0),
)
CONV_DERIVE = (Derive("ngrp", "H // grp if grp else 0"),)
CONV_PARAMS = tuple(
    Param(name.format(conv=c), shape, when="taps", per_layer=True, role="decoder")
    for c in ("attention_conv", "mlp_conv")
    for name, shape in (
        # DFlashGroupedConv: base_kernel nn.Parameter [2, taps, H]; kernel_projection nn.Linear(H, 2*taps*H/group)
        ("layers.{{i}}.{conv}.base_kernel", ("2", "taps", "H")),
        ("layers.{{i}}.{conv}.kernel_projection.weight", ("2*taps*ngrp", "H")),
    )
)
CONV_RAISES = (
    Raise(
        "bool(taps) != bool(grp)",
        "ValueError: DFLASH grouped convolution needs conv_kernel_size and conv_group_size together.",
        DFU_PARSE,
    ),
    Raise(
        "taps and grp and H % grp",
        "ValueError: DFLASH conv_group_size must divide hidden_size (DFlashGroupedConv).",
        f"{DFM} DFlashGroupedConv.__init__ @ 0.5.19, 0.5.20, 0.5.23",
    ),
)
DFLASH2_FIELDS = (
    # dflash_cfg.get(..., 0) through _parse_optional_int: absent is 0 (no selector, which DFlash2DraftModel refuses)
    Field("rank", ("dflash_config.selector_rank",), 0),
    Field("top_k", ("dflash_config.selector_top_k",), 0),
    # CandidateSelector's codebooks are [config.vocab_size, rank]; transformers' Qwen3Config default when absent
    Field("V", ("vocab_size",), 151936),
)
DFLASH2_PARAMS = (
    # CandidateSelector: predecessor/successor codebooks [vocab_size, rank] (zeros until loaded), hidden_projection
    Param("candidate_selector.predecessor_codebook", ("V", "rank"), role="selector"),
    Param("candidate_selector.successor_codebook", ("V", "rank"), role="selector"),
    Param("candidate_selector.hidden_projection.weight", ("rank", "H"), role="selector"),
)
DFLASH2_RAISES = (
    Raise("bool(rank) != bool(top_k)", "ValueError: DFLASH selector needs rank and top_k together.", DFU_PARSE),
    Raise(
        "not rank",
        "ValueError: DFlash selector draft requires dflash_config.selector_rank.",
        f"{DFM} DFlash2DraftModel.__init__ @ 0.5.19, 0.5.20, 0.5.23",
    ),
)


def _sglang_dflash_class(
    versions: str,
    ids_check: Raise,
    renames: tuple = (),
    side_files: tuple[str, ...] = (),
    sink: bool = False,
    conv: bool = False,
    **extra,
) -> DraftClass:
    """SGLang's DFlashDraftModel: no embedding, head or vocab map of its own (the worker uses the target's), Qwen3
    layers reading the hidden size, fc [H, K·H] over the target states; unknown names are skipped silently.
    `conv`: the grouped dynamic convolutions built when dflash_config.conv_kernel_size is set (0.5.19+).
    `extra`: a subclass built on it (DFlash2DraftModel): its name, fields, derives, parameters and raises are added."""
    by_design = "SGLang's DFlash drafter has no {0}: the worker uses the target's (dflash.py module docstring)"
    return DraftClass(
        name=extra.pop("name", "DFlashDraftModel"),
        file=f"{DFM} @ {versions}",
        fields=DFLASH_FIELDS + (CONV_FIELDS if conv else ()) + extra.pop("fields", ()),
        derive=DFLASH_DERIVE + (CONV_DERIVE if conv else ()) + extra.pop("derive", ()),
        params=(CONV_PARAMS if conv else ())
        + extra.pop("params", ())
        + llama_decoder(
            "layers.{i}.",
            per_layer=True,
            hidden_norm_when="False",
            o_bias_when="attention_bias",
            qkv_bias_when="attention_bias",
            qkv_in="H",
        )
        + (
            Param("layers.{i}.self_attn.q_norm.weight", ("hd",), per_layer=True, role="decoder"),
            Param("layers.{i}.self_attn.k_norm.weight", ("hd",), per_layer=True, role="decoder"),
            Param("norm.weight", ("H",), role="norm"),
            Param("fc.weight", ("H", "K*H"), role="fc"),
            Param("hidden_norm.weight", ("H",), role="fc"),
            # MiMo's per-head sink bias (dflash_config.attention_sink_bias), built from 0.5.20; before, its tensors are
            # unknown names, skipped silently
            Param("layers.{i}.self_attn.attention_sink_bias", ("nh",), when="sink" if sink else "False", per_layer=True, role="decoder"),
        ),
        loader=(
            Drop("embed_tokens", why=by_design.format("embedding"), cite=f"{DFM} load_weights (unresolved names skipped)"),
            Drop("lm_head", why=by_design.format("head"), cite=f"{DFM} load_weights (unresolved names skipped)"),
            Drop("d2t", why="no vocab map: the target's head scores the full vocabulary", cite=f"{DFM} load_weights"),
            Drop("t2d", why="no vocab map: the target's head scores the full vocabulary", cite=f"{DFM} load_weights"),
            RenameRegex(pattern=r"^model\.", new="", cite=f"{DFM} load_weights (resolve_param_name strips a leading model.)"),
            *renames,
            *STACK_LLAMA,
        ),
        unknown="skip",
        unknown_message="{name}: no DFlashDraftModel parameter; skipped silently (sglang/srt/models/dflash.py load_weights: "
        "'Ignore unexpected weights')",
        missing="silent",
        raises=(NO_MLP, NO_IDS_FEW_LAYERS, ids_check) + (CONV_RAISES if conv else ()) + extra.pop("raises", ()),
        side_files=side_files,
        # sglang/srt/speculative/dflash_worker_v2.py _maybe_merge_trained_mask_embedding @ 0.5.20, 0.5.23
        mask_file_dict_only=bool(side_files),
        methods=("DFLASH",),  # --speculative-algorithm DFLASH (server_args / arg_groups/speculative_hook.py _handle_dflash)
        launch_checks=DFLASH_LAUNCH,
        **extra,
    )


ENCODER_RENAMES = (
    Rename(old="encoder.fc.", new="fc.", cite=f"{DFM} @ 0.5.19 load_weights (vendor aliases)"),
    Rename(old="encoder.output_norm_enc.", new="hidden_norm.", cite=f"{DFM} @ 0.5.19 load_weights (vendor aliases)"),
)
# group A builds fc from num_target_layers, else the DRAFT layer count, and validates the ids against it
IDS_A = _ids_out_of_range(
    "max_id is not None and max_id >= (ntl if ntl is not None else L)",
    "num_target_layers, else the draft's layer count",
    f"{DFM} @ 0.5.11 :277-285, {DFU} :306",
)
# group B: against num_target_layers, else max(ids) + 1 (never out of range)
IDS_B = _ids_out_of_range("max_id is not None and ntl is not None and max_id >= ntl", "num_target_layers", f"{DFM} @ 0.5.19 :612-620")
_SG_DF = {"DFlashDraftModel": "DFlashDraftModel"}
_SG_MUSE = {"MuseGlimmerAssistantModel": "DFlashDraftModel"}  # an empty subclass (alias) from 0.5.18
_SG_LAGUNA = {"DFlashLagunaForCausalLM": "dflash.py DFlashLagunaForCausalLM (g_proj gating, aux_hidden_norms)"}


def _sglang_dflash_dispatch(registry: dict[str, str]) -> Dispatch:
    return Dispatch(
        "sglang",
        registry,
        "DFlashDraftModel",
        cite=f"{DFM} EntryClass (SGLang dispatches on architectures[0]; nothing rewrites it for DFLASH)",
        unknown_message="ValueError: {arch!r} is no DFlash class of this SGLang (sglang/srt/models/dflash.py EntryClass)",
    )


FAMILY_RANGES = (
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.11",
        last="0.5.17",
        dispatch=_sglang_dflash_dispatch(_SG_DF),
        classes={"DFlashDraftModel": _sglang_dflash_class("0.5.11 … 0.5.17", IDS_A)},
        begins=f"{DFM} (DFlashDraftModel) and the DFLASH algorithm first ship in the 0.5.11 wheel, absent from 0.5.10",
        versions_read=("0.5.11", "0.5.12", "0.5.16", "0.5.17"),
        unmodelled_archs=_SG_LAGUNA,
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 20, "0.5.11", "0.5.12", "0.5.16"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.18",
        last="0.5.18",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE}),
        classes={"DFlashDraftModel": _sglang_dflash_class("0.5.18 … 0.5.19", IDS_B, ENCODER_RENAMES)},
        begins="fc is sized from num_target_layers else max(target_layer_ids) + 1, not the draft's layer count; the "
        "encoder.fc / encoder.output_norm_enc aliases and MuseGlimmerAssistantModel arrive: first in the 0.5.18 wheel, "
        "absent from 0.5.17's dflash.py (whose EntryClass, id check and load_weights are 0.5.16's)",
        versions_read=("0.5.18",),
        unmodelled_archs=_SG_LAGUNA,
    ),
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.19",
        last="0.5.19",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE}),
        classes={"DFlashDraftModel": _sglang_dflash_class("0.5.19", IDS_B, ENCODER_RENAMES, conv=True)},
        begins=f"{DFM} DFlashGroupedConv (per-layer attention_conv / mlp_conv when dflash_config.conv_kernel_size is set) and "
        "dflash_utils.py's conv_kernel_size / conv_group_size first ship in the 0.5.19 wheel, absent from 0.5.18",
        versions_read=("0.5.19",),
        unmodelled_archs=_SG_LAGUNA,
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 20, "0.5.19"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.20",
        last=None,
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE}),
        classes={
            "DFlashDraftModel": _sglang_dflash_class(
                "0.5.20 … 0.5.23", IDS_B, ENCODER_RENAMES, ("mask_embedding.pt",), sink=True, conv=True
            )
        },
        begins="sglang/srt/speculative/dflash_worker_v2.py _maybe_merge_trained_mask_embedding reads mask_embedding.pt from the "
        "draft's local directory (a Hub id is never resolved) into the target's mask row, and dflash.py builds a per-head "
        "attention_sink_bias when dflash_config.attention_sink_bias (MiMo): both first in the 0.5.20 wheel, absent from 0.5.19 "
        "(sgl-project/sglang #27924)",
        versions_read=("0.5.20", "0.5.21", "0.5.22", "0.5.23"),
        unmodelled_archs=_SG_LAGUNA,
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 20, "0.5.20", "0.5.21", "0.5.22", "0.5.23"),
    ),
)


# --- EAGLE-1/2 (--speculative-algorithm EAGLE): sglang/srt/models/llama_eagle.py LlamaForCausalLMEagle, read in all 19
# cached wheels (0.4.6.post5 … 0.5.23); loading goes through sglang/srt/models/llama.py LlamaForCausalLM.load_weights
LEA = "sglang/srt/models/llama_eagle.py"
# Qwen2ForCausalLMEagle: the same drafter over sglang/srt/models/qwen2.py's layers (QKVParallelLinear with bias=True,
# o_proj without), loaded per name by Qwen2ForCausalLM.load_weights; read at 0.4.6.post5, 0.4.8.post1, 0.4.9.post6 and
# the installed 0.5.x wheels (qwen2.py guards an unmatched fused name with `if name not in params_dict: continue` from
# 0.4.9.post6 on; 0.4.6.post5 and 0.4.8.post1 index it unguarded, after the .bias guard)
QEA = "sglang/srt/models/qwen2_eagle.py"
QWEN2 = "sglang/srt/models/qwen2.py"
QWEN2_EAGLE1_TEST = "tests/test_conformance_sglang_eagle1_qwen2.py"
EAGLE1_FIELDS = LLAMA_FIELDS + (Field("bias", ("bias",), False, kind="bool"),)
EAGLE1_PLAIN = (
    "SGLang builds the plain {arch} as the draft (a registered target class; no release renames it to LlamaForCausalLMEagle): "
    "every drafter name misses its parameters (logged as not found, fc.bias not even logged) and the draft runs at random "
    "initialisation; architectures must be LlamaForCausalLMEagle"
)
# --speculative-algorithm EAGLE3 on an EAGLE-1 drafter: the class is still LlamaForCausalLMEagle (the architecture
# picks it), but the EAGLE3 branch of the worker's start asks the draft model for the hot-token ids that only the EAGLE-3
# classes have (read in the 0.4.8.post1, 0.5.1.post3, 0.5.2, 0.5.11, 0.5.16, 0.5.19, 0.5.20, 0.5.23 wheels)
EAGLE1_AS_EAGLE3 = LaunchCheck(
    "method == 'EAGLE3'",
    "error",
    "SGLang's EAGLE3 worker start reads the draft model's hot-token ids (get_hot_token_id() on 0.4.8, hot_token_id from "
    "0.5.1), which LlamaForCausalLMEagle does not have: AttributeError before the server serves (and the target would "
    "capture three aux states for an fc that reads one)",
    "sglang/srt/speculative/eagle_worker.py @ 0.4.8.post1 … 0.5.11 (init: is_eagle3 branch), eagle_worker_v2.py @ 0.5.11 … "
    f"0.5.23 (init_lm_head); {LEA} (no hot_token_id)",
    code="L014",
)
TIED_EAGLE1 = Raise(
    "tie",
    "AttributeError in set_embed_and_head at worker start: with tie_word_embeddings lm_head is the embedding module, "
    "which the worker cannot replace by the target's head",
    f"{LEA} (lm_head = model.embed_tokens when tied); sglang/srt/models/llama.py set_embed_and_head (0.4.6, 0.5.23)",
)


def _eagle1_class(
    versions: str,
    stacked_keyerror: bool,
    name: str = "LlamaForCausalLMEagle",
    file: str = LEA,
    base: str = "sglang/srt/models/llama.py",
    qkv_bias: str = O_BIAS,
    o_bias: str = O_BIAS,
) -> DraftClass:
    """LlamaForCausalLMEagle: fc = nn.Linear(2H, H) (bias always built), Llama layers of which layer 0 has no
    input_layernorm, no final norm; the worker replaces embedding and head by the target's after loading.
    Qwen2ForCausalLMEagle (qwen2_eagle.py) is the same drafter over Qwen2's layers (`base`: the target class whose
    load_weights it calls per name; `qkv_bias` / `o_bias`: when those biases are built)."""
    return DraftClass(
        name=name,
        file=f"{file} @ {versions}",
        fields=EAGLE1_FIELDS,
        derive=LLAMA_DERIVE,
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("model.fc.weight", ("H", "2*H"), role="fc"),
            Param(
                "model.fc.bias",
                ("H",),
                role="fc",
                missing_small="True",
                missing_note="an nn.Linear bias nothing fills keeps its default initialisation U(±1/sqrt(2H))",
            ),
            Param("lm_head.weight", ("V", "H"), when="not tie", share="head", role="head"),
        )
        + llama_decoder(
            "model.layers.{i}.",
            per_layer=True,
            hidden_norm_when="False",
            o_bias_when=o_bias,
            qkv_bias_when=qkv_bias,
            qkv_in="H",
            input_norm_when="i > 0",
        ),
        loader=(
            Drop(
                "lm_head",
                why="names with lm_head are dropped: the worker uses the target's head",
                cite=f"{base} load_weights",
            ),
            Drop(
                "d2t",
                why="hot tokens come only from --speculative-token-map (d2t ignored with a warning)",
                cite=f"{base} load_weights",
            ),
            Drop("t2d", why="hot tokens come only from --speculative-token-map", cite=f"{base} load_weights"),
            Prefix("model.", unless="lm_head", cite=f"{file} load_weights (every name gets model.)"),
            *STACK_LLAMA,
        ),
        unknown="warn",
        unknown_message="{name}: not found in params_dict, skipped with a warning (" + base + " load_weights)",
        unknown_stacked="raise" if stacked_keyerror else "",
        unknown_stacked_message=STACKED_KEYERROR.replace("sglang/srt/models/llama.py", base),
        unknown_stacked_skips=STACKED_BIAS_SKIP if stacked_keyerror else (),
        missing="silent",
        raises=(TIED_EAGLE1,),
        share_embed="'target'",
        share_head="'target'",
        share_cite="sglang/srt/speculative/eagle_worker.py (non-EAGLE3 branch: draft.set_embed_and_head(target's), after loading)",
        # NEXTN is EAGLE's alias (server_args.py @ 0.4.8.post1 … 0.5.11, arg_groups/speculative_hook.py @ 0.5.23)
        methods=("EAGLE", "NEXTN"),
        launch_checks=(EAGLE1_AS_EAGLE3,),
    )


def _eagle1_dispatch(mistral: bool = False) -> Dispatch:
    """`mistral`: the release has mistral_eagle.py and mistral_large_3_eagle.py (0.5.11 on)."""
    more = {"MistralForCausalLMEagle": "MistralForCausalLMEagle", "MistralLarge3ForCausalLMEagle": "MistralLarge3ForCausalLMEagle"}
    return Dispatch(
        "sglang",
        {"LlamaForCausalLMEagle": "LlamaForCausalLMEagle", "Qwen2ForCausalLMEagle": "Qwen2ForCausalLMEagle"} | (more if mistral else {}),
        "LlamaForCausalLMEagle",
        cite=f"{LEA} and {QEA} EntryClass"
        + (" (and, from 0.5.11, sglang/srt/models/mistral_eagle.py, mistral_large_3_eagle.py)" if mistral else "")
        + "; sglang/srt/model_loader/utils.py get_model_architecture (architectures[0], no rewrite)",
        unknown_message=UNKNOWN_MSG,
        plain_classes=PLAIN,
        plain_message=EAGLE1_PLAIN,
    )


# --- Mistral EAGLE drafters (--speculative-algorithm EAGLE): mistral_eagle.py first in the 0.5.11 wheel (absent from
# 0.5.10, whose wheel already has mistral_large_3_eagle.py, identical to 0.5.11's); read in the 0.5.10, 0.5.11, 0.5.16,
# 0.5.19, 0.5.20 and 0.5.23 wheels. Both are EAGLE-1 shaped: fc = RowParallelLinear(2H, H, bias=False)
# over cat(embedding, the target's last hidden state), no aux states, no hot-token map; both load Mistral's native names
# through a `remapping` table of regexes (re.fullmatch; a name no regex matches is logged "Unrecognized weight: {name}.
# Skipping.").
# MistralForCausalLMEagle (mistral_eagle.py, "EAGLE draft model for GQA Mistral targets"): LlamaForCausalLMEagle with its
# model replaced by MistralEagleModel (ordinary llama.py LlamaDecoderLayer, so layer 0 has input_layernorm; a final norm
# it builds and loads but never applies). load_weights passes names starting with model. or lm_head. through unchanged
# and hands everything to llama.py LlamaForCausalLM.load_weights (no model. prefix, no lm_head drop). Same loader in
# every wheel read (0.5.20 and 0.5.23 change only the pipeline-group and residual plumbing).
MEA = "sglang/srt/models/mistral_eagle.py"
# MistralLarge3ForCausalLMEagle (mistral_large_3_eagle.py): MistralLarge3ForCausalLM (a DeepseekV3ForCausalLM: MLA
# attention, DeepseekV2DecoderLayer) with its model replaced by MistralLarge3EagleModel (fc before DeepseekV2Model's
# layers and final norm). Its remapping has no pass-through: tok_embeddings -> model.embed_tokens, output -> lm_head,
# and an HF-named (model.*) tensor is unrecognized. __init__ takes config keyword-only. Same loader in every wheel read
# (0.5.16 adds prefill context-parallel flags; 0.5.19 builds the body through DeepseekV2Model.__init__).
ML3EA = "sglang/srt/models/mistral_large_3_eagle.py"
ML3 = "sglang/srt/models/mistral_large_3.py"
DSV2 = "sglang/srt/models/deepseek_v2.py"
UNRECOGNIZED = "Unrecognized weight: {name}. Skipping. (logged as a warning and skipped: no regex of the class's remapping matches)"
# (pattern, replacement): MistralForCausalLMEagle.remapping, in its order
MISTRAL_EAGLE_REMAP = (
    (r"layers\.(\d+)\.attention_norm\.weight", r"model.layers.\1.input_layernorm.weight"),
    (r"layers\.(\d+)\.attention\.wq\.(\w+)", r"model.layers.\1.self_attn.q_proj.\2"),
    (r"layers\.(\d+)\.attention\.wk\.(\w+)", r"model.layers.\1.self_attn.k_proj.\2"),
    (r"layers\.(\d+)\.attention\.wv\.(\w+)", r"model.layers.\1.self_attn.v_proj.\2"),
    (r"layers\.(\d+)\.attention\.wo\.(\w+)", r"model.layers.\1.self_attn.o_proj.\2"),
    (r"layers\.(\d+)\.ffn_norm\.weight", r"model.layers.\1.post_attention_layernorm.weight"),
    (r"layers\.(\d+)\.feed_forward\.w1\.(\w+)", r"model.layers.\1.mlp.gate_proj.\2"),
    (r"layers\.(\d+)\.feed_forward\.w2\.(\w+)", r"model.layers.\1.mlp.down_proj.\2"),
    (r"layers\.(\d+)\.feed_forward\.w3\.(\w+)", r"model.layers.\1.mlp.up_proj.\2"),
    (r"norm\.weight", "model.norm.weight"),
    (r"eagle_linear\.weight", "model.fc.weight"),
    (r"eagle_linear\.qscale_act", "model.fc.input_scale"),
    (r"eagle_linear\.qscale_weight", "model.fc.weight_scale"),
)
# MistralLarge3ForCausalLM.remapping (attention and dense/MoE MLP names of the DeepSeek layout) | the eagle_linear rows
MISTRAL_LARGE3_REMAP = (
    (r"layers\.(\d+)\.attention_norm\.weight", r"model.layers.\1.input_layernorm.weight"),
    (r"layers\.(\d+)\.attention\.wq\.(\w+)", r"model.layers.\1.self_attn.q_proj.\2"),
    (r"layers\.(\d+)\.attention\.wq_a\.(\w+)", r"model.layers.\1.self_attn.q_a_proj.\2"),
    (r"layers\.(\d+)\.attention\.q_a_norm\.weight", r"model.layers.\1.self_attn.q_a_layernorm.weight"),
    (r"layers\.(\d+)\.attention\.wq_b\.(\w+)", r"model.layers.\1.self_attn.q_b_proj.\2"),
    (r"layers\.(\d+)\.attention\.wkv_a_with_mqa\.(\w+)", r"model.layers.\1.self_attn.kv_a_proj_with_mqa.\2"),
    (r"layers\.(\d+)\.attention\.kv_a_norm\.weight", r"model.layers.\1.self_attn.kv_a_layernorm.weight"),
    (r"layers\.(\d+)\.attention\.wkv_b\.(\w+)", r"model.layers.\1.self_attn.kv_b_proj.\2"),
    (r"layers\.(\d+)\.attention\.wo\.(\w+)", r"model.layers.\1.self_attn.o_proj.\2"),
    (r"layers\.(\d+)\.attention\.k_fake_quantizer\.qscale_act", r"model.layers.\1.self_attn.mla_attn.mla_attn.k_scale"),
    (r"layers\.(\d+)\.attention\.q_fake_quantizer\.qscale_act", r"model.layers.\1.self_attn.mla_attn.mla_attn.q_scale"),
    (r"layers\.(\d+)\.attention\.v_fake_quantizer\.qscale_act", r"model.layers.\1.self_attn.mla_attn.mla_attn.v_scale"),
    (r"layers\.(\d+)\.ffn_norm\.weight", r"model.layers.\1.post_attention_layernorm.weight"),
    (r"layers\.(\d+)\.feed_forward\.w1\.(\w+)", r"model.layers.\1.mlp.gate_proj.\2"),
    (r"layers\.(\d+)\.feed_forward\.w2\.(\w+)", r"model.layers.\1.mlp.down_proj.\2"),
    (r"layers\.(\d+)\.feed_forward\.w3\.(\w+)", r"model.layers.\1.mlp.up_proj.\2"),
    (r"layers\.(\d+)\.gate\.weight", r"model.layers.\1.mlp.gate.weight"),
    (r"layers\.(\d+)\.shared_experts\.w1\.(\w+)", r"model.layers.\1.mlp.shared_experts.gate_proj.\2"),
    (r"layers\.(\d+)\.shared_experts\.w2\.(\w+)", r"model.layers.\1.mlp.shared_experts.down_proj.\2"),
    (r"layers\.(\d+)\.shared_experts\.w3\.(\w+)", r"model.layers.\1.mlp.shared_experts.up_proj.\2"),
    (r"layers\.(\d+)\.experts\.(\d+)\.w1\.(\w+)", r"model.layers.\1.mlp.experts.\2.gate_proj.\3"),
    (r"layers\.(\d+)\.experts\.(\d+)\.w2\.(\w+)", r"model.layers.\1.mlp.experts.\2.down_proj.\3"),
    (r"layers\.(\d+)\.experts\.(\d+)\.w3\.(\w+)", r"model.layers.\1.mlp.experts.\2.up_proj.\3"),
    (r"layers\.(\d+)\.router_biases", r"model.layers.\1.mlp.gate.e_score_correction_bias"),
    (r"norm\.weight", "model.norm.weight"),
    (r"tok_embeddings\.weight", "model.embed_tokens.weight"),
    (r"output\.weight", "lm_head.weight"),
    (r"eagle_linear\.weight", "model.fc.weight"),
    (r"eagle_linear\.qscale_act", "model.fc.input_scale"),
    (r"eagle_linear\.qscale_weight", "model.fc.weight_scale"),
)


def _remap_rows(table: tuple[tuple[str, str], ...], cite: str) -> tuple:
    """A remapping table as loader rows: each regex anchored (re.fullmatch), the native .qscale_* suffixes renamed."""
    return tuple(RenameRegex(pattern=f"^{k}$", new=v, cite=cite) for k, v in table) + (
        RenameRegex(pattern=r"^(layers\..*|model\.layers\..*)\.qscale_act$", new=r"\1.input_scale", cite=cite),
        RenameRegex(pattern=r"^(layers\..*|model\.layers\..*)\.qscale_weight$", new=r"\1.weight_scale", cite=cite),
    )


def _mistral_eagle_class(versions: str) -> DraftClass:
    return DraftClass(
        name="MistralForCausalLMEagle",
        file=f"{MEA} @ {versions}",
        fields=EAGLE1_FIELDS,
        derive=LLAMA_DERIVE,
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("model.fc.weight", ("H", "2*H"), role="fc"),
            Param(
                "model.norm.weight",
                ("H",),
                role="norm",
                missing_ok="True",
                missing_note="MistralEagleModel builds and loads a final norm its forward never applies",
            ),
            # LlamaForCausalLMEagle.__init__ builds lm_head before self.model is replaced: tied, it is the discarded
            # model's embedding, a parameter of its own
            Param("lm_head.weight", ("V", "H"), share="head", role="head"),
        )
        + llama_decoder(
            "model.layers.{i}.",
            per_layer=True,
            hidden_norm_when="False",
            o_bias_when=O_BIAS,
            qkv_bias_when=O_BIAS,
            qkv_in="H",
            input_norm_when="True",
        ),
        loader=_remap_rows(MISTRAL_EAGLE_REMAP, f"{MEA} remapping / _remap_mistral_to_llama")
        + (
            SkipUnless(
                r"^(model|lm_head)\.",
                why="a name neither model.*/lm_head.* nor matched by the remapping: " + UNRECOGNIZED,
                cite=f"{MEA} _remap_mistral_to_llama",
            ),
            Drop(
                "lm_head.weight",
                why="tied: llama.py load_weights skips lm_head.weight",
                cite="sglang/srt/models/llama.py load_weights",
                when="tie",
            ),
            *STACK_LLAMA,
        ),
        unknown="warn",
        unknown_message="{name}: not found in params_dict, skipped with a warning (sglang/srt/models/llama.py load_weights)",
        missing="silent",
        share_embed="'target'",
        share_head="'target'",
        # lm_head and model.embed_tokens are distinct modules here even when tied, so LlamaForCausalLMEagle's tied
        # AttributeError in set_embed_and_head (TIED_EAGLE1) does not arise
        share_cite="sglang/srt/speculative/eagle_worker.py (non-EAGLE3 branch: draft.set_embed_and_head(target's), after loading)",
        notes=(
            "Mistral's native names (eagle_linear, layers.N.attention.wq, feed_forward.w1, attention_norm) are renamed; "
            "HF names pass only with the model. prefix; tok_embeddings and output are not read (shared from the target)",
        ),
        methods=("EAGLE", "NEXTN"),
        launch_checks=(EAGLE1_AS_EAGLE3,),
    )


MLA_EAGLE1_FIELDS = EAGLE1_FIELDS + (
    Field("q_lora", ("q_lora_rank",), None),
    Field("kv_lora", ("kv_lora_rank",), 512),
    Field("nope", ("qk_nope_head_dim",), 128),
    Field("rope", ("qk_rope_head_dim",), 64),
    Field("vhd", ("v_head_dim",), 128),
)


def _mistral_large3_eagle_class(versions: str) -> DraftClass:
    """Dense DeepseekV2 decoder layers (a layer SGLang makes sparse, layer_id >= first_k_dense_replace with routed
    experts, is not modelled: its MoE parameters are absent from these rows)."""
    L = "model.layers.{i}."
    return DraftClass(
        name="MistralLarge3ForCausalLMEagle",
        file=f"{ML3EA} @ {versions}",
        fields=MLA_EAGLE1_FIELDS,
        derive=LLAMA_DERIVE,
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("model.fc.weight", ("H", "2*H"), role="fc"),
            Param(L + "self_attn.q_proj.weight", ("nh*(nope+rope)", "H"), when="not q_lora", per_layer=True, role="decoder"),
            Param(
                L + "self_attn.fused_qkv_a_proj_with_mqa.weight",
                shards=(("q_a", ("q_lora", "H")), ("kv_a", ("kv_lora+rope", "H"))),
                when="q_lora",
                per_layer=True,
                role="decoder",
            ),
            Param(L + "self_attn.q_a_layernorm.weight", ("q_lora",), when="q_lora", per_layer=True, role="decoder"),
            Param(L + "self_attn.q_b_proj.weight", ("nh*(nope+rope)", "q_lora"), when="q_lora", per_layer=True, role="decoder"),
            Param(L + "self_attn.kv_a_proj_with_mqa.weight", ("kv_lora+rope", "H"), when="not q_lora", per_layer=True, role="decoder"),
            Param(L + "self_attn.kv_a_layernorm.weight", ("kv_lora",), per_layer=True, role="decoder"),
            Param(L + "self_attn.kv_b_proj.weight", ("nh*(nope+vhd)", "kv_lora"), per_layer=True, role="decoder"),
            Param(L + "self_attn.o_proj.weight", ("H", "nh*vhd"), per_layer=True, role="decoder"),
            Param(L + "mlp.gate_up_proj.weight", shards=(("0", ("I", "H")), ("1", ("I", "H"))), per_layer=True, role="decoder"),
            Param(L + "mlp.down_proj.weight", ("H", "I"), per_layer=True, role="decoder"),
            Param(L + "input_layernorm.weight", ("H",), per_layer=True, role="decoder"),
            Param(L + "post_attention_layernorm.weight", ("H",), per_layer=True, role="decoder"),
            Param("model.norm.weight", ("H",), role="norm"),
            # built by DeepseekV2ForCausalLM.__init__ before self.model is replaced (tied: the discarded embedding)
            Param("lm_head.weight", ("V", "H"), share="head", role="head"),
        ),
        loader=(
            SkipUnless(
                "^(?:" + "|".join(k for k, _v in MISTRAL_LARGE3_REMAP) + ")$",
                why="no regex of the remapping matches (HF model.* names included): " + UNRECOGNIZED,
                cite=f"{ML3} _iterable_remap_mistral_to_ds",
            ),
        )
        + _remap_rows(MISTRAL_LARGE3_REMAP, f"{ML3EA} remapping ({ML3} MistralLarge3ForCausalLM.remapping | eagle_linear)")
        + (
            Stack(".gate_proj", fused=".gate_up_proj", shard="0", cite=f"{DSV2} load_weights"),
            Stack(".up_proj", fused=".gate_up_proj", shard="1", cite=f"{DSV2} load_weights"),
            Stack(
                ".q_a_proj",
                fused=".fused_qkv_a_proj_with_mqa",
                shard="q_a",
                when="q_lora",
                cite=f"{DSV2} load_weights (cached, then concatenated)",
            ),
            Stack(".kv_a_proj_with_mqa", fused=".fused_qkv_a_proj_with_mqa", shard="kv_a", when="q_lora"),
        ),
        unknown="warn",
        unknown_message="{name}: no such parameter, skipped (" + DSV2 + " load_weights)",
        missing="silent",
        share_embed="'target'",
        share_head="'target'",
        share_cite="sglang/srt/speculative/eagle_worker.py (non-EAGLE3 branch: draft.set_embed_and_head(target's), after loading)",
        notes=(
            "MLA attention (DeepSeek-V3 layout); Mistral's native names only, tok_embeddings/output renamed and loaded, then replaced by the target's",
        ),
        methods=("EAGLE", "NEXTN"),
        # deepseek_v2.py / mistral_large_3*.py have no hot_token_id either (0.5.11, 0.5.23 wheels)
        launch_checks=(
            replace(
                EAGLE1_AS_EAGLE3,
                message=EAGLE1_AS_EAGLE3.message.replace("LlamaForCausalLMEagle", "MistralLarge3ForCausalLMEagle"),
                cite=EAGLE1_AS_EAGLE3.cite.replace(f"{LEA} (no hot_token_id)", f"{ML3EA}, {DSV2} (no hot_token_id)"),
            ),
        ),
    )


MISTRAL_EAGLE1_TEST = "tests/test_conformance_sglang_eagle1_mistral.py"
# 13 cases (9 MistralForCausalLMEagle, 4 MistralLarge3ForCausalLMEagle), 12 agreed on each release: the q-LoRA case
# differs only in the shard id recorded for the concatenated q_a/kv_a load (a strict xfail in the test)
MISTRAL_EAGLE1_RUNS = tuple(
    Run(release=v, date="2026-12-02", test=MISTRAL_EAGLE1_TEST, cases=13, agreed=12)
    for v in ("0.5.11", "0.5.16", "0.5.19", "0.5.20", "0.5.23")
)


# every cached wheel from 0.4.9.post6 on: read, and run by tests/test_conformance_sglang_eagle1.py
EAGLE1_READ = (
    "0.4.9.post6",
    "0.5.1.post3",
    "0.5.2",
    "0.5.4.post3",
    "0.5.5.post3",
    "0.5.8",
    "0.5.9",
    "0.5.10",
    "0.5.11",
    "0.5.12",
    "0.5.16",
    "0.5.19",
    "0.5.20",
    "0.5.21",
    "0.5.22",
    "0.5.23",
)


EAGLE1_RANGES = (
    FamilyRange(
        engine="sglang",
        family="eagle",
        first="0.4.6",
        last="0.4.8",
        dispatch=_eagle1_dispatch(),
        classes={
            "LlamaForCausalLMEagle": _eagle1_class("0.4.6.post5 … 0.4.8.post1", stacked_keyerror=True),
            "Qwen2ForCausalLMEagle": _eagle1_class(
                "0.4.6.post5 … 0.4.8.post1", True, "Qwen2ForCausalLMEagle", QEA, QWEN2, qkv_bias="True", o_bias="False"
            ),
        },
        begins="llama_eagle.py as read in the 0.4.6.post5 wheel (the oldest cached); llama.py load_weights indexes params_dict "
        "with an unmatched q/k/v/gate/up name unguarded (KeyError)",
        versions_read=("0.4.6.post5", "0.4.7.post1", "0.4.8.post1"),
        runs=all_agreed("tests/test_conformance_sglang_eagle1.py", "2026-12-01", 9, "0.4.6.post5", "0.4.7.post1", "0.4.8.post1")
        + all_agreed(QWEN2_EAGLE1_TEST, "2026-12-02", 10, "0.4.8.post1"),
    ),
    FamilyRange(
        engine="sglang",
        family="eagle",
        first="0.4.9",
        last="0.5.10",
        dispatch=_eagle1_dispatch(),
        classes={
            "LlamaForCausalLMEagle": _eagle1_class("0.4.9.post6 … 0.5.23", stacked_keyerror=False),
            "Qwen2ForCausalLMEagle": _eagle1_class(
                "0.4.9.post6 … 0.5.23", False, "Qwen2ForCausalLMEagle", QEA, QWEN2, qkv_bias="True", o_bias="False"
            ),
        },
        begins="sglang/srt/models/llama.py load_weights skips an unmatched q/k/v/gate/up name with a warning "
        "(if name not in params_dict: continue): first in the 0.4.9.post6 wheel; llama_eagle.py changes after only refactor",
        versions_read=tuple(v for v in EAGLE1_READ if in_release_range(v, "0.4.9", "0.5.10")),
        # the 0.5.10 wheel already has mistral_large_3_eagle.py (identical to 0.5.11's, with mistral_large_3.py); the
        # releases before it were not read for the class: check refuses the architecture here instead of guessing
        unmodelled_archs={"MistralLarge3ForCausalLMEagle": f"{ML3EA} @ 0.5.10 (same file as 0.5.11's; earlier wheels not read for it)"},
        runs=all_agreed(
            "tests/test_conformance_sglang_eagle1.py", "2026-12-01", 9, *(v for v in EAGLE1_READ if in_release_range(v, "0.4.9", "0.5.10"))
        )
        + all_agreed(QWEN2_EAGLE1_TEST, "2026-12-02", 10, "0.5.1.post3", "0.5.2"),
    ),
    FamilyRange(
        engine="sglang",
        family="eagle",
        first="0.5.11",
        last=None,
        dispatch=_eagle1_dispatch(mistral=True),
        classes={
            "LlamaForCausalLMEagle": _eagle1_class("0.4.9.post6 … 0.5.23", stacked_keyerror=False),
            "Qwen2ForCausalLMEagle": _eagle1_class(
                "0.4.9.post6 … 0.5.23", False, "Qwen2ForCausalLMEagle", QEA, QWEN2, qkv_bias="True", o_bias="False"
            ),
            "MistralForCausalLMEagle": _mistral_eagle_class("0.5.11 … 0.5.23"),
            "MistralLarge3ForCausalLMEagle": _mistral_large3_eagle_class("0.5.11 … 0.5.23"),
        },
        begins=f"{MEA} (MistralForCausalLMEagle): first in the 0.5.11 wheel, absent from 0.5.10 (whose {ML3EA} is "
        "0.5.11's); the Llama and Qwen2 EAGLE-1 classes are unchanged across the boundary",
        versions_read=tuple(v for v in EAGLE1_READ if in_release_range(v, "0.5.11", None)),
        runs=all_agreed(
            "tests/test_conformance_sglang_eagle1.py", "2026-12-01", 9, *(v for v in EAGLE1_READ if in_release_range(v, "0.5.11", None))
        )
        + all_agreed(QWEN2_EAGLE1_TEST, "2026-12-02", 10, "0.5.11", "0.5.16", "0.5.19", "0.5.20", "0.5.23")
        + MISTRAL_EAGLE1_RUNS,
    ),
)
FAMILY_RANGES += EAGLE1_RANGES

# --- DFlash2: sglang/srt/models/dflash.py DFlash2DraftModel(DFlashDraftModel), "Reuses the DFLASH speculative worker"
# (--speculative-algorithm DFLASH; dflash_worker_v2.py takes draft_model.candidate_selector; the only worker, so no
# runner choice). Its loader is DFlashDraftModel.load_weights unchanged (selector names land, unknown names are skipped
# silently); lm_head is None (the worker points it at the target's head). Read in the 0.5.19, 0.5.20 and 0.5.23 wheels:
# the class and CandidateSelector's parameters are the same in all three; only compute_candidates' top-k code moves.
_SG_DF2 = {"DFlash2DraftModel": "DFlash2DraftModel"}
# empty subclasses (aliases) of DFlash2DraftModel in the 0.5.23 EntryClass, absent from 0.5.20's
_SG_DF2_ALIASES = {"MiniMaxDFlash2DraftModel": "DFlash2DraftModel", "DFlash2BeamDraftModel": "DFlash2DraftModel"}


def _sglang_dflash2_class(
    versions: str, ids_check: Raise, renames: tuple = (), side_files: tuple[str, ...] = (), sink: bool = False
) -> DraftClass:
    return _sglang_dflash_class(
        versions,
        ids_check,
        renames,
        side_files,
        sink,
        conv=True,
        name="DFlash2DraftModel",
        fields=DFLASH2_FIELDS,
        params=DFLASH2_PARAMS,
        raises=DFLASH2_RAISES,
    )


_DF2_BEGINS = (
    f"{DFM} DFlash2DraftModel (DFlashDraftModel + CandidateSelector, 'Reuses the DFLASH speculative worker': served with "
    "--speculative-algorithm DFLASH) and its EntryClass entry first ship in the 0.5.19 wheel, absent from 0.5.18"
)
FAMILY_RANGES += (
    FamilyRange(
        engine="sglang",
        family="dflash2",
        first="0.5.19",
        last="0.5.19",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE, **_SG_DF2}),
        classes={
            "DFlash2DraftModel": _sglang_dflash2_class("0.5.19", IDS_B, ENCODER_RENAMES),
            "DFlashDraftModel": _sglang_dflash_class("0.5.19", IDS_B, ENCODER_RENAMES, conv=True),
        },
        begins=_DF2_BEGINS,
        versions_read=("0.5.18", "0.5.19"),
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 7, "0.5.19"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash2",
        first="0.5.20",
        last="0.5.22",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE, **_SG_DF2}),
        classes={
            "DFlash2DraftModel": _sglang_dflash2_class("0.5.20", IDS_B, ENCODER_RENAMES, ("mask_embedding.pt",), sink=True),
            "DFlashDraftModel": _sglang_dflash_class("0.5.20", IDS_B, ENCODER_RENAMES, ("mask_embedding.pt",), sink=True, conv=True),
        },
        begins="DFlashDraftModel's 0.5.20 changes (mask_embedding.pt merged by the worker, MiMo's attention_sink_bias), "
        "which DFlash2DraftModel inherits; approximate at the end (0.5.21 and 0.5.22 not read for DFlash2's aliases)",
        versions_read=("0.5.20",),
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 7, "0.5.20"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash2",
        first="0.5.23",
        last=None,
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE, **_SG_DF2, **_SG_DF2_ALIASES}),
        classes={
            "DFlash2DraftModel": _sglang_dflash2_class("0.5.23", IDS_B, ENCODER_RENAMES, ("mask_embedding.pt",), sink=True),
            "DFlashDraftModel": _sglang_dflash_class("0.5.23", IDS_B, ENCODER_RENAMES, ("mask_embedding.pt",), sink=True, conv=True),
        },
        begins=f"{DFM} EntryClass @ 0.5.23 adds MiniMaxDFlash2DraftModel and DFlash2BeamDraftModel (empty subclasses of "
        "DFlash2DraftModel); approximate at the start (0.5.21 and 0.5.22 not read)",
        versions_read=("0.5.23",),
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 7, "0.5.23"),
    ),
)

# --- DSpark: sglang/srt/models/dspark.py, --speculative-algorithm DSPARK (its own worker, speculative/dspark_components/
# dspark_worker_v2.py DSparkWorkerV2). Qwen3DSparkModel (0.5.16+), DSparkDraftModel (0.5.17+) and LingDSparkModel (0.5.19+)
# are one class (DSparkDraftMixin over that release's DFlashDraftModel; the named subclasses are empty): DFlash's
# backbone and loader plus a Markov head (markov_head_type vanilla: markov_w1 Embedding [V, rank], markov_w2 Linear
# [V, rank]; gated adds gate_proj [rank, H + rank]; rnn adds joint_proj [3·rank, 2·rank + H]) and a confidence head
# built only when SGLANG_RAGGED_VERIFY_MODE is not "static" (its default, environ.py @ 0.5.16, 0.5.20: not built;
# modelled here as the default). load_weights skips lm_head. / rotary_emb. / embed_tokens. (0.5.16-0.5.18: as written;
# 0.5.19+: after stripping model., unless a Nemotron-3.5 draft: the same names reach no parameter either way, DFlash's
# loader skips them), skips confidence_head.* when the head is not built, raises on a markov_head.* name (as written,
# unprefixed) the head lacks, and hands everything else to DFlashDraftModel.load_weights. parse_dspark_draft_config
# (speculative/dspark_components/dspark_config.py, the same checks 0.5.16-0.5.23) runs in the constructor. What
# differs between releases is the DFlash backbone each one inherits (the dflash ranges above: ids checked against the
# draft's layer count through 0.5.17, encoder.* aliases from 0.5.18, grouped convolutions from 0.5.19, MiMo's sink
# bias from 0.5.20) and the EntryClass names. The worker shares the target's embedding and head (attach_shared_modules)
# and embeds the mask token with the target's embedding: no release reads mask_embedding.pt for DSpark (the side file
# is merged by dflash_worker_v2.py only, the DFLASH worker; no file of speculative/dspark_components names it, 0.5.16-0.5.23).
DSM = "sglang/srt/models/dspark.py"
DSC = "sglang/srt/speculative/dspark_components/dspark_config.py"
DSW = "sglang/srt/speculative/dspark_components/dspark_worker_v2.py"
# Two readers of the head settings, both lower-casing markov_head_type before comparing it (str(value).lower()):
# parse_dspark_draft_config (the constructor's first call) takes dspark_markov_head_type, else dspark_config's /
# dflash_config's markov_head_type, else the top level's, and refuses a positive rank without one unless a dspark_*
# prefixed key is set; build_markov_head builds the head from the top-level markov_head_type (getattr, default 'vanilla')
# and markov_rank (default 0). 'Vanilla' or 'GATED' pass both (dspark_config.py and dspark.py @ 0.5.16, 0.5.19, 0.5.20,
# 0.5.23, read).
DSPARK_SG_FIELDS = (
    Field("rank", ("markov_rank",), 0),  # build_markov_head's
    Field(
        "rank_cfg", ("dspark_markov_rank", "dspark_config.markov_rank", "dflash_config.markov_rank", "markov_rank"), 0
    ),  # parse_dspark_draft_config's
    Field(
        "mht",
        ("dspark_markov_head_type", "dspark_config.markov_head_type", "dflash_config.markov_head_type", "markov_head_type"),
        None,
        kind="any",
    ),  # parse_dspark_draft_config's
    Field("mht_built", ("markov_head_type",), "vanilla", kind="any"),  # build_markov_head's
    # uses_prefixed: any of these set lets parse_dspark_draft_config accept a positive rank without a head type
    Field("prefixed", ("dspark_block_size", "dspark_markov_rank", "dspark_noise_token_id", "dspark_target_layer_ids"), None, kind="any"),
)
DSPARK_SG_DERIVE = (
    Derive("mht_l", "None if mht is None else lower(mht)"),
    Derive("head", "lower(mht_built)"),
)
_NO_RANK = "markov_rank <= 0: the class is never built (ValueError), nothing is loaded"
_SG_HEADS = "('vanilla', 'gated', 'rnn')"
DSPARK_SG_PARAMS = (
    Param("markov_head.markov_w1.weight", ("V", "rank"), role="markov head", missing_ok="rank <= 0", missing_note=_NO_RANK),
    Param("markov_head.markov_w2.weight", ("V", "rank"), role="markov head", missing_ok="rank <= 0", missing_note=_NO_RANK),
    Param("markov_head.gate_proj.weight", ("rank", "H + rank"), when="head == 'gated'", role="markov head"),
    Param("markov_head.gate_proj.bias", ("rank",), when="head == 'gated'", role="markov head"),
    Param("markov_head.joint_proj.weight", ("3*rank", "2*rank + H"), when="head == 'rnn'", role="markov head"),
    Param("markov_head.joint_proj.bias", ("3*rank",), when="head == 'rnn'", role="markov head"),
)
DSPARK_SG_RAISES = (
    Raise(
        "rank_cfg > 0 and mht is None and prefixed is None",
        "ValueError: DSpark requires markov_head_type when markov_rank > 0, got None.",
        f"{DSC} parse_dspark_draft_config @ 0.5.16, 0.5.19, 0.5.23 (called by DSparkDraftMixin.__init__)",
    ),
    Raise(
        "rank_cfg <= 0 or rank <= 0",
        "ValueError: DSpark draft requires markov_rank > 0 (the Markov head is the core of the semi-AR draft)",
        f"{DSM} DSparkDraftMixin.__init__ / build_markov_head @ 0.5.16 … 0.5.23",
    ),
    Raise(
        f"(mht_l is not None and mht_l not in {_SG_HEADS}) or (rank > 0 and head not in {_SG_HEADS})",
        "ValueError: Unsupported DSpark markov_head_type (SGLang lower-cases the value first: vanilla, gated and rnn are "
        "accepted in any case)",
        f"{DSC} parse_dspark_draft_config, {DSM} build_markov_head @ 0.5.16 … 0.5.23 (str(markov_head_type).lower())",
    ),
)

# What SGLang does with a DSPARK launch line (sglang/srt/arg_groups/speculative_hook.py _handle_dspark; the gamma and
# window logic is the same in every release read, 0.5.16 … 0.5.23, only its device/dp/pp checks move): gamma, the
# positions one step drafts, is --speculative-dspark-block-size, else the draft config's block (dspark_block_size, else
# dflash_config.block_size, else block_size: dspark_config.py parse_dspark_draft_config), else 7 when
# --speculative-num-draft-tokens is not given either; the verify window --speculative-num-draft-tokens must be
# gamma + 1 and is set to it when absent. The worker then takes gamma = window - 1 and only logs a config block that
# differs ("DSpark gamma mismatch", dspark_config.py resolve_runtime_config).
DS_ARGS = "sglang/srt/arg_groups/speculative_hook.py _handle_dspark @ 0.5.16 … 0.5.23"
DSPARK_SG_LAUNCH = (
    LaunchCheck(
        "gamma_flag is not None and gamma_flag <= 0",
        "error",
        "ValueError: DSpark requires --speculative-dspark-block-size to be positive, got {gamma_flag}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is not None and gamma_flag > 0 and draft_tokens is not None and draft_tokens != gamma_flag + 1",
        "error",
        "ValueError: DSpark speculative_num_draft_tokens must equal gamma + 1 (gamma={gamma_flag}, from "
        "--speculative-dspark-block-size), but got speculative_num_draft_tokens={draft_tokens}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is None and block is not None and draft_tokens is not None and draft_tokens != block + 1",
        "error",
        "ValueError: DSpark speculative_num_draft_tokens must equal gamma + 1 (gamma={block}, the drafter's block_size), "
        "but got speculative_num_draft_tokens={draft_tokens}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is None and block is None and draft_tokens is not None and draft_tokens < 2",
        "error",
        "ValueError: DSpark speculative_num_draft_tokens must be >= 2 (= gamma + 1), got {draft_tokens}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and steps != 1",
        "warning",
        "DSpark only supports speculative_num_steps == 1; overriding speculative_num_steps={steps} to 1 (SGLang's own "
        "warning: an EAGLE setting; a DSpark step drafts gamma positions in one block)",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "topk is not None and topk != 1",
        "warning",
        "DSpark only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk={topk} to 1 (SGLang's own "
        "warning: a DSpark drafter proposes one chain)",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "block_flag is not None",
        "warning",
        "--speculative-dflash-block-size is DFLASH's flag: _handle_dspark never reads it (DSpark's block is "
        "--speculative-dspark-block-size, gamma, with --speculative-num-draft-tokens = gamma + 1)",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is not None and gamma_flag > 0 and block is not None and gamma_flag != block",
        "warning",
        "--speculative-dspark-block-size {gamma_flag} is not the drafter's block_size {block}: SGLang drafts {gamma_flag} "
        "positions per step and only logs 'DSpark gamma mismatch'; accept lengths published for the drafter were "
        "measured with its trained block",
        f"{DS_ARGS}; {DSC} resolve_runtime_config @ 0.5.16 … 0.5.23",
        code="D005",
    ),
    LaunchCheck(
        "gamma_flag is None and block is None and draft_tokens is None",
        "warning",
        "no --speculative-dspark-block-size, no --speculative-num-draft-tokens and no block_size in the drafter's config: "
        "SGLang defaults DSpark's gamma to 7 ('DSpark gamma is not set; defaulting to 7'), whatever block the drafter "
        "was trained on",
        f"{DS_ARGS}; {DSC} DEFAULT_DSPARK_GAMMA",
        code="D005",
    ),
)
# tests/test_conformance_sglang_dspark_launch.py: _handle_dspark and resolve_runtime_config of each release, run on the
# launch settings of its matrix, against check --launch
DSPARK_SG_LAUNCH_RUNS = all_agreed(
    "tests/test_conformance_sglang_dspark_launch.py", "2026-12-02", 12, "0.5.16", "0.5.19", "0.5.20", "0.5.23"
)


def _sglang_dspark_class(name: str, versions: str, dflash_versions: str, ids_check: Raise, renames: tuple = (), **dflash) -> DraftClass:
    """`name` as SGLang `versions` builds it: DSparkDraftMixin over the DFlashDraftModel of `dflash_versions` (its ids
    check, renames, `sink`/`conv`), with no side file (the DSpark worker reads none)."""
    cite = f"{DSM} @ {versions} DSparkDraftMixin.load_weights"
    base = _sglang_dflash_class(
        dflash_versions,
        ids_check,
        renames,
        (),
        name=name,
        fields=DSPARK_SG_FIELDS,
        derive=DSPARK_SG_DERIVE,
        params=DSPARK_SG_PARAMS,
        raises=DSPARK_SG_RAISES,
        **dflash,
    )
    return replace(
        base,
        file=f"{DSM} @ {versions} (DSparkDraftMixin over {DFM} @ {dflash_versions} DFlashDraftModel)",
        fields=tuple(f for f in base.fields if f.name not in ("V",)) + (Field("V", ("vocab_size",), 0),),
        loader=(
            Drop("rotary_emb.", why="DSpark's load_weights skips rotary_emb.* (_DSPARK_SKIPPED_WEIGHT_PREFIXES)", cite=cite),
            Drop(
                "confidence_head.",
                why="the confidence head is not built under SGLANG_RAGGED_VERIFY_MODE=static (the default): its names are skipped",
                cite=f"{DSM} @ {versions} build_confidence_head",
            ),
        )
        + base.loader,
        unknown_under="markov_head.",
        unknown_under_message="ValueError: DSpark unexpected markov weight {name!r} not found in model parameters (known "
        "markov params require the config's markov_head_type head)",
        methods=("DSPARK",),
        launch_checks=DSPARK_SG_LAUNCH,
        share_cite=f"{DSW} attach_shared_modules (the target's embed_tokens and lm_head) @ 0.5.16, 0.5.20, 0.5.23",
        notes=(
            "modelled with SGLANG_RAGGED_VERIFY_MODE unset (static): confidence_head.* skipped; in another mode the head is "
            "built and a checkpoint without it raises",
            "the mask token is embedded by the target's embedding (mask_token_id must be set and inside the target's "
            f"vocabulary: {DSC} resolve_runtime_config raises at worker start otherwise); mask_embedding.pt is never read",
        ),
    )


_SG_DSPARK_Q = {"Qwen3DSparkModel": "Qwen3DSparkModel"}
_SG_DSPARK_D = {**_SG_DSPARK_Q, "DSparkDraftModel": "DSparkDraftModel"}  # 0.5.17+
_SG_DSPARK = {**_SG_DSPARK_D, "LingDSparkModel": "LingDSparkModel"}  # 0.5.19+
# other DSpark drafters SGLang builds from their own files, not modelled: name -> file (first release read with it)
_SG_DSPARK_OTHER = {"DeepseekV4ForCausalLMDSpark": "sglang/srt/models/deepseek_v4_dspark.py, from 0.5.16"}
_SG_DSPARK_LFM2 = {"Lfm2DSparkDraftModel": "sglang/srt/models/lfm2_dspark.py, from 0.5.19"}
_SG_DSPARK_MINIMAX = {"DSparkMiniMaxDraftModel": "sglang/srt/models/dspark_minimax.py, from 0.5.23"}
DSPARK_CONF = "tests/test_conformance_sglang_dflash.py"
DSPARK_CASES = 14  # CASES3 of DSPARK_CONF


def _sglang_dspark_dispatch(registry: dict[str, str], versions: str) -> Dispatch:
    return Dispatch(
        "sglang",
        registry,
        "Qwen3DSparkModel",
        cite=f"{DSM} EntryClass @ {versions} (SGLang dispatches on architectures[0])",
        unknown_message="ValueError: {arch!r} is no DSpark class of this SGLang (sglang/srt/models/dspark.py EntryClass)",
    )


def _sglang_dspark_range(first, last, registry, versions, read, runs, begins, other, dflash_versions, ids_check, renames=(), **dflash):
    return FamilyRange(
        engine="sglang",
        family="dspark",
        first=first,
        last=last,
        dispatch=_sglang_dspark_dispatch(registry, versions),
        classes={n: _sglang_dspark_class(n, versions, dflash_versions, ids_check, renames, **dflash) for n in registry},
        begins=begins,
        versions_read=read,
        unmodelled_archs=other,
        runs=all_agreed(DSPARK_CONF, "2026-12-02", DSPARK_CASES, *runs),
    )


FAMILY_RANGES += (
    _sglang_dspark_range(
        "0.5.16",
        "0.5.16",
        _SG_DSPARK_Q,
        "0.5.16",
        ("0.5.15", "0.5.16"),
        ("0.5.16",),
        f"{DSM} (Qwen3DSparkModel = DSparkDraftMixin over DFlashDraftModel) and SpeculativeAlgorithm.DSPARK "
        "(sglang/srt/speculative/spec_info.py) first ship in the 0.5.16 wheel, absent from 0.5.15",
        _SG_DSPARK_OTHER,
        "0.5.16, 0.5.17",
        IDS_A,
    ),
    _sglang_dspark_range(
        "0.5.17",
        "0.5.17",
        _SG_DSPARK_D,
        "0.5.17",
        ("0.5.17",),
        (),
        f"{DSM} EntryClass @ 0.5.17 adds DSparkDraftModel (absent from 0.5.16's); its dflash.py still checks the ids "
        "against num_target_layers else the draft's layer count, with no encoder.* aliases (as 0.5.16's)",
        _SG_DSPARK_OTHER,
        "0.5.16, 0.5.17",
        IDS_A,
    ),
    _sglang_dspark_range(
        "0.5.18",
        "0.5.18",
        _SG_DSPARK_D,
        "0.5.18",
        ("0.5.18",),
        (),
        f"{DFM} @ 0.5.18, which the DSpark classes inherit: ids checked against num_target_layers else max(ids) + 1, the "
        "encoder.fc / encoder.output_norm_enc aliases (absent from 0.5.17's)",
        _SG_DSPARK_OTHER,
        "0.5.18",
        IDS_B,
        ENCODER_RENAMES,
    ),
    _sglang_dspark_range(
        "0.5.19",
        "0.5.19",
        _SG_DSPARK,
        "0.5.19",
        ("0.5.19",),
        ("0.5.19",),
        f"{DSM} EntryClass @ 0.5.19 adds LingDSparkModel (absent from 0.5.18's) and load_weights strips model. before "
        "its skips (the Nemotron-3.5 branch); the inherited DFlashDraftModel builds grouped convolutions from 0.5.19",
        {**_SG_DSPARK_OTHER, **_SG_DSPARK_LFM2},
        "0.5.19",
        IDS_B,
        ENCODER_RENAMES,
        conv=True,
    ),
    _sglang_dspark_range(
        "0.5.20",
        "0.5.22",
        _SG_DSPARK,
        "0.5.20 … 0.5.22",
        ("0.5.20", "0.5.21", "0.5.22"),
        ("0.5.20",),
        "the inherited DFlashDraftModel builds MiMo's per-head attention_sink_bias from 0.5.20 (absent from 0.5.19); "
        f"{DSM}'s load_weights and constructor checks are the same in 0.5.20, 0.5.21 and 0.5.22",
        {**_SG_DSPARK_OTHER, **_SG_DSPARK_LFM2},
        "0.5.20 … 0.5.22",
        IDS_B,
        ENCODER_RENAMES,
        sink=True,
        conv=True,
    ),
    _sglang_dspark_range(
        "0.5.23",
        None,
        _SG_DSPARK,
        "0.5.23",
        ("0.5.23",),
        ("0.5.23",),
        "sglang/srt/models/dspark_minimax.py (DSparkMiniMaxDraftModel) first ships in the 0.5.23 wheel, absent from 0.5.22; "
        f"{DSM}'s Qwen3/Ling/DSparkDraftModel loader is 0.5.22's (its 0.5.23 changes are tensor-parallel head sharding only)",
        {**_SG_DSPARK_OTHER, **_SG_DSPARK_LFM2, **_SG_DSPARK_MINIMAX},
        "0.5.23",
        IDS_B,
        ENCODER_RENAMES,
        sink=True,
        conv=True,
    ),
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


# --- MTP heads inside a target (--speculative-algorithm NEXTN, an alias of EAGLE) ----------------------------------
# The draft is the target's own checkpoint read by a NextN class (configs/model_config.py _config_draft_model renames
# the target's architecture); it reads the one MTP layer model.layers.{nextn_id}.* and takes embed/head from the target.
NEXTN_CFG = "sglang/srt/configs/model_config.py (ModelConfig._config_draft_model)"
NEXTN_CONF = "tests/test_conformance_sglang_nextn.py"
DSN = "sglang/srt/models/deepseek_nextn.py"
GLMN = "sglang/srt/models/glm4_moe_nextn.py"
NEXTN_LOAD = (
    "DeepseekV2ForCausalLM.load_weights(is_nextn=True) (models/deepseek_v2.py; deepseek_common/deepseek_weight_loader.py from 0.5.8)"
)
NEXTN_FIELDS = (
    Field("H", ("hidden_size",)),
    Field("V", ("vocab_size",)),
    Field("N", ("num_hidden_layers",)),
    Field("quant", ("quantization_config",), None, kind="any"),
)
NNPL_REQUIRED = Field("L", ("num_nextn_predict_layers",), None, required="ValueError: num_nextn_predict_layers is not in the config")
# from 0.5.22 a config without the key loads as one NextN layer (observed on the 0.5.22 and 0.5.23 wheels, conformance run)
NNPL_DEFAULT = Field("L", ("num_nextn_predict_layers",), 1)
# "compatible with old design": a one-layer config is a standalone NextN checkpoint whose layer is 0
NEXTN_DERIVE = (Derive("nextn_id", "0 if N == 1 else N"), Derive("one", "1"))
NEXTN_ONE = Raise("L is not None and L != 1", "AssertionError: Only 1 nextn layer is supported", f"{DSN} / {NEXTN_LOAD}")
NEXTN_QUANT_CITE = "sglang/srt/model_loader/loader.py _get_quantization_config (the NextN decoder's prefix is model.decoder)"


def _nextn_quant(mapper: bool) -> tuple[QuantSkip, ...]:
    """SGLang matches ignore lists against its own module names: the NextN decoder is `model.decoder.*`, so entries
    written in checkpoint names (model.layers.{N}.*) do not match; from 0.5.10 DeepseekV3ForCausalLMNextN's mapper
    renames `model.layers.61` entries (DeepSeek-V3/R1's layer number only). modelopt_fp4 builds the body unquantized."""
    rename = (r"^model\.layers\.\d+\.", "model.decoder.")
    entry = ("model.layers.61", "model.decoder") if mapper else None
    q = "sglang/srt/layers/quantization"
    return (
        QuantSkip("fp8", ("ignored_layers", "modules_to_not_convert"), "exact", f"{q}/fp8.py; {NEXTN_QUANT_CITE}", rename, entry),
        QuantSkip("compressed-tensors", ("ignore",), "regex", f"{q}/compressed_tensors; {NEXTN_QUANT_CITE}", rename, entry),
        QuantSkip("modelopt", ("exclude_modules", "ignore"), "wildcard", f"{q}/modelopt_quant.py; {NEXTN_QUANT_CITE}", rename, entry),
        QuantSkip("modelopt_fp4", (), "exact", f"{DSN} DeepseekModelNextN.__init__ (modelopt_fp4 → quant_config None)", everything=True),
    )


def _nextn_class(name: str, file: str, *, unknown_raises: bool, mapper: bool, nnpl_default: bool = False) -> DraftClass:
    """DeepseekV3ForCausalLMNextN / Glm4MoeForCausalLMNextN: one MTP layer, its own norms and eh_proj at the top, the
    target's decoder-layer class as `model.decoder`; the checkpoint's embed_tokens / shared_head.head are skipped."""
    own = f"{file} + {NEXTN_LOAD}"
    return DraftClass(
        name=name,
        file=file,
        fields=NEXTN_FIELDS + ((NNPL_DEFAULT if nnpl_default else NNPL_REQUIRED),),
        derive=NEXTN_DERIVE,
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("model.enorm.weight", ("H",), role="mtp norm"),
            Param("model.hnorm.weight", ("H",), role="mtp norm"),
            Param("model.eh_proj.weight", ("H", "2*H"), role="mtp projection"),
            Param("model.shared_head.norm.weight", ("H",), role="norm"),
            Param("lm_head.weight", ("V", "H"), share="head", role="head"),
            Param("model.decoder.*", role="decoder", group=True, group_parts=DECODER_PARTS),
        ),
        loader=(
            Drop("model.embed_tokens.weight", why="the target's own embedding (the NextN layer takes the target's)", cite=own),
            Drop("lm_head.weight", why="the target's own head (the NextN layer takes the target's)", cite=own),
            Drop("shared_head.head", why="'Use shared head and embed weights from target model'", cite=own),
            Drop("embed_tokens", why="'Use shared head and embed weights from target model'", cite=own),
            KeepLayers(
                r"^model\.layers\.(\d+)\.",
                first="nextn_id",
                count="one",
                why="not the NextN layer (model.layers.{nextn_id}.*): skipped",
                cite=f"{own} (names not starting with the NextN prefix: continue)",
            ),
            RenameRegex(r"^model\.layers\.\d+\.(shared_head\.norm|eh_proj|enorm|hnorm)\.", r"model.\1.", cite=own),
            RenameRegex(r"^model\.layers\.\d+\.", "model.decoder.", cite=own),
        ),
        unknown="raise" if unknown_raises else "skip",
        unknown_message="KeyError: '{name}' (params_dict)" if unknown_raises else "{name} not found in params_dict (a warning; skipped)",
        missing="silent",
        raises=(NEXTN_ONE,),
        share_embed="'target'",
        share_head="'target'",
        share_cite="sglang/srt/speculative/eagle_worker.py (set_embed_and_head from the target; eagle_worker_v2.py init_lm_head)",
        methods=("NEXTN", "EAGLE"),
        quant_skips=_nextn_quant(mapper),
        notes=(
            "the decoder block (model.decoder) is the target's own decoder-layer class: its tensors are counted, not simulated one by one",
        ),
    )


def _nextn_range(first: str, last: str | None, read: tuple[str, ...], begins: str, glm: bool | None, **kw) -> FamilyRange:
    """`glm`: None (no GLM NextN class yet), False (its loader indexes params_dict: KeyError), True (it skips)."""
    at = f" @ {read[0]} … {read[-1]}" if len(read) > 1 else f" @ {read[0]}"
    classes = {"DeepseekV3ForCausalLMNextN": _nextn_class("DeepseekV3ForCausalLMNextN", DSN + at, **kw)}
    registry = {"DeepseekV3ForCausalLM": "DeepseekV3ForCausalLMNextN"}
    if glm is not None:
        classes["Glm4MoeForCausalLMNextN"] = _nextn_class("Glm4MoeForCausalLMNextN", GLMN + at, **{**kw, "unknown_raises": not glm})
        registry["Glm4MoeForCausalLM"] = "Glm4MoeForCausalLMNextN"
    return FamilyRange(
        engine="sglang",
        family="mtp",
        first=first,
        last=last,
        dispatch=Dispatch(
            "sglang",
            registry,
            "DeepseekV3ForCausalLMNextN",
            cite=f"{NEXTN_CFG}{at}",
            unknown_message="SGLang renames no NextN/MTP draft class for architectures {archs} in specbridge's rows (" + NEXTN_CFG + ")",
        ),
        classes=classes,
        begins=begins,
        versions_read=read,
        # the real NextN loaders on every cached release, stored and compared with these rows (DeepSeek's 6 cases; GLM's
        # 6 more once its class exists)
        runs=all_agreed(NEXTN_CONF, "2026-12-01", 6 if glm is None else 12, *read),
        unmodelled_archs={
            "Qwen3NextForCausalLM": "Qwen3NextForCausalLMMTP (qwen3_next_mtp.py)",
            "Qwen3_5ForConditionalGeneration": "Qwen3_5ForCausalLMMTP (qwen3_5_mtp.py)",
            "Qwen3_5MoeForConditionalGeneration": "Qwen3_5ForCausalLMMTP (qwen3_5_mtp.py)",
            "MiMoForCausalLM": "MiMoMTP (mimo_mtp.py)",
            "Ernie4_5_MoeForCausalLM": "Ernie4_5_MoeForCausalLMMTP",
            "LongcatFlashForCausalLM": "LongcatFlashForCausalLMNextN",
            "GlmMoeDsaForCausalLM": "DeepseekV3ForCausalLMNextN (0.5.9–0.5.12) / GlmMoeDsaForCausalLMNextN (0.5.16+)",
            "DeepseekV32ForCausalLM": "DeepseekV3ForCausalLMNextN (from 0.5.12)",
        },
    )


NEXTN_GLM_RAISES = ("0.4.9.post6", "0.5.1.post3", "0.5.2")
NEXTN_LATER = ("0.5.4.post3", "0.5.5.post3", "0.5.8", "0.5.9")
NEXTN_MAPPED = ("0.5.10", "0.5.11", "0.5.12", "0.5.16", "0.5.19", "0.5.20", "0.5.21")
NEXTN_NNPL_DEFAULT = ("0.5.22", "0.5.23")
FAMILY_RANGES += (
    _nextn_range(
        "0.4.6",
        "0.4.7",
        ("0.4.6.post5", "0.4.7.post1"),
        f"{DSN} as read in the 0.4.6.post5 wheel (the oldest cached): an unknown name inside the NextN layer is a KeyError",
        glm=None,
        unknown_raises=True,
        mapper=False,
    ),
    _nextn_range(
        "0.4.8",
        "0.4.8",
        ("0.4.8.post1",),
        f"{NEXTN_LOAD}: an unknown name is skipped with a warning from the 0.4.8.post1 wheel",
        glm=None,
        unknown_raises=False,
        mapper=False,
    ),
    _nextn_range(
        "0.4.9",
        "0.5.3",
        NEXTN_GLM_RAISES,
        f"{GLMN} and the Glm4MoeForCausalLM → Glm4MoeForCausalLMNextN rename first ship in the 0.4.9.post6 wheel (its loader "
        "indexes params_dict: KeyError on an unknown name)",
        glm=False,
        unknown_raises=False,
        mapper=False,
    ),
    _nextn_range(
        "0.5.4",
        "0.5.9",
        NEXTN_LATER,
        "sglang/srt/models/glm4_moe.py load_weights(is_nextn=True) skips a name not in params_dict: first in the 0.5.4.post3 wheel",
        glm=True,
        unknown_raises=False,
        mapper=False,
    ),
    _nextn_range(
        "0.5.10",
        "0.5.21",
        NEXTN_MAPPED,
        f"{DSN} DeepseekV3ForCausalLMNextN.hf_to_sglang_mapper renames model.layers.61 → model.decoder in quantization ignore "
        "lists: first in the 0.5.10 wheel",
        glm=True,
        unknown_raises=False,
        mapper=True,
    ),
    _nextn_range(
        "0.5.22",
        None,
        NEXTN_NNPL_DEFAULT,
        "a config without num_nextn_predict_layers loads as one NextN layer instead of raising: first seen in the 0.5.22 "
        "wheel (tests/test_conformance_sglang_nextn.py; 0.5.21 still raises)",
        glm=True,
        unknown_raises=False,
        mapper=True,
        nnpl_default=True,
    ),
)


# --- plain draft models (--speculative-algorithm STANDALONE): sglang/srt/speculative/standalone_worker*.py -----------
SA_WORKER = "sglang/srt/speculative/standalone_worker_v2.py (_validate_vocab_compatibility)"
# run: SGLang's parser, its vocabulary check fed as the worker feeds it, and its load of the draft's own class
SA_TEST = "tests/test_conformance_sglang_standalone.py"
DRAFT_MODEL = (
    DraftModelRange(
        engine="sglang",
        first="0.4.6.post5",
        last="0.5.1.post3",
        method="",
        cite="sglang/srt/server_args.py @ 0.4.10.post2, 0.5.1, 0.5.1.post3 (--speculative-algorithm choices EAGLE, EAGLE3, NEXTN)",
        versions_read=("0.4.10.post2", "0.5.1", "0.5.1.post3"),
        begins="no STANDALONE algorithm before 0.5.2 (read at 0.4.10.post2, 0.5.1 and 0.5.1.post3; older modelled releases are placed here unread)",
        refusal="argument --speculative-algorithm: invalid choice: 'STANDALONE'",
        runs=all_agreed(SA_TEST, "2026-12-02", 3, "0.4.8.post1", "0.5.1.post3"),
    ),
    DraftModelRange(
        engine="sglang",
        first="0.5.2",
        last="0.5.14",
        method="STANDALONE",
        cite="sglang/srt/server_args.py @ 0.5.2 (choices gain STANDALONE), sglang/srt/speculative/spec_info.py, "
        "standalone_worker.py @ 0.5.2–0.5.14 (no vocabulary check)",
        versions_read=("0.5.2", "0.5.3", "0.5.11", "0.5.12", "0.5.13", "0.5.14"),
        begins="sglang/srt/speculative/standalone_worker.py and SpeculativeAlgorithm.STANDALONE appear in 0.5.2",
        runs=all_agreed(SA_TEST, "2026-12-02", 3, "0.5.2", "0.5.11"),
    ),
    DraftModelRange(
        engine="sglang",
        first="0.5.15",
        last=None,
        method="STANDALONE",
        cite=f"{SA_WORKER} @ 0.5.15–0.5.23; sglang/srt/managers/tp_worker.py @ 0.5.15–0.5.23 (TpModelWorker.__init__: "
        "`if skip_tokenizer_init or self.is_draft_worker: self.tokenizer = None`)",
        versions_read=("0.5.15", "0.5.17", "0.5.19", "0.5.20", "0.5.23"),
        begins="StandaloneWorkerV2 validates the vocabulary at start-up (absent in 0.5.14)",
        vocab_size_raises="ValueError: STANDALONE speculative decoding requires the draft model to share the same vocabulary "
        "as the target model, but got target vocab_size={target} and draft vocab_size={draft}.",
        # no token_map_raises: the validator compares the tokenizers' get_vocab() only when both workers have one, and
        # a draft worker never has (tp_worker.py above); the run hands it what the worker does and nothing is raised
        # for a shifted map of the same size (handed the draft's own tokenizer, it would raise the token-to-id error)
        runs=all_agreed(SA_TEST, "2026-12-02", 3, "0.5.16", "0.5.19", "0.5.20", "0.5.23"),
    ),
)


# --- Medusa: SGLang has none ----------------------------------------------------------------------------------------------
# sglang/srt/speculative/spec_info.py SpeculativeAlgorithm: EAGLE, EAGLE3 (0.4.8.post1, 0.5.1.post3), + STANDALONE (0.5.2),
# + DFLASH, NGRAM (0.5.11), + DSPARK, FROZEN_KV_MTP (0.5.16), + UNO (0.5.23); no file of any of these wheels names Medusa
SGL_MEDUSA_READ = ("0.4.8.post1", "0.5.1.post3", "0.5.2", "0.5.11", "0.5.16", "0.5.23")
FAMILY_RANGES += (
    FamilyRange(
        engine="sglang",
        family="medusa",
        first="0.4.8",
        last=None,
        dispatch=Dispatch("sglang", {}, "", cite="sglang/srt/speculative/spec_info.py SpeculativeAlgorithm"),
        classes={},
        begins="no SpeculativeAlgorithm and no model file for Medusa in any wheel read",
        versions_read=SGL_MEDUSA_READ,
        absent="no MEDUSA in sglang/srt/speculative/spec_info.py SpeculativeAlgorithm and no file naming Medusa in the "
        f"{', '.join(SGL_MEDUSA_READ)} wheels",
    ),
)


# --- P-EAGLE: SGLang has none -------------------------------------------------------------------------------------------
# No file of the 0.4.8.post1 … 0.5.23 wheels names peagle, parallel_drafting, mask_hidden or speculators_model_type (the
# only "Speculators" is a docstring of dflash.py's Laguna class); SpeculativeAlgorithm (spec_info.py) has no parallel
# EAGLE; the feature request is open (sgl-project/sglang#23171). What SGLang does with such a drafter: get_config reads it
# with transformers' AutoConfig (sglang/srt/utils/hf_transformers/config.py @ 0.5.23), which refuses a speculators config
# (no model_type: run with the conformance env's transformers 5.19); and architectures[0] is no SGLang class (the
# conformance harness, 0.4.8.post1 and 0.5.23: no module of sglang/srt/models exports PEagleDraftModel), so
# resolve_transformers_arch raises. Renamed LlamaForCausalLMEagle3 over a flattened config, 0.5.23's llama_eagle3 loads
# it as an EAGLE-3 drafter and skips mask_hidden (and a Qwen3 drafter's q_norm/k_norm) without a word (same run).
SGL_PEAGLE_READ = ("0.4.8.post1", "0.5.1.post3", "0.5.2", "0.5.11", "0.5.16", "0.5.19", "0.5.20", "0.5.23")
FAMILY_RANGES += (
    FamilyRange(
        engine="sglang",
        family="peagle",
        first="0.4.8",
        last=None,
        dispatch=Dispatch("sglang", {}, "", cite="sglang/srt/speculative/spec_info.py SpeculativeAlgorithm; sglang/srt/models EntryClass"),
        classes={},
        begins="no P-EAGLE class, no parallel drafting and no speculators-config reader in any wheel read",
        versions_read=SGL_PEAGLE_READ,
        absent="no file of the "
        f"{', '.join(SGL_PEAGLE_READ)} wheels names peagle, parallel_drafting, mask_hidden or speculators_model_type, and "
        "SpeculativeAlgorithm has no parallel EAGLE (sgl-project/sglang#23171, open); SGLang itself refuses the drafter: "
        "its config has no model_type ('ValueError: Unrecognized model in DRAFT. Should have a `model_type` key in its "
        "config.json', transformers' AutoConfig in sglang/srt/utils/hf_transformers/config.py get_config) and no SGLang "
        "model exports PEagleDraftModel, PEagleSpeculator or Peagle*ForCausalLM ('Cannot find model module. … is not a "
        "registered model in the Transformers library', sglang/srt/model_loader/utils.py resolve_transformers_arch); "
        "renamed LlamaForCausalLMEagle3 it loads as an EAGLE-3 drafter, mask_hidden skipped silently, drafting one "
        "token per forward instead of the block it was trained for",
    ),
)
