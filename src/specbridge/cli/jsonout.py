"""JSON output of `inspect`, kept apart from the rich renderer so `--json` never imports it."""

from __future__ import annotations

from ..checkpoint.hubref import hub_sources
from ..layouts.canonical import Drafter
from ..view import CheckpointView


def canonical_name(d: Drafter, name: str) -> str | None:
    return next((c for c, s in d.source_names.items() if s == name), None)


def inspect_json(view: CheckpointView) -> dict:
    ckpt, d = view.ckpt, view.drafter
    return {
        "path": str(ckpt.root),
        "storage": ckpt.storage,
        "files": [str(f) for f in ckpt.weight_files],
        "pickles_not_read": [str(p) for p in ckpt.pickles],
        "layout": d.layout,
        "layout_candidates": d.layout_candidates,  # more than one: the evidence fits several producers
        "evidence": d.evidence,
        "architecture": d.architecture,
        "geometry": d.geometry(),
        "tensors": [
            {
                "name": t.name,
                "dtype": t.dtype,
                "shape": list(t.shape),
                "bytes": t.nbytes,
                "canonical": canonical_name(d, t.name),
                # a strided view saved by torch.save (not one byte range; convert refuses it): only then
                **({"strides": list(t.strides)} if t.strides is not None else {}),
            }
            for t in ckpt.tensors.values()
        ],
        "unrecognised": d.unrecognised,
        "totals": {"tensors": len(ckpt.tensors), "bytes": ckpt.total_bytes, "dtypes": d.dtypes},
        "metadata": ckpt.metadata,
        **hub_sources(ckpt.hub),  # `source` (repo, revision, commit) for a Hub id; nothing for a local path
    }
