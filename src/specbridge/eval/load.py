"""Build the reference drafter from any checkpoint layout — as trained, or exactly as a given engine
version would load it (dropped tensors ignored, missing parameters at the engine's initial values,
embed/head shared or not, d2t applied or not, the aux layers that engine feeds, fc applied or
skipped by its width rule)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..checkpoint.target import rope_of
from ..convert.configs import canon_config
from ..engines.capture import default_boundaries, engine_capture
from ..engines.simulate import BUFFER, LOADED, P_SHARED, LoadReport
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


def _engine_reads_nbr(report: LoadReport) -> bool:
    """Whether this engine version's EAGLE-3 class reads norm_before_residual (the era row's `variants`)."""
    return "norm_before_residual" in (report.era.variants or ())


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
        missing = report.missing
        if missing:
            notes.append(
                f"{len(missing)} parameter(s) never loaded hold uninitialised memory (modelled as garbage: drafts through them are never accepted): "
                f"{', '.join(missing[:3])}{' …' if len(missing) > 3 else ''}"
            )
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
MASK_FILE = "mask_embedding.pt"


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


def build_dflash(view: CheckpointView, target_model, report: LoadReport | None = None, seed: int = 0) -> BuiltDFlash:
    """The DFlash drafter as trained (report None) or as this engine version loads it: a shipped tensor the engine does
    not load leaves its parameter at the engine's initial value (norms 1, anything else uninitialised memory, modelled
    as NaN: drafts through it are never accepted); embedding and head not loaded are the target's; the mask row comes
    from mask_embedding.pt only where the engine reads that side file; a sink bias the engine does not build is not
    applied."""
    from ..families.dflash import geometry
    from ..model.dflash import DFlashConfig, DFlashDrafter

    ckpt = view.ckpt
    cfg = ckpt.config or {}
    geom = geometry(ckpt)
    notes: list[str] = []
    boundaries = dflash_boundaries(geom)
    if boundaries is None:
        return BuiltDFlash(None, [], 0, notes, refused="the config names no target layers (dflash_config.target_layer_ids)")
    if geom["mask_token_id"] is None:
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
    if (root / MASK_FILE).is_file():
        if report is None or MASK_FILE in (report.cls.side_files or ()):
            model.mask_embedding = read_mask_embedding(root, c.mask_token_id)
            notes.append(f"mask token {c.mask_token_id} embedded from {MASK_FILE}")
        else:
            notes.append(
                f"{report.engine} {report.version} does not read {MASK_FILE}: mask token {c.mask_token_id} embedded from the target's row"
            )
    if report is not None and report.missing:
        m = report.missing
        notes.append(
            f"{len(m)} parameter(s) never loaded hold uninitialised memory (modelled as garbage: drafts through them are never accepted): "
            f"{', '.join(m[:3])}{' …' if len(m) > 3 else ''}"
        )
    model.eval()
    return BuiltDFlash(model, boundaries, c.block_size, notes)
