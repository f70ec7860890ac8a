"""SGLang: how each release range builds and loads an EAGLE-3 drafter.

Read from the PyPI wheels' source (0.4.6.post5 … 0.5.23): `sglang/srt/models/llama_eagle3.py`,
`kimi_k25_eagle3.py`, `sglang/srt/speculative/eagle_worker.py` (`eagle_worker_v2.py` from 0.5.16).
Key facts: unknown checkpoint names are skipped silently, missing parameters are never reported,
and the decoder is `midlayer.*` up to 0.5.11 and `layers.N.*` from 0.5.12.
"""

from __future__ import annotations

from .common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, eagle3_io, llama_decoder
from .spec import Derive, Dispatch, DraftClass, Era, Field, Param, Raise, Step

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
    Step("buffer", "d2t", "hot_token_id", why="d2t becomes hot_token_id = d2t + arange", cite=f"{F} load_weights"),
    Step("drop", "t2d", why="SGLang never uses t2d", cite=f"{F} load_weights"),
)

SKIP_MSG = "no such parameter: skipped silently (SGLang logs nothing)"


LINEAR = "sglang/srt/layers/linear.py (weight_loader: loaded_weight.narrow(...) along the TP dim; pad_or_narrow_weight from 0.5.11)"
O_BIAS = "attention_bias or bias"  # sglang/srt/models/llama.py LlamaDecoderLayer: LlamaAttention(bias=attention_bias or bias)


def _midlayer_class(name_suffix: str, fc_bias: str, head_from_target: bool, cite_versions: str, pads: bool = False) -> DraftClass:
    """`fc_bias`: when fc has a bias. 0.4.6.post5 builds torch.nn.Linear(Ht*3, H) with PyTorch's default
    bias=True whatever the config says; later releases pass bias=getattr(config, "bias", False). The
    config's `bias` (default False) is a separate question: it also gives o_proj a bias (llama.py
    LlamaAttention(bias=attention_bias or bias)), in every release."""
    return DraftClass(
        name="LlamaForCausalLMEagle3",
        file=f"{F} @ {cite_versions}",
        fields=COMMON_FIELDS + (Field("bias", ("bias",), False, kind="bool"),),
        derive=COMMON_DERIVE + (Derive("n_aux", "3"),),  # fc width hard-coded as target_hidden_size * 3
        # fc is always built; no input_norm / fc_norm before 0.5.12/0.5.20 (conformance runs of the real loader)
        params=eagle3_io("Ht*n_aux", fc_bias=fc_bias, fc_when="True", input_norm=False, fc_norm=False)
        + llama_decoder("model.midlayer.", per_layer=False, o_bias_when=O_BIAS),
        loader=DROP_VOCAB + STACK_LLAMA + (Step("prefix_if_not_param", "model.", cite=f"{F} load_weights"),),
        unknown="skip",
        unknown_message=SKIP_MSG,
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
    # every EAGLE-3 layer has its own hidden_norm; input_norm exists from 0.5.20 (conformance runs)
    params=eagle3_io("Ht*n_aux", fc_bias="bias", fc_when="True", input_norm=input_norm)
    + llama_decoder("model.layers.{i}.", per_layer=True, hidden_norm_when="True", o_bias_when=O_BIAS),
    loader=(
        Step("substr", "midlayer", "layers.0", cite=f"{F} load_weights (legacy rename, 0.5.12+)"),
        Step("substr", "aux_norm_low", "fc_norm.0", cite=f"{F} load_weights"),
        Step("substr", "aux_norm_mid", "fc_norm.1", cite=f"{F} load_weights"),
        Step("substr", "aux_norm_high", "fc_norm.2", cite=f"{F} load_weights"),
    )
    + DROP_VOCAB
    + STACK_LLAMA
    + (Step("prefix_if_not_param", "model.", cite=f"{F} load_weights"),),
    unknown="skip",
    unknown_message=SKIP_MSG,
    raises=(HT_NULL,),
    share_embed="'target' if Ht == H else 'own'",
    share_head="'target' if head_from_target else 'own'",
    share_cite=f"{WORKER}: set_embed / set_embed_and_head",
    wider_tp="truncate",
    narrower_tp="pad",
  )


LAYERS_CLASS = _layers_class("0.5.12, 0.5.16", input_norm=False)
LAYERS_CLASS_INPUT_NORM = _layers_class("0.5.20, 0.5.23", input_norm=True)

MLA = "Eagle3DeepseekV2ForCausalLM"
KIMI_CLASS = DraftClass(
    name=MLA,
    file=f"{KIMI} @ 0.5.12 … 0.5.23",
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
        Step("regex", r"^layers\.0\.", "midlayer.", cite=f"{KIMI} load_weights"),
        Step("prefix", "model.", "lm_head", cite=f"{KIMI} load_weights"),
        Step("stack", ".gate_proj", ".gate_up_proj", "0"),
        Step("stack", ".up_proj", ".gate_up_proj", "1"),
        Step("stack", ".q_a_proj", ".fused_qkv_a_proj_with_mqa", "q_a", cite=f"{KIMI} load_weights (cached, then concatenated)"),
        Step("stack", ".kv_a_proj_with_mqa", ".fused_qkv_a_proj_with_mqa", "kv_a"),
    ),
    unknown="warn",
    unknown_message="logged as a warning ('Eagle3 MLA: skipping unexpected weight {name}') and skipped",
    raises=(Raise("L != 1", "ValueError: Eagle3 MLA drafter supports only 1 layer", f"{KIMI} __init__"),),
    share_embed="'target' if Ht == H else 'own'",
    share_head="'target' if head_from_target else 'own'",
    share_cite=WORKER,
)

_DISPATCH_CITE = "SGLang dispatches on architectures[0] via EntryClass; no speculators support (0.5.23 source)"

