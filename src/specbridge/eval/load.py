"""Build the reference drafter from any checkpoint layout — as trained, or exactly as a given engine
version would load it (dropped tensors ignored, missing parameters at the engine's initial values,
embed/head shared or not, d2t applied or not, the aux layers that engine feeds, fc applied or
skipped by its width rule)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from ..checkpoint.sidefiles import MASK_FILE
from ..checkpoint.target import rope_of
from ..convert.configs import canon_config
from ..engines.capture import default_boundaries, engine_capture
from ..engines.simulate import BUFFER, LOADED, P_DEFAULT_INIT, P_SHARED, LoadReport
from ..layouts.canonical import Drafter
from ..model.drafter import DrafterConfig, Eagle3Drafter
from ..view import CheckpointView

TORCH_DTYPE = {
    "BF16": torch.bfloat16,
    "F16": torch.float16,
    "F32": torch.float32,
    "F64": torch.float64,
    "I64": torch.int64,
    "I32": torch.int32,
    "BOOL": torch.bool,
    "U8": torch.uint8,
}


def read_tensor(info) -> torch.Tensor:
    data = bytearray(info.read_bytes())
    t = torch.frombuffer(data, dtype=TORCH_DTYPE[info.dtype]) if data else torch.empty(0, dtype=TORCH_DTYPE[info.dtype])
    return t.reshape(info.shape)


@dataclass
class Built:
    model: Eagle3Drafter
    boundaries: list[int]  # target boundaries whose hidden states feed fc (input-of-layer b)
    skip_fc: bool  # the engine never applies fc (single hidden state of the draft's width)
    notes: list[str] = field(default_factory=list)
    refused: str | None = None  # the engine would not load/run this at all
    parallel: tuple | None = None  # P-EAGLE: (the masked slots' token, mask_hidden) for parallel drafting


def _engine_reads_nbr(report: LoadReport) -> bool:
    """Whether this engine version's EAGLE-3 class reads norm_before_residual (the era row's `variants`)."""
    return "norm_before_residual" in (report.era.variants or ())


def note_unloaded(report: LoadReport | None, notes: list[str]) -> None:
    """The note for the parameters the engine version never loads (check's load report), which eval models as garbage."""
    if report is not None and report.missing:
        m = report.missing
        notes.append(
            f"{len(m)} parameter(s) never loaded hold uninitialised memory (modelled as garbage: drafts through them are never accepted): "
            f"{', '.join(m[:3])}{' …' if len(m) > 3 else ''}"
        )


def build_drafter(
    view: CheckpointView,
    target_model,
    num_layers: int,
    report: LoadReport | None = None,
    target_arch: str | None = None,
    target_model_type: str | None = None,
    algorithm: str = "EAGLE3",
    seed: int = 0,
) -> Built:
    d: Drafter = view.drafter
    canon = canon_config(d)
    cfg = d.cfg
    H = d.hidden_size or d.cfg_hidden_size
    V = d.vocab_size or d.vocab_from_keys
    Vd = d.draft_vocab_from_keys or d.draft_vocab_size or V
    trained = canon.boundaries or default_boundaries(num_layers)
    notes: list[str] = []
    nbr = canon.norm_before_residual
    if report is not None and not _engine_reads_nbr(report) and nbr:
        nbr = False
        notes.append(f"{report.engine} {report.version} does not read norm_before_residual: runs with False")
    rope = rope_of(cfg)
    dc = DrafterConfig(
        hidden_size=H,
        intermediate_size=d.intermediate_from_keys or d.intermediate_size,
        num_heads=d.num_heads,
        num_kv_heads=d.num_kv_heads,
        head_dim=(d.q_out // d.num_heads) if d.q_out and d.num_heads else d.head_dim,
        vocab_size=V,
        draft_vocab_size=Vd,
        aux_layer_ids=list(trained),
        rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
        rope_theta=float(rope.get("rope_theta") or 10000.0),
        max_position_embeddings=int(cfg.get("max_position_embeddings") or 2048),
        norm_before_residual=nbr,
        target_hidden_size=d.cfg_target_hidden_size if d.cfg_target_hidden_size and d.cfg_target_hidden_size != H else None,
    )
    torch.manual_seed(seed)
    model = Eagle3Drafter(dc)
    # Engines allocate linear/embedding weights with torch.empty (whatever memory held) and norms
    # with ones. A parameter nothing fills is modelled as NaN: what it touches is garbage, and a
    # draft computed from garbage is never accepted (the story's accept length 1.00).
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.fill_(1.0 if (name.endswith("norm.weight") or "layernorm" in name) else float("nan"))
    fate = {t.name: t.status for t in report.tensors} if report is not None else None
    state = model.state_dict()
    loaded = []
    with torch.no_grad():
        for canon_name, info in d.tensors.items():
            if canon_name not in state:
                continue
            if fate is not None and fate.get(d.source_names[canon_name]) not in (LOADED, BUFFER):
                continue
            t = read_tensor(info)
            state[canon_name].copy_(t.to(state[canon_name].dtype))
            loaded.append(canon_name)
        # embedding: every engine falls back to (or replaces with) the target's
        emb_shared = report is None and "embed_tokens.weight" not in loaded
        if report is not None:
            emb_shared = any(p.role == "embed" and p.status == P_SHARED for p in report.params) or "embed_tokens.weight" not in loaded
        if emb_shared:
            state["embed_tokens.weight"].copy_(target_model.get_input_embeddings().weight)
        head_shared = report is not None and any(p.role == "head" and p.status == P_SHARED for p in report.params)
        if "lm_head.weight" not in loaded and (report is None or head_shared):
            head = target_model.get_output_embeddings().weight
            if Vd == V:
                state["lm_head.weight"].copy_(head)
                notes.append("lm_head taken from the target")
            else:
                return Built(
                    model, trained, False, notes, refused=f"the head is borrowed from the target ({V} rows) but the draft vocab is {Vd}"
                )
        if "d2t" not in loaded:
            if Vd != V:
                notes.append("no vocab map applied: draft id i is read as target id i")
            state["d2t"].zero_()
        if "t2d" not in loaded and Vd == V:
            state["t2d"].fill_(True)
    model.load_state_dict(state)
    model.eval()

    boundaries, skip_fc = list(trained), False
    if report is not None:
        if report.errors:  # dispatch included: a server that cannot pick a class does not start (check: L005)
            return Built(model, trained, False, notes, refused=f"{report.engine} {report.version} refuses to load it: {report.errors[0]}")
        note_unloaded(report, notes)
        if algorithm.upper() != "EAGLE3":
            skip_fc = (dc.target_hidden_size or H) == H
            boundaries = [num_layers]
            notes.append(
                f"--speculative-algorithm {algorithm}: no aux capture; the last hidden state goes in fc's place"
                + (" and fc is skipped (its width equals the draft hidden size)" if skip_fc else "")
            )
        else:
            top = d.aux_ids if d.aux_ids_where == "top-level" else None
            ec = d.aux_ids if d.aux_ids_where == "eagle_config" else None
            cap = engine_capture(report.engine, report.version, target_arch, target_model_type, num_layers, top, ec)
            if cap.supported is False:
                return Built(model, trained, False, notes, refused=cap.support_note)
            if cap.boundaries is not None:
                if len(cap.boundaries) != len(trained):
                    return Built(
                        model,
                        trained,
                        False,
                        notes,
                        refused=f"{report.engine} {report.version} captures {len(cap.boundaries)} aux states {cap.boundaries}, fc expects {len(trained)}: the engine crashes",
                    )
                if sorted(cap.boundaries) != sorted(trained):
                    notes.append(f"the engine feeds target layers {cap.boundaries}, trained on {trained}")
                boundaries = sorted(cap.boundaries)
    return Built(model, boundaries, skip_fc, notes)


# --- DFlash -------------------------------------------------------------------------------------------------------


@dataclass
class BuiltDFlash:
    model: object  # model.dflash.DFlashDrafter
    boundaries: list[int]  # target boundaries (input of layer b) whose states feed fc, in fc's order
    block_size: int
    notes: list[str] = field(default_factory=list)
    refused: str | None = None
    skip_fc: bool = False  # unused by DFlash: fc is part of the model (kept for eval_cmd's common JSON)


def dflash_boundaries(geom: dict) -> list[int] | None:
    """The target boundaries fc reads: dflash_config.target_layer_ids count layer outputs from 0, so boundary = id + 1
    (vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py @ 0.32.0 get_eagle3_aux_layers_from_config, z-lab's
    extract_context_feature offset 1); eagle_aux_hidden_state_layer_ids are boundaries already."""
    ids = geom["target_layer_ids"]
    if not ids:
        return None
    return [int(i) for i in ids] if geom["target_layer_ids_where"] == "eagle_aux_hidden_state_layer_ids" else [int(i) + 1 for i in ids]


def read_mask_embedding(root, mask_id: int) -> torch.Tensor:
    """mask_embedding.pt as vLLM's _read_mask_embedding reads it: a tensor, or {"embedding": …, "mask_token_id": …}."""
    state = torch.load(root / MASK_FILE, weights_only=True, map_location="cpu")
    if isinstance(state, dict):
        if state.get("mask_token_id", mask_id) != mask_id:
            raise ValueError(f"{MASK_FILE} mask_token_id {state.get('mask_token_id')} != dflash_config.mask_token_id {mask_id}")
        state = state["embedding"]
    return state.reshape(-1).float()


def build_dflash(
    view: CheckpointView, target_model, report: LoadReport | None = None, seed: int = 0, runner: str | None = None
) -> BuiltDFlash:
    """The DFlash drafter as trained (report None) or as this engine version loads it: a shipped tensor the engine does
    not load leaves its parameter at the engine's initial value (norms 1, anything else uninitialised memory, modelled
    as NaN: drafts through it are never accepted); embedding and head not loaded are the target's; the mask row comes
    from mask_embedding.pt only where the engine reads that side file; a sink bias the engine does not build is not
    applied. A DFlash2 drafter (grouped convolutions, candidate selector) is built whole; whether the selector runs
    is the engine row's runner fact (DraftClass.runner / other_runner): on the row's runner (vLLM: Model Runner V2,
    `runner` None) it does; on the other one (`runner` "V1") the row says whether the engine refuses (vLLM 0.29+) or
    drafts as base DFlash, per-slot argmax through the same convolved layers (vLLM 0.28.0)."""
    from ..families.dflash import geometry
    from ..model.dflash import DFlashConfig, DFlashDrafter

    ckpt = view.ckpt
    cfg = ckpt.config or {}
    geom = geometry(ckpt)
    notes: list[str] = []
    boundaries = dflash_boundaries(geom)
    if boundaries is None:
        return BuiltDFlash(None, [], 0, notes, refused="the config names no target layers (dflash_config.target_layer_ids)")
    if geom["mask_token_id"] is None and cfg.get("dspark_noise_token_id") is None:
        return BuiltDFlash(None, boundaries, 0, notes, refused="the config names no mask token (dflash_config.mask_token_id)")
    tensors = {n.removeprefix("model."): (n, info) for n, info in ckpt.tensors.items()}
    emb_t = target_model.get_input_embeddings().weight
    head_t = target_model.get_output_embeddings().weight
    V = emb_t.shape[0]
    fate = {t.name: t.status for t in report.tensors} if report is not None else None

    def kept(name: str) -> bool:
        return name in tensors and (fate is None or fate.get(tensors[name][0]) in (LOADED, BUFFER))

    # a shipped head the engine does not load (SGLang's DFlash has none) leaves the target's, over the whole vocab
    Vd = tensors["lm_head.weight"][1].shape[0] if kept("lm_head.weight") else V
    fc_in = (
        tensors["fc.weight"][1].shape[1]
        if "fc.weight" in tensors
        else int(cfg.get("target_hidden_size") or cfg["hidden_size"]) * len(boundaries)
    )
    c = DFlashConfig.from_hf(cfg, fc_in, V, Vd)
    if c.selector_rank and Vd != V:
        raise NotImplementedError(f"a DFlash2 candidate selector over a reduced draft vocab ({Vd} of {V}) is not modelled by eval")
    if c.dspark and "markov_head.markov_w1.weight" in tensors and tensors["markov_head.markov_w1.weight"][1].shape[0] != V:
        raise NotImplementedError(
            f"a DSpark Markov head over an input vocab of {tensors['markov_head.markov_w1.weight'][1].shape[0]} rows "
            f"(the target has {V}) is not modelled by eval"
        )
    if not c.use_aux:
        raise NotImplementedError("use_aux_hidden_state false (no fc: the target's last state read directly) is not modelled by eval")
    if report is not None and c.sink and not any(p.name.endswith("attention_sink_bias") for p in report.params):
        c.sink = False
        notes.append(
            f"{report.engine} {report.version} builds no attention_sink_bias: the sinks are not applied (shipped sink tensors dropped)"
        )
    torch.manual_seed(seed)
    model = DFlashDrafter(c)
    # decoder tensors (as trained, or as the engine loads them) with no slot in the Qwen3 DFlash layer the block step
    # implements (vLLM's Laguna DFlash: fused qkv_proj, a g_proj gate, aux_hidden_norms): another layer, not evaluated
    own = set(model.state_dict())
    foreign = sorted(
        n
        for n in tensors
        if (n.startswith("layers.") or n.startswith("aux_hidden_norms.")) and n not in own and kept(n) and "rotary_emb." not in n
    )
    if foreign:
        raise NotImplementedError(
            f"the drafter's layers are not the Qwen3 DFlash layers eval implements: no slot for {', '.join(foreign[:3])}"
            f"{' …' if len(foreign) > 3 else ''} (eval's block draft step does not model this decoder; check reads it)"
        )
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.fill_(1.0 if name.endswith("norm.weight") or "layernorm" in name else float("nan"))
        state = model.state_dict()
        loaded = set()
        for name, (orig, info) in tensors.items():
            if name not in state:
                continue
            if fate is not None and fate.get(orig) not in (LOADED, BUFFER):
                continue
            t = read_tensor(info)
            if name == "d2t":
                t = t.long()
            state[name].copy_(t.to(state[name].dtype))
            loaded.add(name)
        for name, src, what in (("embed_tokens.weight", emb_t, "embedding"), ("lm_head.weight", head_t, "lm_head")):
            if name in loaded:
                continue
            if state[name].shape != src.shape:
                return BuiltDFlash(
                    model,
                    boundaries,
                    c.block_size,
                    notes,
                    refused=f"the {what} is the target's ({tuple(src.shape)}) but the drafter needs {tuple(state[name].shape)}",
                )
            state[name].copy_(src)
            if name in tensors:
                notes.append(f"the shipped {name} is not loaded: the target's {what} is used")
        if "d2t" not in loaded:
            state["d2t"].zero_()
            if Vd != V:
                notes.append("no vocab map applied: draft id i is read as target id i")
        model.load_state_dict(state)
    root = ckpt.root if ckpt.root.is_dir() else ckpt.root.parent
    if (root / MASK_FILE).is_file() and c.dspark:
        notes.append(f"DSpark embeds mask token {c.mask_token_id} through embed_tokens: {MASK_FILE} is not read")
    elif (root / MASK_FILE).is_file():
        if report is None or MASK_FILE in (report.cls.side_files or ()):
            model.mask_embedding = read_mask_embedding(root, c.mask_token_id)
            notes.append(f"mask token {c.mask_token_id} embedded from {MASK_FILE}")
        else:
            notes.append(
                f"{report.engine} {report.version} does not read {MASK_FILE}: mask token {c.mask_token_id} embedded from the target's row"
            )
    if model.candidate_selector is not None:
        refused = _selector_runner(model, report, runner, notes)
        if refused:
            return BuiltDFlash(model, boundaries, c.block_size, notes, refused=refused)
    if c.dspark:
        refused = _dspark_runner(model, report, runner, notes)
        if refused:
            return BuiltDFlash(model, boundaries, c.block_size, notes, refused=refused)
    note_unloaded(report, notes)
    model.eval()
    return BuiltDFlash(model, boundaries, c.block_size, notes)


def _selector_runner(model, report: LoadReport | None, runner: str | None, notes: list[str]) -> str | None:
    """Whether DFlash2's candidate selector runs, from the engine row (the refusal, or None): as trained it does; an
    engine runs it on the row's runner only (DraftClass.runner), and on the other one refuses or drafts without it."""
    if report is None:
        notes.append("DFlash2: candidate selector walk (greedy) over the head's top-k per slot")
        return None
    cls = report.cls
    if not cls.runner:  # a class with no runner fact (a DFlash class given DFlash2 weights is refused before this)
        model.use_selector = False
        notes.append(f"{report.engine} {report.version} {cls.name} has no candidate selector step: per-slot argmax")
        return None
    chosen = (runner or cls.runner).upper()
    if chosen == cls.runner.upper():
        notes.append(
            f"{report.engine} {report.version} runs the candidate selector on Model Runner {cls.runner} (modelled here; "
            f"default: {cls.runner_default}); on the other runner: {cls.other_runner}"
        )
        return None
    if cls.other_runner_raises:
        return f"{report.engine} {report.version} on Model Runner {chosen}: {cls.other_runner}"
    model.use_selector = False
    notes.append(f"{report.engine} {report.version} on Model Runner {chosen}: {cls.other_runner}")
    return None


def _dspark_runner(model, report: LoadReport | None, runner: str | None, notes: list[str]) -> str | None:
    """DSpark's draft step (block from the anchor, the Markov walk) and on which runner the engine runs it (the
    refusal, or None): the row's runner (vLLM: Model Runner V2's DSparkSpeculator); the other one refuses."""
    c = model.c
    walk = f"top-{c.markov_topk} candidates per slot" if c.markov_topk is not None else "the whole draft vocab"
    layout = "[anchor, mask × (k-1)], every slot predicting" if c.sample_from_anchor else "[anchor, mask × k] (sample_from_anchor false)"
    notes.append(f"DSpark: block {layout}; Markov bias from the previous token over {walk} (greedy)")
    if model.confidence_head is not None:
        notes.append(
            "DSpark confidence head: ranks draft slots for adaptive verification (enable_adaptive_verification, off by "
            "default; its budget comes from profiled GPU timings, not modelled); every drafted token is verified here"
        )
    if report is None or not report.cls.runner:
        return None
    cls = report.cls
    chosen = (runner or cls.runner).upper()
    if chosen != cls.runner.upper() and cls.other_runner_raises:
        return f"{report.engine} {report.version} on Model Runner {chosen}: {cls.other_runner}"
    notes.append(f"{report.engine} {report.version} runs DSpark on Model Runner {cls.runner} (default: {cls.runner_default})")
    return None


# --- EAGLE-1/2 ----------------------------------------------------------------------------------------------------
@dataclass
class BuiltEagle1:
    model: object  # model.eagle1.Eagle1Drafter
    notes: list[str] = field(default_factory=list)
    refused: str | None = None


def build_eagle1(view: CheckpointView, target_model, report: LoadReport | None = None, seed: int = 0) -> BuiltEagle1:
    """The EAGLE-1/2 drafter as trained (report None: the research code's cnets.py builds fc with the bias it ships,
    the target's head unless one is shipped) or as this engine version loads it: a parameter the engine does not build
    is not applied (vLLM's fc has no bias: a shipped fc.bias is ignored), one it builds that nothing fills keeps its
    initial value (norms 1, a default-initialised bias U(±1/sqrt(2H)), anything else uninitialised memory, modelled as
    NaN: drafts through it are never accepted), embedding and head not loaded or replaced are the target's."""
    from ..model.eagle1 import Eagle1Config, Eagle1Drafter

    ckpt = view.ckpt
    cfg = ckpt.config or {}
    tensors = {n.removeprefix("model."): (n, info) for n, info in ckpt.tensors.items()}
    fate = {t.name: t.status for t in report.tensors} if report is not None else None
    params = {p.name.removeprefix("model."): p for p in report.params} if report is not None else {}
    emb_t = target_model.get_input_embeddings().weight
    head_t = target_model.get_output_embeddings().weight
    notes: list[str] = []

    def kept(name: str) -> bool:
        return name in tensors and (fate is None or fate.get(tensors[name][0]) in (LOADED, BUFFER))

    fc = tensors["fc.weight"][1].shape if "fc.weight" in tensors else None
    H = int(fc[0]) if fc else int(cfg["hidden_size"])
    nh = int(cfg.get("num_attention_heads") or 0)
    if not nh:
        return BuiltEagle1(None, notes, refused="the config gives no num_attention_heads")
    rope = rope_of(cfg)
    if rope["rope_type"] not in ("default", None):
        notes.append(f"rope_type {rope['rope_type']!r} is not modelled by eval: default RoPE (theta {rope['rope_theta']}) is used")
    engine = f"{report.engine} {report.version}" if report is not None else None
    shipped_bias = "fc.bias" in tensors
    fc_bias = shipped_bias if report is None else "fc.bias" in params
    if shipped_bias and not fc_bias:
        notes.append(f"{engine} builds fc without a bias: the trained fc.bias is not applied (check: L013)")
    attn_bias = (
        any(n.endswith(("q_proj.bias", "o_proj.bias")) for n in tensors)
        if report is None
        else any(n.endswith(("qkv_proj.bias", "o_proj.bias")) for n in params)
    )
    own_head = kept("lm_head.weight") and (report is None or ("lm_head.weight" in params and params["lm_head.weight"].status != P_SHARED))
    c = Eagle1Config(
        hidden_size=H,
        intermediate_size=int(cfg.get("intermediate_size") or tensors["layers.0.mlp.gate_proj.weight"][1].shape[0]),
        num_heads=nh,
        num_kv_heads=int(cfg.get("num_key_value_heads") or nh),
        head_dim=int(cfg.get("head_dim") or H // nh),
        num_layers=int(cfg.get("num_hidden_layers") or view.drafter.layers_in_keys or 1),
        vocab_size=emb_t.shape[0],
        head_vocab=tensors["lm_head.weight"][1].shape[0] if own_head else head_t.shape[0],
        rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
        rope_theta=float(rope.get("rope_theta") or 10000.0),
        fc_bias=fc_bias,
        attention_bias=attn_bias,
    )
    torch.manual_seed(seed)
    model = Eagle1Drafter(c)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.fill_(1.0 if "norm" in name else float("nan"))
        state = model.state_dict()
        loaded = set()
        for name, (orig, info) in tensors.items():
            if name not in state or not kept(name):
                if name == "layers.0.input_layernorm.weight" and report is None:
                    notes.append("layers.0.input_layernorm.weight is shipped but layer 0 has no input norm (EAGLE's cnets.py): not applied")
                continue
            if tuple(state[name].shape) != tuple(info.shape):
                return BuiltEagle1(model, notes, refused=f"{orig} is {list(info.shape)}, the model needs {list(state[name].shape)}")
            state[name].copy_(read_tensor(info).to(state[name].dtype))
            loaded.add(name)
        if c.fc_bias and "fc.bias" not in loaded:
            p = params.get("fc.bias")
            if p is not None and p.status == P_DEFAULT_INIT:  # nn.Linear's default bias initialisation
                bound = 1.0 / math.sqrt(2 * H)
                state["fc.bias"].uniform_(-bound, bound)
                notes.append(f"{engine} builds fc with a bias that nothing fills: its default initialisation U(±{bound:.3g}) is applied")
        emb_shared = "embed_tokens.weight" not in loaded or any(p.role == "embed" and p.status == P_SHARED for p in params.values())
        for name, src, what, use in (
            ("embed_tokens.weight", emb_t, "embedding", emb_shared),
            ("lm_head.weight", head_t, "lm_head", not own_head),
        ):
            if not use:
                continue
            if state[name].shape != src.shape:
                return BuiltEagle1(
                    model,
                    notes,
                    refused=f"the {what} is the target's ({tuple(src.shape)}) but the drafter needs {tuple(state[name].shape)}",
                )
            state[name].copy_(src)
            notes.append(f"the shipped {name} is not used: the target's {what}" if name in tensors else f"{what} taken from the target")
        model.load_state_dict(state)
    note_unloaded(report, notes)
    model.eval()
    return BuiltEagle1(model, notes)


# --- P-EAGLE ------------------------------------------------------------------------------------------------------
PARD_KEYS = ("mask_token_id", "pard_token", "ptd_token_id")  # the config keys the masked slots' token is read from


def peagle_parallel(view: CheckpointView, report: LoadReport | None) -> tuple[int, torch.Tensor] | str:
    """(the masked slots' token, mask_hidden [fc input]) for P-EAGLE's parallel drafting, or why there are none. With a
    report, the token is the one that release reads (its class's pd_token field) and mask_hidden counts only where its
    loader fills the buffer."""
    ckpt = view.ckpt
    cfg = ckpt.config or {}
    if report is not None:
        pard = report.ns.get("pd_token")
    else:
        pard = next((cfg[k] for k in PARD_KEYS if cfg.get(k) is not None), None)
    if pard is None:
        return f"the config names no token for the masked slots ({', '.join(PARD_KEYS)})"
    name = next((n for n in ckpt.tensors if n.removeprefix("model.") == "mask_hidden"), None)
    if name is None:
        return "the checkpoint has no mask_hidden (the masked slots' hidden state)"
    if report is not None and not any(t.name == name and t.status in (LOADED, BUFFER) for t in report.tensors):
        return f"{report.engine} {report.version} does not load mask_hidden"
    return int(pard), read_tensor(ckpt.tensors[name]).reshape(-1).float()
