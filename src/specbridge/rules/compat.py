"""Drafter ↔ target ↔ launch compatibility: the failures that load fine and still accept nothing.

Each rule is a small function returning findings; `compat_findings` runs them all. Rule codes are
catalogued in `findings.py` and documented in docs/rules.md; docs/coverage.md maps them to the
failure-mode rows and tests.
"""

from __future__ import annotations

import operator
from array import array
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from ..checkpoint.errors import CheckpointError
from ..checkpoint.reader import Checkpoint
from ..checkpoint.target import TargetInfo, rope_of
from ..checkpoint.values import int_array
from ..engines.capture import default_boundaries, engine_capture
from ..engines.launch import Launch
from ..engines.simulate import LoadReport
from ..engines.spec import parse_version
from ..layouts.canonical import Drafter
from ..layouts.embedding import EmbedStats, embed_stats
from .findings import ERROR, INFO, WARNING, Finding, finding


@dataclass
class Context:
    ckpt: Checkpoint
    d: Drafter
    rep: LoadReport | None  # None while computing the engine-independent CheckpointFacts
    target: TargetInfo | None = None
    launch: Launch | None = None
    path: str = "PATH"
    out: list[Finding] = field(default_factory=list)
    aux: dict | None = None  # the resolved aux-layer table, for display
    parent: Checkpoint | None = None  # the checkpoint this one was fine-tuned from

    @property
    def eng(self) -> str:
        return f"{self.rep.engine} {self.rep.version}"

    def add(self, code, sev, msg, fix=None):
        self.out.append(finding(code, sev, msg, fix))

    @property
    def ht(self) -> int | None:
        if self.d.cfg_target_hidden_size:
            return self.d.cfg_target_hidden_size
        if self.target and self.target.hidden_size:
            return self.target.hidden_size
        return self.d.hidden_size

    @property
    def k(self) -> int | None:
        ht = self.ht
        if self.d.fc_in and ht and self.d.fc_in % ht == 0:
            return self.d.fc_in // ht
        return None

    def version_at_least(self, v: str) -> bool:
        return parse_version(self.rep.version) >= parse_version(v)


# --- geometry ---------------------------------------------------------------------------------


def geometry(c: Context) -> None:
    d = c.d
    H = d.hidden_size
    if d.fc_in and c.ht and d.fc_in % c.ht:
        c.add("G001", ERROR, f"fc.weight input width {d.fc_in} is not a multiple of the target hidden size {c.ht}: "
              "the concatenated aux states cannot feed it.", "check that this drafter was trained for this target")
    norm = d.tensors.get("norm.weight")
    if norm is not None and H and norm.shape[0] != H:
        c.add("G002", ERROR, f"fc.weight outputs {H} but norm.weight is {norm.shape[0]} wide: fc must map to the draft hidden size.")
    q = d.tensors.get("layers.0.self_attn.q_proj.weight")
    if q is not None and H and len(q.shape) == 2 and q.shape[1] != 2 * H:
        c.add("G003", ERROR, f"layers.0 q_proj takes {q.shape[1]} inputs; EAGLE-3's first layer takes cat(embeds, hidden) = 2×{H} = {2 * H}.")
    nh, nkv, hd = d.num_heads, d.num_kv_heads, d.head_dim
    if d.q_out and nh and hd and d.q_out != nh * hd:
        hint = "" if d.head_dim_explicit else f" (config has no head_dim, so engines derive hidden_size/heads = {hd}; set head_dim = {d.q_out // nh})" if d.q_out % nh == 0 else ""
        c.add("G004", ERROR, f"q_proj has {d.q_out} outputs but config says {nh} heads × head_dim {hd} = {nh * hd}{hint}.",
              "write head_dim (and heads) in config.json to match the weights")
    if d.kv_out and nkv and hd and d.kv_out != nkv * hd:
        c.add("G004", ERROR, f"k_proj has {d.kv_out} outputs but config says {nkv} KV heads × head_dim {hd} = {nkv * hd}.",
              "write num_key_value_heads / head_dim in config.json to match the weights")
    if d.draft_vocab_from_keys and d.draft_vocab_size and d.draft_vocab_from_keys != d.draft_vocab_size:
        c.add("G005", ERROR, f"lm_head has {d.draft_vocab_from_keys} rows but draft_vocab_size is {d.draft_vocab_size}.",
              f"set draft_vocab_size to {d.draft_vocab_from_keys}")
    if d.cfg_layers is not None and d.layers_in_keys and d.cfg_layers != d.layers_in_keys:
        c.add("G006", ERROR, f"the keys hold {d.layers_in_keys} decoder layer(s) but config num_hidden_layers is {d.cfg_layers}.",
              f"set num_hidden_layers to {d.layers_in_keys}")
    if c.target and c.target.hidden_size and H and H != c.target.hidden_size and not d.cfg_target_hidden_size:
        c.add("G007", ERROR, f"draft hidden size {H} differs from the target's {c.target.hidden_size} but config.json has no target_hidden_size: "
              f"engines size fc from hidden_size and the aux states will not fit.", f"add \"target_hidden_size\": {c.target.hidden_size}")
    ids = d.aux_ids
    if ids is not None and c.k and len(ids) != c.k:
        c.add("G008", ERROR, f"fc takes {c.k} aux states ({d.fc_in} = {c.k} × {c.ht}) but {len(ids)} aux layer ids are configured {ids}.")


