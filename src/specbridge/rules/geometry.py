"""G rules: shape algebra. Tensors, config and target must agree on every width; all but the KV-cache
rule name no engine, so they run once per checkpoint."""

from __future__ import annotations

from collections.abc import Iterator

from .context import Context
from .findings import ERROR, INFO
from .registry import CHECKPOINT, Hit, rule


@rule(
    "G001",
    "fc input width is not a multiple of the target hidden size",
    severity=ERROR,
    failure_modes=(5, 15, 20),
    scope=CHECKPOINT,
    fix="check that this drafter was trained for this target (and that `target_hidden_size`, if set, is the target's hidden size).",
)
def fc_input_width(c: Context) -> Iterator[Hit]:
    """`fc.weight` fuses the concatenated aux hidden states, so its input width must be k × the target hidden
    size (`target_hidden_size` from the config, else the target's, else the draft's). It is not: the aux
    states cannot feed it, and the engine fails with a shape error at the first forward (e.g. vLLM's
    `assert hidden_states.shape[-1] == input_embeds.shape[-1]`, vllm-project/vllm issue #18906) — usually a
    drafter trained for another target.
    """
    d = c.d
    if d.fc_in and c.ht and d.fc_in % c.ht:
        yield Hit(
            ERROR,
            f"fc.weight input width {d.fc_in} is not a multiple of the target hidden size {c.ht}: "
            "the concatenated aux states cannot feed it.",
            "check that this drafter was trained for this target",
        )


@rule(
    "G002",
    "fc output width differs from the draft hidden size",
    severity=ERROR,
    failure_modes=(5,),
    scope=CHECKPOINT,
    fix="re-export the drafter from its training run so that `fc.weight` rows, `norm.weight` and `hidden_size` agree; no config edit repairs mismatched tensors.",
)
def fc_output_width(c: Context) -> Iterator[Hit]:
    """`fc` must map to the draft hidden size, the width of `norm.weight` and of the decoder; here they differ, so
    the checkpoint contradicts itself and the engine's load raises a size mismatch.
    """
    H, norm = c.d.hidden_size, c.d.tensors.get("norm.weight")
    if norm is not None and H and norm.shape[0] != H:
        yield Hit(ERROR, f"fc.weight outputs {H} but norm.weight is {norm.shape[0]} wide: fc must map to the draft hidden size.")


@rule(
    "G003",
    "first-layer q/k/v input is not 2 x hidden",
    severity=ERROR,
    failure_modes=(6,),
    scope=CHECKPOINT,
    fix="set `hidden_size` to the draft's width, or serve the checkpoint with the algorithm it was trained for (EAGLE-1/2 drafters are not EAGLE-3 drafters).",
)
def first_layer_input(c: Context) -> Iterator[Hit]:
    """EAGLE-3's first decoder layer attends over `cat(embeds, hidden)`, so `layers.0` `q_proj` takes 2 × hidden
    inputs. Another width means the config's `hidden_size` is wrong or the checkpoint is not an EAGLE-3
    drafter (an EAGLE-1/2 layout); the engine's load raises a size mismatch.
    """
    H, q = c.d.hidden_size, c.d.tensors.get("layers.0.self_attn.q_proj.weight")
    if q is not None and H and len(q.shape) == 2 and q.shape[1] != 2 * H:
        yield Hit(ERROR, f"layers.0 q_proj takes {q.shape[1]} inputs; EAGLE-3's first layer takes cat(embeds, hidden) = 2×{H} = {2 * H}.")


