"""vLLM: how each release range builds and loads an EAGLE-3 drafter.

Read from the PyPI wheels (0.8.5, 0.10.2, 0.14.0, 0.32.0, 0.33.0): `vllm/model_executor/models/llama_eagle3.py`,
`vllm/transformers_utils/configs/{eagle.py,speculators/}`, `vllm/v1/spec_decode/`.
Key facts: unknown names raise, missing parameters are silent (load_weights returns None, so the
"weights not initialized" check is off), `midlayer.` is renamed to `layers.0.`, everything but
lm_head gets a `model.` prefix, and speculators configs are translated.
"""

from __future__ import annotations

from .common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, eagle3_io, llama_decoder
from .spec import Derive, Dispatch, DraftClass, Era, Field, Param, Raise, Step

F = "vllm/model_executor/models/llama_eagle3.py"
PROP = "vllm/v1/spec_decode/llm_base_proposer.py (_maybe_share_embeddings/_maybe_share_lm_head)"
CFG = "vllm/transformers_utils/configs/speculators/algos.py (update_eagle3)"

VOCAB_STEPS = (
    Step("drop", "t2d", why="vLLM never uses t2d", cite=f"{F} load_weights"),
    Step("rename_if", "d2t", "draft_id_to_target_id", cite=f"{F} load_weights"),
)
VLLM_FIELDS = LLAMA_FIELDS + (Field("Vd_raw", ("draft_vocab_size",), None),)
VLLM_DERIVE = LLAMA_DERIVE + (Derive("Vd", "Vd_raw if Vd_raw is not None else V"),)
D2T_ALWAYS = Param(
    "draft_id_to_target_id", ("Vd",), role="vocab map", missing_ok="Vd == V",
    missing_note="initialised to zeros = identity map; harmless only when the draft vocab is the full vocab",
)
D2T_IF_REDUCED = Param("draft_id_to_target_id", ("Vd",), when="Vd != V", role="vocab map")

KEYERROR = "KeyError: '{name}' (hand-written params_dict loader)"
VALUEERROR = "ValueError: There is no module or parameter named '{component}' in {module}"


def _class(
    versions: str,
    fc_in: str,
    d2t: Param,
    unknown_message: str,
    share_embed: str,
    share_head: str,
    multi_layer: bool,
    extra_fields=(),
    extra_raises=(),
    loader_extra=(),
    variants: bool = False,
) -> DraftClass:
    """`variants`: the class has input_norm (norm_before_fc) and fc_norm, which vLLM added in 0.32: older
    classes have neither parameter, so an input_norm.weight in the checkpoint is an unknown name there."""
    return DraftClass(
        name="Eagle3LlamaForCausalLM",
        file=f"{F} @ {versions}",
        fields=VLLM_FIELDS + tuple(extra_fields),
        derive=VLLM_DERIVE,
        params=eagle3_io(fc_in, fc_bias="False", head_when="True", input_norm=variants, fc_norm=variants) + llama_decoder("model.layers.{i}.", per_layer=True) + (d2t,),
        loader=VOCAB_STEPS
        + tuple(loader_extra)
        + (Step("prefix", "model.", "lm_head", cite=f"{F} load_weights: every non-lm_head name gets 'model.'"),)
        + (Step("substr", "midlayer.", "layers.0.", cite=f"{F} LlamaModel hf_to_vllm_mapper / load_weights"),)
        + STACK_LLAMA,
        unknown="raise",
        unknown_message=unknown_message,
        missing="silent",
        raises=tuple(extra_raises)
        + (() if multi_layer else (Raise("L != 1", "only one draft layer is built; further layers' weights are unknown names", f"{F} @ {versions}"),)),
        share_embed=share_embed,
        share_head=share_head,
        share_cite=PROP if "32" in versions or "14" in versions else f"vllm/v1/spec_decode/eagle.py @ {versions}",
    )


N_AUX_V32 = (Field("n_aux", ("num_aux_hidden_states", "len:eagle_config.eagle_aux_hidden_state_layer_ids"), 3),)

