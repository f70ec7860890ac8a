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