@rule(
    "G004",
    "attention projections disagree with heads x head_dim",
    severity=ERROR,
    failure_modes=(6,),
    scope=CHECKPOINT,
    fix="write `head_dim` (and the heads / `num_key_value_heads`) in `config.json` to match the weights; the message gives the value.",
)
def heads_times_head_dim(c: Context) -> Iterator[Hit]:
    """`q_proj` outputs must be `num_attention_heads × head_dim` and `k_proj` outputs `num_key_value_heads ×
    head_dim`. When the config has no `head_dim`, engines derive `hidden_size / heads`, which is wrong for the
    Qwen3 family: SGLang 0.4.9 ran the Qwen3-8B drafter but not the 4B one (sgl-project/sglang issue #8038,
    SafeAILab/EAGLE issue #315). The load raises a size mismatch (L003). MLA drafters (vLLM's
    Eagle3DeepseekV2ForCausalLM: a config with `kv_lora_rank`) size q_proj as heads × (qk_nope + qk_rope): their
    class's own rows check it.
    """
    d = c.d
    if d.cfg.get("kv_lora_rank") is not None:
        return
    nh, nkv, hd = d.num_heads, d.num_kv_heads, d.head_dim
    if d.q_out and nh and hd and d.q_out != nh * hd:
        hint = (
            ""
            if d.head_dim_explicit
            else (
                f" (config has no head_dim, so engines derive hidden_size/heads = {hd}; set head_dim = {d.q_out // nh})"
                if d.q_out % nh == 0
                else ""
            )
        )
        yield Hit(
            ERROR,
            f"q_proj has {d.q_out} outputs but config says {nh} heads × head_dim {hd} = {nh * hd}{hint}.",
            "write head_dim (and heads) in config.json to match the weights",
        )
    if d.kv_out and nkv and hd and d.kv_out != nkv * hd:
        yield Hit(
            ERROR,
            f"k_proj has {d.kv_out} outputs but config says {nkv} KV heads × head_dim {hd} = {nkv * hd}.",
            "write num_key_value_heads / head_dim in config.json to match the weights",
        )


@rule(
    "G005",
    "lm_head rows differ from draft_vocab_size",
    severity=ERROR,
    failure_modes=(9, 25),
    scope=CHECKPOINT,
    fix="set `draft_vocab_size` to the number of `lm_head` rows.",
)
def head_rows(c: Context) -> Iterator[Hit]:
    """The engine builds the head (and the `d2t` table) with `draft_vocab_size` rows; the shipped `lm_head` has
    another number, so the load raises a size mismatch, or draft ids are read against the wrong map.
    """
    d = c.d
    if d.draft_vocab_from_keys and d.draft_vocab_size and d.draft_vocab_from_keys != d.draft_vocab_size:
        yield Hit(
            ERROR,
            f"lm_head has {d.draft_vocab_from_keys} rows but draft_vocab_size is {d.draft_vocab_size}.",
            f"set draft_vocab_size to {d.draft_vocab_from_keys}",
        )


@rule(
    "G006",
    "decoder layers in the keys differ from num_hidden_layers",
    severity=ERROR,
    failure_modes=(7,),
    scope=CHECKPOINT,
    fix="set `num_hidden_layers` to the number of decoder layers in the keys.",
)
def layer_count(c: Context) -> Iterator[Hit]:
    """The engine builds `num_hidden_layers` draft layers; the keys hold another number. Extra layers' weights are
    dropped (L001) or refused (L004), missing ones stay random (L002), and SGLang ≤ 0.5.11 refuses any count
    but 1 (L006). Some released configs misstate it (a 1-layer drafter saying 40).
    """
    d = c.d
    if d.cfg_layers is not None and d.layers_in_keys and d.cfg_layers != d.layers_in_keys:
        yield Hit(
            ERROR,
            f"the keys hold {d.layers_in_keys} decoder layer(s) but config num_hidden_layers is {d.cfg_layers}.",
            f"set num_hidden_layers to {d.layers_in_keys}",
        )


@rule(
    "G007",
    "draft and target hidden sizes differ without target_hidden_size",
    severity=ERROR,
    failure_modes=(5,),
    scope=CHECKPOINT,
    fix='add `"target_hidden_size": <the target\'s hidden_size>` to `config.json` (the message gives the number).',
)
def target_hidden_size_missing(c: Context) -> Iterator[Hit]:
    """The draft is narrower or wider than the target and `config.json` has no `target_hidden_size`: engines size
    `fc` (and the aux inputs) from `hidden_size`, so the target's aux states do not fit and loading or the
    first forward fails (vllm-project/vllm issue #18906; sgl-project/sglang PR #4716 added the key).
    """
    d, t = c.d, c.target
    H = d.hidden_size
    if t and t.hidden_size and H and H != t.hidden_size and not d.cfg_target_hidden_size:
        yield Hit(
            ERROR,
            f"draft hidden size {H} differs from the target's {t.hidden_size} but config.json has no target_hidden_size: "
            "engines size fc from hidden_size and the aux states will not fit.",
            f'add "target_hidden_size": {t.hidden_size}',
        )