V32_CLASS = _class(
    "0.32.0, 0.33.0",
    "Ht*n_aux",
    D2T_IF_REDUCED,
    VALUEERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=N_AUX_V32,
    variants=True,
    loader_extra=(
        Step("drop", "mask_hidden", why="mask_hidden is only used with parallel drafting", cite=f"{F} load_weights"),
        Step("drop", "rotary_emb.inv_freq", why="rotary caches are recomputed", cite="vllm/model_executor/models/utils.py"),
        Step("ignore_suffix", ".bias", why="unexpected .bias names are ignored", cite=f"{F} load_weights (ignore_unexpected_suffixes)"),
    ),
)
V14_CLASS = _class(
    "0.14.0",
    "Ht*3",
    D2T_ALWAYS,
    KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=(Field("n_aux", (), 3),),
)
# 0.8.5 / 0.10.2 read config.draft_vocab_size as a plain attribute into ParallelLMHead (llama_eagle3.py); 0.14 adds
# "Ensure draft_vocab_size is set" (None -> the target's vocab size)
VD_PLAIN = (
    Field("Vd_raw", ("draft_vocab_size",), required="AttributeError: config has no attribute 'draft_vocab_size' "
          "(this vLLM reads it as a plain attribute; write it)", keep_null=True),
    Field("Vd_key", ("draft_vocab_size",), "absent", keep_null=True, kind="any"),
)
VD_NULL = Raise("Vd_key is None", "TypeError: ParallelLMHead(None, hidden_size): draft_vocab_size is null and this vLLM does not "
                "default it (llama_eagle3.py Eagle3LlamaForCausalLM.__init__; 0.14 falls back to the target's vocab size)", F)

V10_CLASS = _class(
    "0.10.2",
    "Ht*3",
    D2T_ALWAYS,
    KEYERROR,
    # 0.10: the draft embedding is replaced by the target's whenever shapes match; lm_head never shared.
    share_embed="'target'",
    share_head="'own'",
    multi_layer=False,
    extra_fields=(Field("n_aux", (), 3), *VD_PLAIN),
    extra_raises=(VD_NULL,),
)
V085_CLASS = _class(
    "0.8.5",
    "Ht*3",  # llama_eagle3.py@v0.8.5 LlamaModel: Linear(target_hidden_size * 3) when the config has it, else hidden_size * 3
    D2T_ALWAYS,
    KEYERROR,
    share_embed="'target' if not has_embed else 'own'",
    share_head="'own'",
    multi_layer=False,
    extra_fields=(Field("n_aux", (), 3), *VD_PLAIN),
    extra_raises=(VD_NULL,),
)

REGISTRY = {
    a: "Eagle3LlamaForCausalLM"
    for a in (
        "Eagle3LlamaForCausalLM",
        "LlamaForCausalLMEagle3",
        "Eagle3MiniMaxM2ForCausalLM",
        "Eagle3Qwen2_5vlForCausalLM",
        "Eagle3Qwen3vlForCausalLM",
        "PEagleDraftModel",
        "PeagleLlamaForCausalLM",
    )
}
SPEC_REQUIRED = (
    "speculators_config.proposal_methods.0.speculative_tokens",
    "speculators_config.verifier.name_or_path",
    "speculators_model_type",
    "transformer_layer_config",
)


def _dispatch(speculators: bool, by_model_type: dict[str, str], cite: str) -> Dispatch:
    return Dispatch(
        "vllm",
        REGISTRY,
        "Eagle3LlamaForCausalLM",
        speculators=speculators,
        speculators_required=SPEC_REQUIRED if speculators else (),
        speculators_arch_by_model_type=by_model_type,
        speculators_defaults={"norm_before_residual": True},
        cite=cite,
    )


ERAS = (
    Era(
        "vllm",
        "0.8.5 first EAGLE-3",
        "0.8.5",
        "0.8.5",
        ("0.8.5",),
        _dispatch(False, {}, "vllm/config.py @ 0.8.5: EAGLE-3 only for Llama targets; no speculators configs"),
        {"Eagle3LlamaForCausalLM": V085_CLASS},
        notes=("mean acceptance length is logged without the +1 bonus token",),
    ),
    Era(
        "vllm",
        "0.9–0.10 target-embedding era",
        "0.9.0",
        "0.10.2",
        ("0.10.2",),
        _dispatch(True, {"llama": "Eagle3LlamaForCausalLM"}, f"{CFG} @ 0.10.2 (always Eagle3LlamaForCausalLM; aux ids not copied)"),
        {"Eagle3LlamaForCausalLM": V10_CLASS},
    ),
    Era(
        "vllm",
        "0.11–0.31 params_dict loader",
        "0.11.0",
        "0.31",
        ("0.14.0",),
        _dispatch(True, {"llama": "Eagle3LlamaForCausalLM"}, f"{CFG} @ 0.14.0 (copies aux ids; Llama only)"),
        {"Eagle3LlamaForCausalLM": V14_CLASS},
        notes=("era bounds are approximate: read at 0.14.0; the WeightsMapper loader landed before 0.32",),
    ),
    Era(
        "vllm",
        "0.32+ WeightsMapper loader",
        "0.32.0",
        None,
        ("0.32.0", "0.33.0"),
        _dispatch(
            True,
            {"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"},
            f"{CFG} @ 0.32.0; vllm/transformers_utils/configs/eagle.py (architecture rewrite)",
        ),
        {"Eagle3LlamaForCausalLM": V32_CLASS},
        notes=("d2t with draft_vocab_size == vocab_size raises (no draft_id_to_target_id parameter)",),
    ),
)