# vLLM releases whose KV-cache manager needs one page size for every attention layer, draft included
# (v1/core/kv_cache_utils.py get_kv_cache_config@v0.8.5 and @v0.10.2: NotImplementedError otherwise);
# UniformTypeKVCacheSpecs (read at v0.14.0) lifts it
KV_ONE_PAGE_SIZE = {"vllm": ("0.8.5", "0.10.99")}


def _kv_width(cfg: dict, hidden: int | None) -> int | None:
    """num_key_value_heads × head_dim of one attention layer: what it stores per token in the KV cache."""
    nh = cfg.get("num_attention_heads")
    nkv = cfg.get("num_key_value_heads") or nh
    hd = cfg.get("head_dim") or (hidden // nh if type(hidden) is int and type(nh) is int and nh else None)
    return nkv * hd if type(nkv) is int and type(hd) is int else None


def kv_geometry(c: Context) -> None:
    """The draft layer's KV-cache width against the target's (G009): fatal where one page size is required."""
    t, d = c.target, c.d
    if t is None or "kv_lora_rank" in t.text or not (d.num_kv_heads and d.head_dim):
        return
    mine, theirs = d.num_kv_heads * d.head_dim, _kv_width(t.text, t.hidden_size)
    if theirs is None or mine == theirs:
        return
    span = KV_ONE_PAGE_SIZE.get(c.rep.engine)
    what = (f"the draft layer stores {d.num_kv_heads} KV heads × head_dim {d.head_dim} = {mine} values per token, the target's "
            f"layers {theirs}")
    if span and parse_version(span[0]) <= parse_version(c.rep.version) <= parse_version(span[1]):
        c.add("G009", ERROR, f"{what}: {c.eng} allocates one KV-cache page size for every attention layer, the draft's included, "
              "and raises NotImplementedError at start-up (v1/core/kv_cache_utils.py get_kv_cache_config).",
              "serve on vLLM >= 0.11 (per-layer KV sizes) or SGLang, or use a drafter with the target's KV heads × head_dim")
    else:
        c.add("G009", INFO, f"{what}; {c.eng} sizes the draft layer's KV cache on its own (no start-up failure is known for it).")


# --- vocab maps -------------------------------------------------------------------------------
# d2t has up to ~10^5–10^6 entries and t2d ~10^6: every pass below runs in C (array methods, map/filter
# over builtins, min/max), never a Python-level loop per entry.


def d2t_targets(d2t: array):
    """The target id of each draft id (target_id = i + d2t[i]), lazily; Python ints, so hostile offsets
    near ±2^63 cannot overflow."""
    return map(operator.add, d2t, range(len(d2t)))


def target_id_range(d2t: array, ascending: bool) -> tuple[int, int]:
    """Smallest and largest target id d2t selects. Ascending offsets mean increasing target ids, so the
    ends are the first and last entries: no pass over the map."""
    if ascending:
        return d2t[0], len(d2t) - 1 + d2t[-1]
    tgt = list(d2t_targets(d2t))
    return min(tgt), max(tgt)


def unset_in_t2d(t2d: array, d2t: array, inside: bool) -> int:
    """How many of d2t's target ids t2d does not mark (ids outside t2d are V003's business, not counted).
    `inside`: every id is known to lie in t2d, so the range filter is skipped."""
    ids = d2t_targets(d2t)
    if not inside:
        ids = filter(range(len(t2d)).__contains__, ids)
    return operator.countOf(map(t2d.__getitem__, ids), 0)



def vocab(c: Context) -> None:
    d = c.d
    V = (c.target.vocab_size if c.target and c.target.vocab_size else None) or d.vocab_size or d.vocab_from_keys
    Vd = d.draft_vocab_from_keys or d.draft_vocab_size
    if c.target and c.target.vocab_size and d.vocab_size and d.vocab_size != c.target.vocab_size:
        c.add("V009", ERROR, f"drafter vocab_size {d.vocab_size} differs from the target's {c.target.vocab_size}: "
              "drafter and target do not share a tokenizer.", "use a drafter trained for this target")
    emb = d.tensors.get("embed_tokens.weight")
    if c.target and c.target.vocab_size and emb is not None and emb.shape[0] != c.target.vocab_size:
        c.add("V009", ERROR, f"embed_tokens has {emb.shape[0]} rows, the target vocab has {c.target.vocab_size}.")
    d2t_info = d.tensors.get("d2t")
    t2d_info = d.tensors.get("t2d")
    if d2t_info is None:
        if Vd and V and Vd < V:
            c.add("V006", ERROR, f"reduced draft vocab ({Vd} < {V}) without a d2t tensor: engines then read draft id i as target id i "
                  "and every draft is wrong (vLLM logs 'Assuming draft and target model share the same vocab').",
                  "add d2t (offsets: target_id = i + d2t[i]) from the training run's vocab mapping")
        return
    if Vd and V and Vd == V:
        c.add("V007", WARNING, f"full-vocab drafter (draft_vocab_size = vocab_size = {V}) ships d2t/t2d: vLLM ≥ 0.32 refuses it, "
              "older vLLM pays a scatter on every step.", f"specbridge convert {c.path} --engine vllm -o OUT (drops d2t/t2d)")
    if d2t_info.dtype not in ("I64", "I32"):
        c.add("V001", ERROR, f"d2t has dtype {d2t_info.dtype}; it must hold integer offsets (int64).")
        return
    if d2t_info.dtype != "I64":
        c.add("V001", WARNING, f"d2t is {d2t_info.dtype}; producers and SGLang/vLLM use int64 (TensorRT-LLM converts to int32 itself).",
              f"specbridge convert {c.path} --to {c.d.layout} -o OUT (writes int64)")
    try:
        d2t = int_array(d2t_info)
    except CheckpointError as e:
        c.add("V001", ERROR, e.message)
        return
    if Vd and len(d2t) != Vd:
        c.add("V002", ERROR, f"d2t has {len(d2t)} entries but the draft vocab (lm_head rows) is {Vd}.")
    n = len(d2t)
    # offsets never decreasing <=> target ids strictly increasing (one-to-one, sorted as producers write them)
    ascending = all(map(operator.le, d2t, islice(d2t, 1, None)))
    if n > 1 and d2t[0] == 0 and d2t[-1] == n - 1 and d2t == array(d2t.typecode, range(n)):
        c.add("V008", ERROR, "d2t == arange: it holds absolute ids where offsets are expected, so target id = 2i for draft id i.",
              "store offsets: d2t[i] = target_id[i] - i")
    lo, hi = target_id_range(d2t, ascending) if n else (0, -1)
    if V and n and (lo < 0 or hi >= V):
        tgt = list(d2t_targets(d2t))
        outside = list(map(operator.not_, map(range(V).__contains__, tgt)))
        first = outside.index(True)
        c.add("V003", ERROR, f"{outside.count(True)} d2t entries map outside the target vocab [0, {V}) (first: draft id {first} → {tgt[first]}).")
    if not ascending:
        taken = n - len(set(d2t_targets(d2t)))
        if taken:
            c.add("V004", ERROR, f"d2t maps {taken} draft ids onto target ids already taken: the map is not one-to-one.")
        else:
            c.add("V004", WARNING, "d2t's target ids are not increasing; every producer writes them sorted ascending.")
    if t2d_info is not None:
        try:
            t2d = int_array(t2d_info)
        except CheckpointError as e:
            c.add("V005", ERROR, e.message)
            return
        problems = []
        if V and len(t2d) != V:
            problems.append(f"length {len(t2d)} ≠ target vocab {V}")
        set_count = len(t2d) - t2d.count(0)
        if set_count != len(d2t):
            problems.append(f"{set_count} entries set ≠ {len(d2t)} draft ids")
        miss = unset_in_t2d(t2d, d2t, inside=lo >= 0 and hi < len(t2d))
        if miss:
            problems.append(f"{miss} ids selected by d2t are not set in t2d")
        if problems:
            c.add("V005", ERROR, "t2d disagrees with d2t: " + "; ".join(problems) + ".", "recompute t2d from d2t (specbridge convert)")
    if c.parent is not None:
        pd = c.parent.tensors.get(next((n for n in c.parent.tensors if n.endswith("d2t")), ""), None)
        if pd is None:
            c.add("V011", WARNING, f"the parent checkpoint {c.parent.root} has no d2t to compare with.")
        elif (parent_d2t := int_array(pd)).tolist() != d2t.tolist():
            diff = sum(map(operator.ne, parent_d2t, d2t)) + abs(len(d2t) - pd.shape[0])
            c.add("V011", ERROR, f"d2t differs from the parent checkpoint's in {diff} position(s): the vocab map was recomputed "
                  "during fine-tuning, so lm_head row i now scores another token than it learned (SpecForge #534).",
                  "restore the parent's d2t/t2d and retrain, or resume with the parent's vocab map")
    if c.target and c.target.tokenizer_sha256:
        own = c.ckpt.root / "tokenizer.json"
        if own.is_file():
            import hashlib

            if hashlib.sha256(own.read_bytes()).hexdigest() != c.target.tokenizer_sha256:
                c.add("V010", WARNING, "the drafter's tokenizer.json differs from the target's.", "confirm both use the same tokenizer revision")


# --- aux layers ---------------------------------------------------------------------------------


def output_of_layer_default(n: int) -> list[int]:
    """[1, N//2-1, N-4]: SpecForge/ModelOpt/SGLang's default ids (outputs of those layers). Top-level ids equal to
    it were copied from an eagle_config without the +1 that input-of-layer readers need (e.g. the speculators
    converter, nm-testing/Qwen3-235B-A22B-EAGLE3-converted-speculators-lmsys)."""
    return sorted({1, n // 2 - 1, n - 4})


def aux_layers(c: Context) -> None:
    d, t = c.d, c.target
    if c.launch:
        algo = c.launch.algorithm
        eagle3 = algo in ("EAGLE3",) if c.launch.engine == "sglang" else algo in ("EAGLE3",)
        if algo and not eagle3 and c.k and c.k >= 2:
            if c.launch.engine == "sglang" and algo == "EAGLE":
                same = (d.hidden_size or 0) == (c.ht or -1)
                what = (
                    f"SGLang never captures aux states, feeds fc's place a single {c.ht}-wide hidden state, and — because that width "
                    f"equals the draft hidden size — skips the fusion fc [{d.hidden_size}, {d.fc_in}] silently (shape check in "
                    "llama_eagle3 forward): accept length ≈ 1.00"
                    if same
                    else "SGLang feeds a single hidden state into fc and fails with a shape error"
                )
                c.add("A004", ERROR, f"launched with --speculative-algorithm EAGLE but this is an EAGLE-3 drafter ({c.k} aux states): {what}.",
                      "launch with --speculative-algorithm EAGLE3")
            else:
                c.add("A004", ERROR, f"launched with method {algo!r} but this is an EAGLE-3 drafter ({c.k} aux states).",
                      "use --speculative-algorithm EAGLE3 (SGLang) / \"method\": \"eagle3\" (vLLM)")
    if t is None or not t.num_layers:
        return
    n = t.num_layers
    ids = d.aux_ids
    if ids is not None and any(not 0 <= i <= n for i in ids):
        c.add("A005", ERROR, f"aux layer ids {ids} lie outside the target's {n} layers.")
    # what the drafter was trained on, as physical boundaries
    alt = None  # the other reading, when the evidence disagrees
    if ids is None:
        trained = default_boundaries(n)
        trained_note = f"no ids recorded: assumed the producers' shared default, boundaries {trained}"
    elif d.aux_ids_where == "top-level" and sorted(ids) == output_of_layer_default(n):
        trained = [i + 1 for i in ids]
        trained_note = (f"ids {ids} at top level, but they are exactly the output-of-layer default [1, N//2-1, N-4] of "
                        "SpecForge/ModelOpt/SGLang: copied from an eagle_config without the +1 (speculators' converter copies "
                        f"ids verbatim), so boundaries {trained}")
    elif d.aux_ids_where == "top-level":
        trained = list(ids)
        trained_note = f"ids {ids} at top level (speculators/vLLM convention: input of layer i)"
    else:
        trained = [i + 1 for i in ids]
        trained_note = f"ids {ids} under eagle_config (SpecForge/ModelOpt convention: output of layer i = boundary i+1)"
        if d.key_style == "layers" and d.config_style != "speculators":
            # tensors in speculators/vLLM naming under an SGLang-style config: the ids may have been copied
            # from a speculators config (input-of-layer) — the story's situation
            alt = list(ids)
    ec_ids = ids if d.aux_ids_where == "eagle_config" else None
    top_ids = ids if d.aux_ids_where == "top-level" else None
    cap = engine_capture(c.rep.engine, c.rep.version, t.architecture, t.text_model_type or t.model_type, n, top_ids, ec_ids)
    c.aux = {"trained": trained, "trained_note": trained_note, "fed": cap.boundaries, "ids_source": cap.ids_source,
             "notes": cap.notes, "alternative_trained": alt}
    if cap.supported is False:
        c.add("A001", ERROR, f"{cap.support_note}: the target cannot hand aux hidden states to the drafter on {c.eng} "
              f"({cap.cite}).", "use an engine version whose target class captures aux states (see docs/rules.md#A001)")
    fed = cap.boundaries
    if fed is None:
        return
    msg_base = f"trained on target boundaries {trained} ({trained_note}); {c.eng} feeds {fed} ({cap.ids_source})"
    notes = ("; " + "; ".join(cap.notes)) if cap.notes else ""
    fix = f"specbridge convert {c.path} --engine {c.rep.engine}=={c.rep.version} -o OUT (writes the ids where and how this engine reads them)"
    if d.aux_ids_where == "top-level" and trained != list(ids or []):
        fix = f"write \"eagle_aux_hidden_state_layer_ids\": {trained} (boundaries, input-of-layer) at the top level of config.json"
    if c.k and len(fed) != c.k:
        c.add("A003", ERROR, f"{c.eng} captures {len(fed)} aux state(s) {fed} but fc expects {c.k}: {msg_base}{notes}. "
              "The engine crashes combining them, or fc never runs.", fix)
    elif sorted(fed) != sorted(trained):
        c.add("A002", ERROR, f"aux layers off: {msg_base}{notes}. Position-0 acceptance collapses when fc sees other layers than in training.", fix)
    elif alt is not None and sorted(alt) != sorted(fed):
        c.add("A002", WARNING, f"aux-layer convention ambiguous: the tensors are in speculators/vLLM naming but the ids {ids} sit under "
              f"eagle_config. Read as SpecForge-style output-of-layer ids they mean boundaries {trained}, which {c.eng} feeds; if they were "
              f"copied from a speculators config (input-of-layer) the drafter was trained on {alt} and {c.eng} is off by one{notes}.",
              "confirm the training run's layer ids; specbridge eval measures position-0 acceptance either way")
    else:
        c.add("A006", INFO, f"aux layers agree: {msg_base}{notes}.")


# --- embedding / head -----------------------------------------------------------------------------


def embed_head(c: Context, emb: EmbedStats | None) -> None:
    d = c.d
    Vd = d.draft_vocab_from_keys or d.draft_vocab_size
    V = d.vocab_size or d.vocab_from_keys
    # engines differ: SGLang's class makes lm_head the embedding when the flag is set (llama_eagle3.py: lm_head =
    # model.embed_tokens), vLLM's always builds its own lm_head of draft_vocab_size rows and never reads the flag
    # (llama_eagle3.py@v0.32.0 Eagle3LlamaForCausalLM.__init__). Judge the flag by what this engine's class built.
    ties = not any(p.role == "head" for p in c.rep.params)
    if d.tie_word_embeddings and not ties:
        c.add("E001", INFO, f"tie_word_embeddings is true, but {c.eng}'s EAGLE-3 class ignores it: it builds its own "
              "lm_head of draft_vocab_size rows (loaded from the checkpoint, or shared from the target when absent).")
    elif d.tie_word_embeddings and Vd and V and Vd != V:
        c.add("E001", ERROR, f"tie_word_embeddings is true with a reduced draft vocab ({Vd} ≠ {V}): the head would be the {V}-row embedding.",
              "set tie_word_embeddings to false")
    elif d.tie_word_embeddings and d.has("lm_head.weight"):
        c.add("E001", WARNING, "tie_word_embeddings is true but the checkpoint also ships lm_head.weight: one of them is ignored.")
    if emb is None:
        return
    mean, std, init, fresh, differs = emb.mean, emb.std, emb.init, emb.fresh, emb.differs
    own_kept = any(p.role == "embed" and p.status in ("loaded", "own-unless-equal") for p in c.rep.params)
    stats = f"mean {mean:.4f}, std {std:.4f} ≈ initializer_range {init}"
    if differs is None:
        if fresh:
            c.add("E002", INFO, f"embed_tokens has the statistics of a fresh initialisation ({stats}); without the target's weights "
                  "this cannot be confirmed.", "pass --target with the target's weights to compare the tables")
    elif differs and fresh:
        sev = ERROR if own_kept else WARNING
        use = f"{c.eng} keeps the drafter's own table" if own_kept else f"{c.eng} replaces it with the target's"
        c.add("E002", sev, f"embed_tokens differs from the target's embedding and looks freshly initialised ({stats}): {use}.",
              "export the drafter with the target's embedding (or without embed_tokens, so engines share the target's)")
    elif differs and own_kept:
        c.add("E003", INFO, f"embed_tokens differs from the target's; {c.eng} keeps the drafter's own (trained) table.")
    elif differs:
        c.add("E003", WARNING, f"embed_tokens differs from the target's, but {c.eng} replaces it with the target's: "
              "a drafter trained with its own table loses it.")


# --- config and launch ----------------------------------------------------------------------------


def config_launch(c: Context) -> None:
    d, t, L = c.d, c.target, c.launch
    cfg = d.cfg
    served = (L.context_length if L and L.context_length else None) or (t.max_position_embeddings if t else None)
    dmax = cfg.get("max_position_embeddings") if type(cfg.get("max_position_embeddings")) is int else None
    if served and dmax and dmax < served:
        c.add("C001", WARNING, f"draft max_position_embeddings {dmax} < served context {served}: drafts degrade past {dmax} tokens "
              "(vLLM 0.24 crashed with an index assert there).", "cap the served context, or train/convert the drafter for the full length")
    if t:
        dr, tr = rope_of(cfg), t.rope
        if dr.get("rope_theta") and tr.get("rope_theta") and float(dr["rope_theta"]) != float(tr["rope_theta"]):
            c.add("C002", WARNING, f"draft rope_theta {dr['rope_theta']} ≠ target rope_theta {tr['rope_theta']}.",
                  "confirm the drafter was trained with this RoPE (transformers 5 moved rope_theta into rope_parameters)")
        if dr.get("rope_type") not in (None, "default") and dr.get("rope_type") != tr.get("rope_type"):
            c.add("C002", WARNING, f"draft rope_type {dr['rope_type']!r} ≠ target's {tr.get('rope_type')!r}.")
        ddt = str(cfg.get("torch_dtype") or cfg.get("dtype") or "").lower()
        tdt = str(t.dtype or "").lower()
        if "float16" in ddt and "bfloat16" not in ddt and "bfloat16" in tdt:
            c.add("C003", WARNING, "draft dtype float16 with a bfloat16 target: fp16 overflows on degenerate draft branches (NaN logits).",
                  "serve the drafter in bfloat16")
        q = t.quantization if isinstance(t.quantization, dict) else None
        if q:
            qtext = str(q).lower()
            if any(k in qtext for k in ("quarot", "spinquant", "rotation", "hadamard")):
                c.add("C005", WARNING, "the target is rotated (QuaRot/SpinQuant-style): its hidden states live in another basis than the drafter saw.",
                      "measure offline acceptance on the deployed target (specbridge eval)")
            if "quantization_config" not in c.ckpt.config:
                sev = ERROR if (L and L.engine == "sglang" and L.quantization and not L.draft_quantization) else WARNING
                c.add("C004", sev, f"the target is quantized ({q.get('quant_method', '?')}) and the drafter is not: SGLang copies --quantization "
                      "to the draft unless told otherwise; some vLLM releases built the draft with the verifier's quant config.",
                      "give the draft its own (unquantized) setting, e.g. --speculative-draft-model-quantization unquant on SGLang")
        if t.tokenizer_sha256 is None and c.target and d.vocab_size and t.vocab_size and d.vocab_size == t.vocab_size:
            pass
    sw = cfg.get("sliding_window")
    lt = cfg.get("layer_types")
    if (sw and cfg.get("use_sliding_window", True)) or (isinstance(lt, list) and any(x != "full_attention" for x in lt)):
        c.add("C007", WARNING, "the draft config asks for sliding-window attention: vLLM builds the draft attention from the verifier's settings and ignores it.")
    if d.has("fc.bias") and not cfg.get("bias"):
        c.add("C010", ERROR, "fc.bias is in the checkpoint but config.json has no bias flag: engines build fc without a bias and ignore (vLLM) or drop (SGLang) it.",
              "set \"bias\": true where the engine reads it, or retrain without the bias")
    variant_flags(c)
    if L:
        if not L.draft:
            c.add("C006", ERROR, "the launch names no draft model path: SGLang then loads the target as the draft (weights twice) and crashes.",
                  "pass --speculative-draft-model-path (SGLang) / \"model\" in --speculative-config (vLLM)")
        elif t and L.target and (Path(L.draft) == Path(L.target) or L.draft == L.target):
            c.add("C006", ERROR, "the draft path is the target path.", "point the draft path at the drafter checkpoint")
        if L.engine == "sglang" and L.topk is not None and L.steps is not None:
            if L.topk == 1 and L.draft_tokens is not None and L.draft_tokens != L.steps + 1:
                c.add("C008", WARNING, f"topk 1 with --speculative-num-draft-tokens {L.draft_tokens}: SGLang adjusts it to num_steps + 1 = {L.steps + 1}.",
                      f"--speculative-num-draft-tokens {L.steps + 1}")
            if L.topk > 1 and L.draft_tokens is not None and L.draft_tokens > L.topk * L.steps + 1:
                c.add("C008", ERROR, f"--speculative-num-draft-tokens {L.draft_tokens} exceeds the tree's {L.topk}×{L.steps}+1 nodes.")
            if L.topk > 1 and (L.attention_backend or "").lower() == "fa3":
                c.add("C008", ERROR, "--attention-backend fa3 supports only --speculative-eagle-topk 1 for EAGLE (sglang #5491).", "use topk 1 or another backend")
        if L.engine == "vllm" and L.algorithm and not L.steps and "speculators_config" not in c.ckpt.config and "n_predict" not in cfg:
            c.add("C008", ERROR, "vLLM needs num_speculative_tokens in --speculative-config ('A speculative model was provided, but num_speculative_tokens was not provided').")
        if L.draft_tp is not None and L.draft_tp not in (1, L.tp or 1):
            c.add("C009", WARNING, f"draft_tensor_parallel_size {L.draft_tp} is neither 1 nor the target TP {L.tp or 1}; several vLLM releases ignore it.")


VARIANT_SUPPORT = {
    # engine, since-version -> flags its EAGLE-3 drafter class reads (vLLM `transformers_utils/configs/eagle.py`,
    # `models/llama_eagle3.py`; SGLang `models/llama_eagle3.py`, per wheel)
    "vllm": (("0.32.0", {"norm_before_residual", "norm_before_fc", "fc_norm", "norm_output"}), ("0.10.0", {"norm_before_residual"}), ("0.8.5", set())),
    "sglang": (("0.5.20", {"norm_before_fc", "fc_norm", "norm_output"}), ("0.5.12", {"fc_norm", "norm_output"}), ("0.4.6", set())),
    # TensorRT-LLM's layer order for norm_before_residual was not verified: not judged here
    "trtllm": (("1.0.0", {"norm_before_fc", "fc_norm", "norm_output", "norm_before_residual"}),),
}


def variant_flags(c: Context) -> None:
    """Non-default architecture flags must be read by the engine version, or the drafter runs as another model."""
    cfg = c.d.cfg
    on = {f for f in ("norm_before_fc", "fc_norm", "norm_output", "use_aux_norm") if cfg.get(f) is True}
    if isinstance(cfg.get("eagle_config"), dict) and cfg["eagle_config"].get("norm_before_fc"):
        on.add("norm_before_fc")
    if "use_aux_norm" in on:
        on.discard("use_aux_norm")
        on.add("fc_norm")
    # norm_before_residual: speculators' default is true, vLLM's plain-config default false
    nbr = cfg.get("norm_before_residual")
    spec_style = c.d.config_style == "speculators"
    if nbr is True or (nbr is None and spec_style):
        on.add("norm_before_residual")
    table = VARIANT_SUPPORT.get(c.rep.engine, ())
    known = next((flags for since, flags in table if c.version_at_least(since)), set())
    for f in sorted(on - known):
        sglang_nbr = f == "norm_before_residual" and c.rep.engine == "sglang"
        sev = WARNING if sglang_nbr else ERROR
        c.add("C011", sev, f"the drafter uses {f} = true but {c.eng}'s EAGLE-3 class does not read it: the drafter runs as a different "
              "network than it was trained as"
              + (" (SGLang's llama_eagle3.py takes the residual before hidden_norm, always: `residual = hidden_states` in "
                 "LlamaDecoderLayer.forward; specbridge eval --engine sglang measures the cost)" if sglang_nbr else "") + ".",
              "train with norm_before_residual false for SGLang, or serve with vLLM (which reads the flag)"
              if sglang_nbr else "use an engine version that implements it (see docs/rules.md#C011)")
    if c.d.config_style == "speculators" and nbr is None:
        c.add("C011", INFO, "norm_before_residual is unset: vLLM's speculators translation defaults it to true; a converter writing a plain config must write it explicitly.")


@dataclass(frozen=True)
class CheckpointFacts:
    """What the rules learn from the drafter, its target and its parent alone. It names no engine, so
    `check` computes it once per checkpoint and every engine era reuses it: reading and counting a
    1.6 M-entry t2d, or sampling the embedding, happens once instead of once per era."""

    findings: tuple[Finding, ...]  # geometry and vocab-map findings, in rule order
    embed: EmbedStats | None


def checkpoint_facts(ckpt: Checkpoint, d: Drafter, target: TargetInfo | None, path: str,
                     parent: Checkpoint | None = None) -> CheckpointFacts:
    c = Context(ckpt, d, None, target, None, path, parent=parent)
    geometry(c)
    vocab(c)
    return CheckpointFacts(tuple(c.out), embed_stats(d, target))


def compat_findings(ckpt: Checkpoint, d: Drafter, rep: LoadReport, target: TargetInfo | None, launch: Launch | None, path: str,
                    parent: Checkpoint | None = None, *, facts: CheckpointFacts) -> tuple[list[Finding], dict | None]:
    """One engine era's compatibility findings: the shared `facts` first (geometry, vocab maps), then the
    rules that depend on what this era loads and feeds."""
    c = Context(ckpt, d, rep, target, launch, path, out=list(facts.findings), parent=parent)
    kv_geometry(c)
    aux_layers(c)
    embed_head(c, facts.embed)
    config_launch(c)
    return c.out, c.aux