@rule(
    "G008",
    "aux layer id count differs from the fc width",
    severity=ERROR,
    failure_modes=(20,),
    scope=CHECKPOINT,
    fix="configure exactly k aux layer ids — the target layers the drafter was trained on, from the training run's config (then `specbridge convert PATH --engine NAME==VERSION -o OUT` writes them where the engine reads them).",
)
def aux_id_count(c: Context) -> Iterator[Hit]:
    """`fc` takes k aux states (its input width / target hidden size) but the config lists another number of aux
    layer ids. The engine captures one state per id, so it feeds fc the wrong width: a crash combining them,
    or fc never runs (A003).
    """
    ids = c.d.aux_ids
    if ids is not None and c.k and len(ids) != c.k:
        yield Hit(ERROR, f"fc takes {c.k} aux states ({c.d.fc_in} = {c.k} × {c.ht}) but {len(ids)} aux layer ids are configured {ids}.")


# vLLM releases whose KV-cache manager needs one page size for every attention layer, draft included
# (v1/core/kv_cache_utils.py get_kv_cache_config: NotImplementedError otherwise); UniformTypeKVCacheSpecs lifts it
# from 0.11.0 (first in that wheel, absent from 0.10.2). Which eras: FamilyRange.kv_one_page_size in the engine tables


def _kv_width(cfg: dict, hidden: int | None) -> int | None:
    """num_key_value_heads × head_dim of one attention layer: what it stores per token in the KV cache."""
    nh = cfg.get("num_attention_heads")
    nkv = cfg.get("num_key_value_heads") or nh
    hd = cfg.get("head_dim") or (hidden // nh if type(hidden) is int and type(nh) is int and nh else None)
    return nkv * hd if type(nkv) is int and type(hd) is int else None


@rule(
    "G009",
    "draft KV-cache geometry differs from the target's",
    severity=ERROR,
    fix="serve on vLLM ≥ 0.11 (or SGLang), or use a drafter whose `num_key_value_heads × head_dim` equals the target's.",
)
def kv_cache_geometry(c: Context) -> Iterator[Hit]:
    """The draft's attention layer stores `num_key_value_heads × head_dim` per token in the KV cache, and that
    differs from the target's (a drafter with its own head layout, e.g. more KV heads than a GQA target).
    Engines have handled it differently: vLLM 0.8.5 requires one KV-cache type for every attention layer,
    draft included, and raises a bare `NotImplementedError` at start-up (`v1/core/kv_cache_utils.py`
    `get_kv_cache_config` / `is_kv_cache_type_uniform`@v0.8.5); 0.10.2 also accepts layers of equal page
    size, which different per-token widths are not (`get_kv_cache_config`@v0.10.2). From 0.11.0 (first in that
    wheel) `UniformTypeKVCacheSpecs` puts full-attention layers of different sizes in one group, and the real
    engine allocates both on CPU (0.27.0, 0.29.0, 0.30.0, 0.32.0 conformance runs: draft KV heads 1 and head_dim 16
    against a target of 2 × 32): an error for vLLM before 0.11 (`FamilyRange.kv_one_page_size`), information elsewhere. MLA
    targets (a `kv_lora_rank` in their config) keep a latent cache of another type and are not compared.
    """
    t, d = c.target, c.d
    if t is None or "kv_lora_rank" in t.text or not (d.num_kv_heads and d.head_dim):
        return
    mine, theirs = d.num_kv_heads * d.head_dim, _kv_width(t.text, t.hidden_size)
    if theirs is None or mine == theirs:
        return
    what = (
        f"the draft layer stores {d.num_kv_heads} KV heads × head_dim {d.head_dim} = {mine} values per token, the target's layers {theirs}"
    )
    if c.rep.era.kv_one_page_size:
        yield Hit(
            ERROR,
            f"{what}: {c.eng} allocates one KV-cache page size for every attention layer, the draft's included, "
            "and raises NotImplementedError at start-up (v1/core/kv_cache_utils.py get_kv_cache_config).",
            "serve on vLLM >= 0.11 (per-layer KV sizes) or SGLang, or use a drafter with the target's KV heads × head_dim",
        )
    else:
        yield Hit(INFO, f"{what}; {c.eng} sizes the draft layer's KV cache on its own (no start-up failure is known for it).")