# A draft config naming an ordinary model class (the EAGLE research configs say LlamaForCausalLM) is not refused:
# model_config.py renames no Llama architecture for a draft, so SGLang builds that plain model (one ordinary
# layer; midlayer.* skipped by its load_weights), and the EAGLE3 worker then asks it for the hot-token map.
# (Llama and its subclass Mistral have set_embed, so the worker gets as far as the hot-token map; Qwen classes
# have no set_embed and fail one line earlier: not tabled here.)
PLAIN = ("LlamaForCausalLM", "MistralForCausalLM")
PLAIN_046 = ("AttributeError: '{arch}' object has no attribute 'get_hot_token_id': SGLang builds the plain {arch} as the draft "
             "(a registered target class) and its EAGLE3 worker needs an EAGLE-3 class "
             "(sglang/srt/speculative/eagle_worker.py@0.4.6.post5 EAGLEWorker.__init__); architectures must be LlamaForCausalLMEagle3")
PLAIN_MSG = ("AttributeError: '{arch}' object has no attribute 'hot_token_id': SGLang builds the plain {arch} as the draft "
             "(a registered target class; sglang/srt/configs/model_config.py _config_draft_model renames no Llama architecture) "
             "and its EAGLE3 worker needs an EAGLE-3 class (speculative/eagle_worker.py; eagle_worker_v2.py init_lm_head from 0.5.16); "
             "architectures must be LlamaForCausalLMEagle3")
UNKNOWN_046 = "ValueError: Model architectures {archs} are not supported for now (sglang/srt/models/registry.py@0.4.6.post5)"
UNKNOWN_MSG = ("ValueError: Cannot find model module. '{arch}' is not a registered model in the Transformers library ... and 'AutoModel' "
               "is not present in the model config's 'auto_map' (sglang/srt/model_loader/utils.py resolve_transformers_arch, 0.4.9+: "
               "an architecture SGLang has no class for falls back to Transformers, which has none either)")
_EAGLE3 = {"LlamaForCausalLMEagle3": "LlamaForCausalLMEagle3"}


def _dispatch(registry: dict[str, str], unknown: str, plain: str) -> Dispatch:
    return Dispatch("sglang", registry, "LlamaForCausalLMEagle3", cite=_DISPATCH_CITE, unknown_message=unknown,
                    plain_classes=PLAIN, plain_message=plain)


# SGLang dispatches on architectures[0]; the Kimi MLA drafter class exists from 0.5.12
DISPATCH_046 = _dispatch(_EAGLE3, UNKNOWN_046, PLAIN_046)
MIDLAYER_DISPATCH = _dispatch(_EAGLE3, UNKNOWN_MSG, PLAIN_MSG)
LAYERS_DISPATCH = _dispatch({**_EAGLE3, MLA: MLA}, UNKNOWN_MSG, PLAIN_MSG)

ERAS = (
    Era(
        "sglang",
        "0.4.6 midlayer (fc with bias)",
        "0.4.6",
        "0.4.8",  # approximate: the bias default changed between 0.4.6.post5 and 0.4.9.post6
        ("0.4.6.post5",),
        DISPATCH_046,
        {"LlamaForCausalLMEagle3": _midlayer_class("0.4.6.post5: fc bias=True", "True", False, "0.4.6.post5")},  # nn.Linear default
        notes=("fc is nn.Linear(target_hidden_size*3, hidden_size) with PyTorch's default bias=True",),
    ),
    Era(
        "sglang",
        "0.4.9–0.5.1 midlayer",
        "0.4.9",
        "0.5.1",
        ("0.4.9.post6",),
        MIDLAYER_DISPATCH,
        {"LlamaForCausalLMEagle3": _midlayer_class("0.4.9.post6", "bias", False, "0.4.9.post6")},
        notes=("no load_lm_head_from_target yet: the drafter must ship lm_head",),
    ),
    Era(
        "sglang",
        "0.5.2–0.5.4 midlayer",
        "0.5.2",
        "0.5.4",  # approximate: pad_or_narrow_weight is absent in 0.5.2, present in 0.5.5.post3
        ("0.5.2",),
        MIDLAYER_DISPATCH,
        {"LlamaForCausalLMEagle3": _midlayer_class("0.5.2", "bias", True, "0.5.2")},
    ),
    Era(
        "sglang",
        "0.5.5–0.5.11 midlayer",
        "0.5.5",
        "0.5.11",
        ("0.5.5.post3", "0.5.8", "0.5.9", "0.5.10", "0.5.11"),
        MIDLAYER_DISPATCH,
        {"LlamaForCausalLMEagle3": _midlayer_class("0.5.5–0.5.11", "bias", True, "0.5.5.post3 … 0.5.11", pads=True)},
        notes=("gate_up/down weights narrower than the parameter are zero-padded silently (linear.py pad_or_narrow_weight)",),
    ),
    Era(
        "sglang",
        "0.5.12–0.5.19 layers",
        "0.5.12",
        "0.5.19",
        ("0.5.12", "0.5.16"),
        LAYERS_DISPATCH,
        {"LlamaForCausalLMEagle3": LAYERS_CLASS, MLA: KIMI_CLASS},
        notes=("midlayer.* and layers.N.* both load; multi-layer drafters supported; no input_norm (norm_before_fc) yet",),
    ),
    Era(
        "sglang",
        "0.5.20+ layers",
        "0.5.20",
        None,
        ("0.5.20", "0.5.23"),
        LAYERS_DISPATCH,
        {"LlamaForCausalLMEagle3": LAYERS_CLASS_INPUT_NORM, MLA: KIMI_CLASS},
        notes=("adds input_norm (norm_before_fc)",),
    ),
)
