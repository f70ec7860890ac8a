"""Write docs/corpus.md: published EAGLE-3 drafters × engine versions, expected (from the engines' source)
against predicted (what `specbridge check` says), with every fact's source.

The corpus is tests/fixtures/corpus/*.json: one published drafter each, its config.json, its tensor
names/dtypes/shapes and its target's config. Each is rebuilt here as a header-only checkpoint (sparse
file: the tensor data is a hole, except d2t/t2d, which the vocabulary rules read), so the check runs
on exactly the names and shapes the producer publishes.

    python scripts/gen_corpus_doc.py          # rewrite the page
    python scripts/gen_corpus_doc.py --check  # exit 1 if the page is stale (used by the tests)
"""

from __future__ import annotations

import json
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from specbridge.checkpoint.reader import open_checkpoint  # noqa: E402
from specbridge.checkpoint.target import open_target  # noqa: E402
from specbridge.checkpoint.write import write_header_only  # noqa: E402
from specbridge.rules.check import check  # noqa: E402
from specbridge.view import read_view  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
FAMILIES = ROOT / "tests" / "fixtures" / "corpus-families"
PAGE = ROOT / "docs" / "corpus.md"


def load_corpus() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json"))]


def load_families() -> list[dict]:
    """Published drafters of the families beyond EAGLE-3 (tensors as a list of {name, dtype, shape}, side files)."""
    return [json.loads(p.read_text()) for p in sorted(FAMILIES.glob("*.json"))]


def _vocab_map_bytes(name: str, dtype: str, shape: list[int], vd: int) -> bytes | None:
    """d2t / t2d are read by the vocabulary rules, so they hold a valid map (the first Vd ids)."""
    if name == "d2t" and dtype == "I64":
        return struct.pack(f"<{shape[0]}q", *([0] * shape[0]))
    if name == "t2d" and dtype == "BOOL":
        return b"\x01" * vd + b"\x00" * (shape[0] - vd)
    return None


def build(entry: dict, root: Path) -> tuple[Path, Path]:
    """The drafter as a header-only safetensors checkpoint + config.json, and its target's config dir."""
    draft, target = root / "draft", root / "target"
    draft.mkdir(parents=True)
    target.mkdir(parents=True)
    tensors = entry["tensors"]
    vd = tensors["d2t"][1][0] if "d2t" in tensors else 0
    rows = [(name, dtype, shape) for name, (dtype, shape) in tensors.items()]
    data = {name: raw for name, (dtype, shape) in tensors.items() if (raw := _vocab_map_bytes(name, dtype, shape, vd)) is not None}
    write_header_only(draft / "model.safetensors", rows, data, metadata={"format": "pt"})
    (draft / "config.json").write_text(json.dumps(entry["config"]))
    (target / "config.json").write_text(json.dumps(entry["target"]["config"]))
    return draft, target


def build_family(entry: dict, root: Path) -> tuple[Path, Path]:
    """A families-corpus drafter as a header-only checkpoint, with its side files (mask_embedding.pt as the producers
    publish it: {embedding: BF16 [hidden_size] (zeros here), mask_token_id}; any other side file empty)."""
    from specbridge.checkpoint.maskfile import MASK_FILE, mask_file_bytes

    draft, target = build({**entry, "tensors": {t["name"]: (t["dtype"], t["shape"]) for t in entry["tensors"]}}, root)
    cfg = entry["config"]
    for f in entry.get("side_files", []):
        if f == MASK_FILE:
            h, mid = cfg["hidden_size"], (cfg.get("dflash_config") or {}).get("mask_token_id", cfg.get("mask_token_id"))
            (draft / f).write_bytes(mask_file_bytes("BF16", (h,), bytes(2 * h), mid))
        else:
            (draft / f).write_bytes(b"")
    return draft, target


def predict_family(entry: dict) -> dict[str, dict]:
    """The family the evidence shows, and what `check` says per engine version for a modelled family."""
    from specbridge.families.detect import detect_family

    v = detect_family(entry["config"], {t["name"]: t["shape"] for t in entry["tensors"]}, entry["id"])
    out: dict[str, dict] = {"family": {"name": v.name, "modelled": bool(v.family and v.family.modelled)}}
    if not out["family"]["modelled"]:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        draft, target = build_family(entry, Path(tmp))
        view, tgt = read_view(open_checkpoint(draft)), open_target(target)
        for spec in entry["expected"]:
            [res] = check(view, spec, entry["id"], target=tgt, family=v.family)
            codes = sorted({f.code for f in res.findings if f.severity == "error"})
            out[spec] = {"ok": res.ok, "codes": codes, "messages": [f"{f.code} {f.message}" for f in res.findings]}
    return out


