"""SGLang's EAGLE-3 rows (ERAS, CAPTURE): how each release range builds and loads an EAGLE-3 drafter.

Read from the PyPI wheels' source (0.4.6.post5 onwards: every release in the ERAS rows' `versions_read`): `sglang/srt/models/llama_eagle3.py`,
`kimi_k25_eagle3.py`, `sglang/srt/speculative/eagle_worker.py` (`eagle_worker_v2.py` from 0.5.16).
Key facts: unknown checkpoint names are skipped silently, missing parameters are never reported,
and the decoder is `midlayer.*` up to 0.5.11 and `layers.N.*` from 0.5.12.
"""

from __future__ import annotations

from ...record import replace
from ..common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, eagle3_io, llama_decoder
from ..spec import (
    Buffer,
    CaptureRule,
    Derive,
    Dispatch,
    DraftClass,
    Drop,
    FamilyRange,
    Field,
    IgnoreSuffix,
    Param,
    Prefix,
    PrefixUnlessParam,
    Raise,
    Rename,
    RenameRegex,
    Run,
    Stack,
    all_agreed,
)
from .common import O_BIAS, PLAIN, STACKED_BIAS_SKIP, STACKED_KEYERROR, UNKNOWN_MSG

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


def _midlayer_class(
    *, name_suffix: str, fc_bias: str, head_from_target: bool, cite_versions: str, pads: bool = False, stacked_keyerror: bool = False
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


def _layers_class(*, versions: str, input_norm: bool) -> DraftClass:
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


LAYERS_CLASS = _layers_class(versions="0.5.12 … 0.5.16", input_norm=False)
LAYERS_CLASS_INPUT_NORM = _layers_class(versions="0.5.17 and every later release read", input_norm=True)

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
_EAGLE3 = {"LlamaForCausalLMEagle3": "LlamaForCausalLMEagle3"}


def _dispatch(*, registry: dict[str, str], unknown: str, plain: str) -> Dispatch:
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
DISPATCH_046 = _dispatch(registry=_EAGLE3, unknown=UNKNOWN_046, plain=PLAIN_046)
MIDLAYER_DISPATCH = _dispatch(registry=_EAGLE3, unknown=UNKNOWN_MSG, plain=PLAIN_MSG)
LAYERS_DISPATCH = _dispatch(registry={**_EAGLE3, MLA: MLA}, unknown=UNKNOWN_MSG, plain=PLAIN_MSG)

# Conformance runs: SGLang's own class built and its own load_weights run on CPU over every case of
# tests/test_conformance_sglang.py (30 cases: 5 producer fixtures + 25 mutations), check agreeing on each
# (the date is the last full run; 0.4.9.post6, 0.5.2, 0.5.11, 0.5.12, 0.5.23 were first run on 2026-11-30).
CONF = "tests/test_conformance_sglang.py"


def _runs(date: str, *releases: str, cases: int = 30) -> tuple[Run, ...]:
    return all_agreed(CONF, date, cases, *releases)


ERAS = (
    FamilyRange(
        engine="sglang",
        family="eagle3",
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
                name_suffix="0.4.6.post5: fc bias=True",
                fc_bias="True",
                head_from_target=False,
                cite_versions="0.4.6.post5 … 0.4.8.post1",
                stacked_keyerror=True,
            )
        },  # nn.Linear default
        begins="0.4.6.post5 is the oldest release modelled (llama_eagle3.py: fc = nn.Linear(target_hidden_size * 3, hidden_size), "
        "PyTorch's default bias=True; the same line in the 0.4.7.post1 and 0.4.8.post1 wheels)",
        runs=_runs("2026-12-01", "0.4.6.post5", "0.4.7.post1", "0.4.8.post1"),
        notes=("fc is nn.Linear(target_hidden_size*3, hidden_size) with PyTorch's default bias=True",),
    ),
    FamilyRange(
        engine="sglang",
        family="eagle3",
        name="0.4.9–0.5.1 midlayer",
        first="0.4.9",
        last="0.5.1",
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.4.9", "0.4.9.post6", "0.4.10.post2", "0.5.1", "0.5.1.post3"),
        dispatch=MIDLAYER_DISPATCH,
        classes={
            "LlamaForCausalLMEagle3": _midlayer_class(
                name_suffix="0.4.9.post6", fc_bias="bias", head_from_target=False, cite_versions="0.4.9.post6"
            )
        },
        begins="llama_eagle3.py builds fc with bias=getattr(config, 'bias', False): first in the 0.4.9 wheel (0.4.8.post1: nn.Linear "
        "default bias)",
        runs=_runs("2026-12-01", "0.4.9.post6", "0.5.1.post3"),
        notes=("no load_lm_head_from_target yet: the drafter must ship lm_head",),
    ),
    FamilyRange(
        engine="sglang",
        family="eagle3",
        name="0.5.2 midlayer",
        first="0.5.2",
        last="0.5.2",
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.5.2",),
        dispatch=MIDLAYER_DISPATCH,
        classes={
            "LlamaForCausalLMEagle3": _midlayer_class(name_suffix="0.5.2", fc_bias="bias", head_from_target=True, cite_versions="0.5.2")
        },
        begins="load_lm_head_from_target (draft_vocab_size null and an untied head take the target's lm_head; llama_eagle3.py, "
        "speculative/eagle_worker.py): first in the 0.5.2 wheel, absent from 0.5.1 and 0.5.1.post3",
        runs=_runs("2026-12-01", "0.5.2"),
    ),
    FamilyRange(
        engine="sglang",
        family="eagle3",
        name="0.5.3–0.5.11 midlayer",
        first="0.5.3",
        last="0.5.11",
        native_layout="sglang",
        multi_layer_layout="vllm",
        variants_unconfirmed=frozenset({"norm_before_residual"}),
        versions_read=("0.5.3", "0.5.3.post3", "0.5.4", "0.5.4.post1", "0.5.4.post3", "0.5.5.post3", "0.5.8", "0.5.9", "0.5.10", "0.5.11"),
        dispatch=MIDLAYER_DISPATCH,
        classes={
            "LlamaForCausalLMEagle3": _midlayer_class(
                name_suffix="0.5.3–0.5.11", fc_bias="bias", head_from_target=True, cite_versions="0.5.3 … 0.5.11", pads=True
            )
        },
        begins="layers/linear.py zero-pads a weight narrower than its parameter (pad_or_narrow_weight, sgl-project/sglang PR #10112): "
        "first in the 0.5.3 wheel, absent from 0.5.2; the 0.5.4.post3 run pads (the table had this era start at 0.5.5 until that run)",
        runs=_runs("2026-12-01", "0.5.4.post3", "0.5.5.post3", "0.5.8", "0.5.9", "0.5.10", "0.5.11"),
        notes=("gate_up/down weights narrower than the parameter are zero-padded silently (linear.py pad_or_narrow_weight)",),
    ),
    FamilyRange(
        engine="sglang",
        family="eagle3",
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
    FamilyRange(
        engine="sglang",
        family="eagle3",
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
