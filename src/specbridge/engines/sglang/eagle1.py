"""SGLang's EAGLE-1/2 rows (--speculative-algorithm EAGLE): LlamaForCausalLMEagle, Qwen2ForCausalLMEagle and the
Mistral EAGLE drafters."""

from __future__ import annotations

from ...record import replace
from ..common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, llama_decoder
from ..spec import (
    Dispatch,
    DraftClass,
    Drop,
    FamilyRange,
    Field,
    LaunchCheck,
    Param,
    Prefix,
    Raise,
    RenameRegex,
    Run,
    SkipUnless,
    Stack,
    all_agreed,
    in_release_range,
)
from .common import O_BIAS, PLAIN, STACKED_BIAS_SKIP, STACKED_KEYERROR, UNKNOWN_MSG

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
    *,
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


def _eagle1_pair(*, versions: str, stacked_keyerror: bool) -> dict[str, DraftClass]:
    """llama_eagle.py's LlamaForCausalLMEagle and qwen2_eagle.py's Qwen2ForCausalLMEagle (Qwen2's biased q/k/v) over
    one loader: `stacked_keyerror` as the release's llama.py load_weights does it."""
    return {
        "LlamaForCausalLMEagle": _eagle1_class(versions=versions, stacked_keyerror=stacked_keyerror),
        "Qwen2ForCausalLMEagle": _eagle1_class(
            versions=versions,
            stacked_keyerror=stacked_keyerror,
            name="Qwen2ForCausalLMEagle",
            file=QEA,
            base=QWEN2,
            qkv_bias="True",
            o_bias="False",
        ),
    }


# llama.py's guarded load_weights: one pair of classes from 0.4.9.post6 on, named by both ranges below (the 0.5.11 one
# adds the Mistral classes)
EAGLE1_CLASSES_049 = _eagle1_pair(versions="0.4.9.post6 … 0.5.23", stacked_keyerror=False)

EAGLE1_RANGES = (
    FamilyRange(
        engine="sglang",
        family="eagle",
        first="0.4.6",
        last="0.4.8",
        dispatch=_eagle1_dispatch(),
        classes=_eagle1_pair(versions="0.4.6.post5 … 0.4.8.post1", stacked_keyerror=True),
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
            **EAGLE1_CLASSES_049,
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
            **EAGLE1_CLASSES_049,
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
RANGES = EAGLE1_RANGES