def family_lines() -> list[str]:
    entries = load_families()
    specs = sorted({s for e in entries for s in e["expected"]}, key=_spec_key)
    lines = [
        "## Families beyond EAGLE-3",
        "",
        "Published drafters of the zoo (`tests/fixtures/corpus-families/`, kept true by `tests/test_corpus_families.py`):",
        "EAGLE-1/2 research weights and SGLang's layout of them, P-EAGLE, a per-architecture EAGLE-3 class (Qwen3 q/k norms),",
        "DFlash, DFlash2, DSpark, a Medusa head and a plain draft model. The family the evidence shows, and for the families",
        "`check` reads, `expected / predicted` per engine version. A family `check` does not read is refused (exit 2),",
        "never checked as EAGLE-3. `(known gap)` marks a cell where check differs from the engine: the expectation is the",
        "engine's, the entry says why check differs (tests/test_corpus_families.py pins both).",
        "",
        "| drafter | producer | family | config / tensors | " + " | ".join(specs) + " |",
        "|" + " --- |" * (4 + len(specs)),
    ]
    agree = total = 0
    for e in entries:
        got = predict_family(e)
        fam = got["family"]["name"] + ("" if got["family"]["modelled"] else " (refused)")
        cells = []
        for s in specs:
            if s not in e["expected"]:
                cells.append("")
                continue
            x, same = e["expected"][s], (got[s]["ok"], got[s]["codes"]) == (e["expected"][s]["ok"], e["expected"][s]["codes"])
            total, agree = total + 1, agree + same
            cells.append(f"{_cell(x)} / {_cell(got[s])}" + ("" if same else " (known gap)" if "gap" in x else " **≠**"))
        exact = f"{e['exactness']['config'].split(':')[0].split(' (')[0]} / {e['exactness']['tensors'].split(':')[0].split(' (')[0]}"
        lines.append(f"| `{e['id']}` | {e['producer']} | {fam} | {exact} | " + " | ".join(cells) + " |")
    lines += ["", f"Agreement: {agree}/{total} cells.", ""]
    for e in entries:
        lines += [f"### `{e['id']}` ({e['family']})", ""]
        lines += [f"- {k}: {v}" for k, v in e["source"].items()]
        lines += [f"- side files: {', '.join(e['side_files'])}"] if e.get("side_files") else []
        lines += [f"- exactness of {k}: {v}" for k, v in e["exactness"].items()]
        for s, x in sorted(e["expected"].items(), key=lambda kv: _spec_key(kv[0])):
            lines.append(f"- `{s}` {_cell(x)}: {x['why']} — {x['cite']}")
            if "gap" in x:
                lines.append(f"  - known gap, check says {_cell(x['gap']['predicted'])}: {x['gap']['why']}")
        lines.append("")
    return lines


def predict(entry: dict) -> dict[str, dict]:
    """What `check` says for each engine version the entry has an expectation for."""
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        draft, target = build(entry, Path(tmp))
        view, tgt = read_view(open_checkpoint(draft)), open_target(target)
        for spec in entry["expected"]:
            [res] = check(view, spec, entry["id"], target=tgt)
            errors = sorted({f.code for f in res.findings if f.severity == "error"})
            out[spec] = {
                "ok": res.ok,
                "codes": errors,
                "layout": res.drafter.layout,
                "messages": [f"{f.code}: {f.message}" for f in res.findings if f.severity == "error"],
            }
    return out


def _cell(e: dict) -> str:
    return "OK" if e["ok"] else "✗ " + ", ".join(e["codes"])


def render() -> str:
    corpus = load_corpus()
    specs = sorted({s for e in corpus for s in e["expected"]}, key=_spec_key)
    lines = [
        "# Corpus: published EAGLE-3 drafters × engine versions",
        "",
        "Generated by `scripts/gen_corpus_doc.py` from `tests/fixtures/corpus/*.json`; `tests/test_corpus.py` keeps it fresh",
        "and asserts every prediction equals the expectation. Each drafter is rebuilt as a header-only checkpoint with the",
        "producer's exact tensor names, dtypes and shapes and checked with its target's config.",
        "",
        "A cell reads `expected / predicted`: `OK`, or `✗` and the error codes (docs/rules.md). Expectations come from the",
        "engine source named in the cell's row below, not from `check`. Blank: no expectation recorded.",
        "",
    ]
    agree = total = 0
    head = "| drafter | producer | layout | " + " | ".join(specs) + " |"
    lines += [head, "|" + " --- |" * (3 + len(specs))]
    predicted = {e["id"]: predict(e) for e in corpus}
    for e in corpus:
        cells = []
        for s in specs:
            if s not in e["expected"]:
                cells.append("")
                continue
            exp, got = e["expected"][s], predicted[e["id"]][s]
            total += 1
            same = exp["ok"] == got["ok"] and exp["codes"] == got["codes"]
            agree += same
            cells.append(f"{_cell(exp)} / {_cell(got)}" + ("" if same else " **≠**"))
        layout = next(iter(predicted[e["id"]].values()))["layout"]
        lines.append(f"| `{e['id']}` | {e['producer']} | {layout} | " + " | ".join(cells) + " |")
    lines += ["", f"Agreement: {agree}/{total} cells.", ""]
    lines += [
        "Limits, stated: most configs are the producer's own config template or export code for that target",
        "(each entry says which fields are exact), and tensor lists are derived from the producer's model and save",
        "code, not read from the published files; target configs are the published geometry, not re-read here.",
        "Expectations come from the engines' released source (PyPI wheels; TensorRT-LLM from one commit, not run).",
        "Where a drafter's aux layer ids are not known, none are written and both sides use their default.",
        "",
    ]
    lines += ["## Sources, exactness and the reason for each expectation", ""]
    for e in corpus:
        lines += [
            f"### `{e['id']}`",
            "",
            f"- producer: {e['producer']}; targets {', '.join(e['engines_targeted'])}",
            f"- target: `{e['target']['id']}` ({e['target']['source']})",
        ]
        lines += [f"- {k}: {v}" for k, v in e["source"].items()]
        lines += [f"- exactness of {k}: {v}" for k, v in e["exactness"].items()]
        lines.append("")
        for s, x in sorted(e["expected"].items(), key=lambda kv: _spec_key(kv[0])):
            lines.append(f"- `{s}` {_cell(x)}: {x['why']} — {x['cite']}")
        lines.append("")
    return "\n".join(lines + family_lines() + mtp_lines())


def mtp_predict(entry: dict, engines: list[str]) -> dict:
    """What `check` says of a published target's MTP head: per engine version the error codes, the versions named as
    not modelled, and the head found."""
    from specbridge.cli.mtp_check import HeadOnly, check_mtp, mtp_index

    sys.path.insert(0, str(ROOT / "tests"))
    import corpus_mtp_targets

    with tempfile.TemporaryDirectory() as tmp:
        path = corpus_mtp_targets.write_target(entry, Path(tmp) / "t")
        try:
            results, skipped, head, _, _ = check_mtp(mtp_index(path, True), path, engines, None, None)
        except HeadOnly as e:
            codes = sorted({f.code for f in e.findings if f.severity == "error"})
            return {"errors": {}, "not_checked": 1, "head": e.head, "head_only": codes}
    errors = {f"{r.report.engine}=={r.report.version}": sorted({f.code for f in r.findings if f.severity == "error"}) for r in results}
    return {"errors": errors, "not_checked": len(skipped), "head": head, "head_only": None}


def _codes(codes: list[str] | None) -> str:
    return "OK" if not codes else "✗ " + ", ".join(codes)


def mtp_lines() -> list[str]:
    """Published targets that carry (or announce) an MTP head: expected (tests/fixtures/corpus-mtp/_expected.json, from the
    engines' source) against predicted, per engine version."""
    sys.path.insert(0, str(ROOT / "tests"))
    import corpus_mtp_targets

    expected = json.loads((corpus_mtp_targets.DIR / "_expected.json").read_text())
    specs = expected["engines_asked"]
    lines = [
        "## MTP heads inside published targets",
        "",
        "Published targets and re-quantizations (`tests/fixtures/corpus-mtp/`, kept true by `tests/test_corpus_mtp.py` and",
        "`tests/test_corpus_mtp_check.py`), rebuilt as header-only sharded targets from their published key lists and",
        "checked as `specbridge check TARGET` reads them (the head from the index, only its shards' headers). A cell reads",
        "`expected / predicted`; `—` an engine version whose class for this target specbridge does not model (said under",
        "`not_checked`). Shapes and dtypes are derived from each config (the corpus holds names, not headers).",
        "",
        "| target | producer | role | head: announced / found | " + " | ".join(specs) + " |",
        "|" + " --- |" * (4 + len(specs)),
    ]
    for e in corpus_mtp_targets.entries():
        want, got = expected["targets"][e["id"]], mtp_predict(e, specs)
        h = got["head"]
        found = ", ".join(str(layer.index) for layer in h.layers) or "none"
        cells = []
        for s in specs:
            if s in want["errors"]:
                cells.append(f"{_codes(want['errors'][s])} / {_codes(got['errors'].get(s))}")
            elif got["head_only"] is not None:
                cells.append(f"— (files alone: {_codes(got['head_only'])})")
            else:
                cells.append("—")
        head = f"{h.announced} ({h.announced_by or 'none'}) / {found}"
        lines.append(f"| `{e['id']}` | {e['producer']} | {e['role']} | {head} | " + " | ".join(cells) + " |")
    lines += ["", "### Why each target is expected so", ""]
    for e in corpus_mtp_targets.entries():
        want = expected["targets"][e["id"]]
        src = "; ".join(e["source"]) if isinstance(e["source"], list) else str(e["source"])
        lines += [f"- `{e['id']}`: {want['why']}. Sources: {src}"]
    lines.append("")
    return lines


def _spec_key(spec: str) -> tuple:
    from specbridge.engines.spec import parse_version

    name, _, version = spec.partition("==")
    return (name, parse_version(version))


if __name__ == "__main__":
    from pages import write_or_check

    sys.exit(write_or_check(PAGE, render(), sys.argv[1:]))
