"""Write docs/engine-matrix.md: every producer layout × every engine era, with the outcome `check`
predicts and, per cell, how that outcome is known (run / read / inferred). Generated from the engine
tables (src/specbridge/engines/vllm/, sglang/, trtllm/): edit a table, rerun this, commit both.

    python scripts/gen_engine_matrix.py          # rewrite the page
    python scripts/gen_engine_matrix.py --check  # exit 1 if the page is stale (tests/test_engine_matrix.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from specbridge.engines.registry import CAPTURE, DRAFT_MODEL, ENGINES, FAMILY_RANGES, newest_version  # noqa: E402
from specbridge.engines.spec import CaptureRule, FamilyRange, parse_version  # noqa: E402
from specbridge.families.table import BY_NAME, FAMILIES  # noqa: E402
from specbridge.rules.check import check  # noqa: E402
from specbridge.rules.findings import ERROR, WARNING  # noqa: E402
from specbridge.view import open_view  # noqa: E402

PAGE = ROOT / "docs" / "engine-matrix.md"
PRODUCERS = ROOT / "tests" / "fixtures" / "producers"

# producer layouts: a real checkpoint each (written by the producer's own code; tests/fixtures/producers/README.md)
LAYOUTS: list[tuple[str, str, Path]] = [
    (
        "speculators (`layers.0.*`, flat config)",
        "the story: speculators-trained keys with a flat LlamaForCausalLMEagle3 config (examples/story)",
        ROOT / "examples" / "story",
    ),
    (
        "speculators (`layers.0.*`, speculators config)",
        "speculators 0.9.0 trainer save (speculators_config + transformer_layer_config)",
        PRODUCERS / "speculators-0.9.0" / "train-save",
    ),
    (
        "speculators convert (`layers.0.*`, fp32, no embed)",
        "`speculators convert --algorithm eagle3` of the SpecForge SGLang export",
        PRODUCERS / "speculators-0.9.0" / "convert-eagle3-from-specforge-sglang-export",
    ),
    (
        "SpecForge SGLang export (`midlayer.*`, no embed)",
        "SpecForge 0.2.0 export_to_sglang",
        PRODUCERS / "specforge-0.2.0" / "export-sglang",
    ),
    ("SpecForge HF export (`midlayer.*`, with embed)", "SpecForge 0.2.0 export_to_hf", PRODUCERS / "specforge-0.2.0" / "export-hf"),
]


def era_range(era: FamilyRange | CaptureRule) -> str:
    if era.last == era.first:
        return era.first
    return f"{era.first}–{era.last}" if era.last else f"{era.first}+"


def _rel(v: str) -> tuple:
    return parse_version(v.split(" ")[0])


def verification(era: FamilyRange) -> str:
    """How the cells of this era are known: run (release, date), read (tag, file), inferred for the rest."""
    parts = []
    if era.runs:
        by_date: dict[str, list[str]] = {}
        for r in sorted(era.runs, key=lambda r: _rel(r.release)):
            by_date.setdefault(r.date, []).append(f"{r.release} ({r.agreed}/{r.cases})")
        parts.append("**run** " + "; ".join(f"{', '.join(rs)} on {d}" for d, rs in by_date.items()))
    run_rel = {r.release for r in era.runs}
    held = era.placeholders
    read = [v for v in era.versions_read if v not in run_rel and v not in held]
    if read:
        files = sorted({c.file.split(" @ ")[0] for c in era.classes.values()})
        parts.append(f"**read** {', '.join(read)} ({', '.join(files)})")
    for v in held:
        parts.append(f"**placeholder** {v} (no {v} source read; placed there from the commits below)")
    for rd in era.reads:
        parts.append(f"**read** {rd.release} ({rd.file}): {rd.shows}")
    known = run_rel | set(era.versions_read)
    if not known:
        parts.append("**inferred**")
    elif era.first != era.last:
        parts.append(f"other {era_range(era)} releases **inferred** from those")
    return "; ".join(parts)


def level(era: FamilyRange) -> str:
    """Short form for one outcome cell: the strongest evidence, with releases and dates."""
    if era.runs:
        by_date: dict[str, list[str]] = {}
        for r in sorted(era.runs, key=lambda r: _rel(r.release)):
            by_date.setdefault(r.date, []).append(r.release)
        return "run " + "; ".join(f"{', '.join(rs)} ({d})" for d, rs in by_date.items())
    read = [v for v in era.versions_read if v not in era.placeholders]
    files = sorted({c.file.split(" @ ")[0].rsplit("/", 1)[-1] for c in era.classes.values()})
    if read:
        return f"read {', '.join(read)} ({', '.join(files)})"
    if era.versions_read:
        return f"read at commits of no established release, placed at {', '.join(era.versions_read)} ({', '.join(files)})"
    return "inferred"


def outcome(path: Path, era: FamilyRange) -> str:
    version = newest_version(era)
    (res,) = check(open_view(path), f"{era.engine}=={version}")
    r = res.report
    codes = []
    for f in res.findings:
        if f.severity in (ERROR, WARNING) and f.code not in codes and not f.code.startswith("R"):
            codes.append(f"{f.code}{'' if f.severity == ERROR else ' (warning)'}")
    tail = f" → {', '.join(codes)}" if codes else ""
    if r.errors:
        first = r.errors[0].split(" (")[0]
        if len(first) > 90:
            first = first[:87] + "…"
        return f"**raises** `{first.replace('|', '/')}`{tail}"
    bits = []
    if r.dropped:
        bits.append(f"{len(r.dropped)} dropped")
    if r.missing:
        bits.append(f"{len(r.missing)} missing")
    return (f"**loads**, {' + '.join(bits)}" if bits else "**loads**") + tail


def capture_rows() -> list[str]:
    """The CAPTURE rows of each engine file: which target layers feed fc, release by release."""
    out = [
        "",
        "## Aux-layer capture",
        "",
        "Which target layers feed the drafter's `fc` (`CAPTURE` rows in the engine files, read by `engines/capture.py`; "
        "a boundary b is the state entering target layer b).",
        "",
        "| engine | releases | configured ids read from | id i means boundary | boundaries | also | targets that capture | source |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for engine, rows in CAPTURE.items():
        for r in rows:
            also = [x for x in (r.resets_to_default, r.first_id_note) if x]
            if r.never_last:
                also.append(r.never_last_note.format(n="N"))
            support = (
                f"{len(r.supported_since)} architectures, each from its first release"
                if r.supported_since is not None
                else ("the era's model_type allow-list" if r.support_model_types else "not tabled")
            )
            out.append(
                f"| {engine} | {era_range(r)} | {', '.join(r.ids_from) or 'never (engine default)'} | i + {r.shift} | "
                f"{r.boundaries} | {'; '.join(also) or '—'} | {support} | {r.cite} |"
            )
    return out


def family_rows() -> list[str]:
    """The drafter families: which specbridge reads, and per engine the release ranges that build each."""
    out = [
        "",
        "## Drafter families",
        "",
        "A checkpoint is read as the family its evidence shows (`src/specbridge/families/`), or refused with exit 2 and "
        "what was seen. Families specbridge does not model are refused, never checked as EAGLE-3.",
        "",
        "| family | vLLM method | read by check | architectures (vLLM registry) |",
        "| --- | --- | --- | --- |",
    ]
    for f in FAMILIES:
        archs = ", ".join(f"`{a}`" for a in f.architectures) or "—"
        out.append(f"| {f.title} | `{f.method}` | {'yes' if f.modelled else 'refused (exit 2)'} | {archs} |")
    out += [
        "",
        "Per engine, the release ranges that build a family other than EAGLE-3 (an engine not listed has no rows: "
        "`check` refuses it for that family):",
        "",
        "| engine | family | releases | classes | range begins because | how known |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rows in FAMILY_RANGES.values():
        for row in rows:
            classes = ", ".join(f"`{c}`" + (" (read, not run)" if c in row.not_run else "") for c in row.classes)
            classes = classes or (f"none: {row.absent}" if row.absent else f"not modelled: {row.unmodelled}")
            if row.unmodelled_archs:
                classes += "; not modelled: " + ", ".join(f"`{a}` ({w})" for a, w in row.unmodelled_archs.items())
            runs = ", ".join(f"run {r.release} ({r.agreed}/{r.cases}, {r.date})" for r in row.runs)
            read = f"read {', '.join(row.versions_read)}" if row.versions_read else ""
            if row.reads and not row.runs:  # known from source only: say what was read where, and that nothing ran
                read = "read, not run: " + "; ".join(f"{r.file} ({r.release})" for r in row.reads)
            known = "; ".join(x for x in (runs, read) if x)
            out.append(
                f"| {row.engine} | {BY_NAME[row.family].title} | {era_range(row)} | {classes} | {row.begins} | {known or 'inferred'} |"
            )
    return out


def adopted_rows(every: list) -> list[str]:
    """The releases `scripts/adopt_release.py --write` adopted (engines/adopted.py), each with what every matrix found,
    and the ranges modelled anew because an adoption disagreed (their `begins` says so)."""
    from specbridge.engines.adopted import ADOPTED

    out = [
        "",
        "### Releases adopted by `scripts/adopt_release.py`",
        "",
        "Each matrix run through `specbridge verify` on the release (the runs above, recorded in "
        "`src/specbridge/engines/adopted.py`); a range whose `begins` names the script was modelled anew because the "
        "first adoption disagreed.",
        "",
    ]
    by_release: dict[tuple[str, str, str], list[str]] = {}
    for a in ADOPTED:
        row = next(r for r in every if r.engine == a.engine and r.family == a.family and r.first == a.first)
        label = row.name if a.family == "eagle3" else f"{a.family} {era_range(row)}"
        by_release.setdefault((a.engine, a.run.release, a.run.date), []).append(f"{label} {a.run.agreed}/{a.run.cases}")
    out += [f"- {e} {rel} ({date}): {'; '.join(found)}" for (e, rel, date), found in by_release.items()]
    anew = [r for r in every if "adopt_release" in (r.begins or "")]
    out += [f"- modelled anew: {r.engine} {r.family} {era_range(r)}: {r.begins}" for r in anew]
    return out


def render() -> str:
    out = [
        "# Engine matrix: producer layout × engine era",
        "",
        "Generated by `python scripts/gen_engine_matrix.py` from the engine tables "
        "(`src/specbridge/engines/`: `vllm/`, `sglang/`, `trtllm/`); `tests/test_engine_matrix.py` fails when a table "
        "changes and this page is not regenerated. Do not edit by hand.",
        "",
        "Each cell is what `specbridge check DRAFTER --engine NAME==VERSION` predicts for the newest release read "
        "in that era (every release of an era loads the same way). **loads** = the engine builds and fills the "
        "drafter; *N dropped* = checkpoint tensors the engine skips without a word; *missing* = drafter "
        "parameters left at their initial values; **raises** = the engine stops with that error. Finding codes "
        "link to `docs/rules.md`. *How known*: **run** = the engine's real loader code executed on this "
        "checkpoint in that release (conformance test, date, cases agreed); **read** = the loader source read at "
        "that release tag; **inferred** = a release inside the era that was neither run nor read.",
        "",
        "## Eras",
        "",
        "| engine | releases | era | decoder parameters | unknown checkpoint names | era begins because | how known |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for eras in ENGINES.values():
        for era in eras:
            out.append(
                f"| {era.engine} | {era_range(era)} | {era.name} | `{era.decoder_prefix}*` | {era.unknown_keys} | "
                f"{era.begins or '—'} | {verification(era)} |"
            )
    out += capture_rows()
    out += family_rows()
    out += [
        "",
        "## Conformance runs",
        "",
        "Each row: the engine's real loader code run on every case of the test, and `check` agreeing "
        "(the rest would be strict xfails named in the test, with their reason).",
        "",
        "| engine | release | era | test | cases | agree | date |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for eras in ENGINES.values():
        for era in eras:
            for r in sorted(era.runs, key=lambda r: (_rel(r.release), r.test)):
                out.append(f"| {era.engine} | {r.release} | {era_range(era)} | `{r.test}` | {r.cases} | {r.agreed}/{r.cases} | {r.date} |")
    for rows in FAMILY_RANGES.values():
        for row in rows:
            for r in sorted(row.runs, key=lambda r: (_rel(r.release), r.test)):
                out.append(
                    f"| {row.engine} | {r.release} | {row.family} {era_range(row)} | `{r.test}` | {r.cases} | {r.agreed}/{r.cases} | {r.date} |"
                )
    for rows in DRAFT_MODEL.values():  # plain draft models (vLLM draft_model, SGLang STANDALONE)
        for row in rows:
            for r in sorted(row.runs, key=lambda r: (_rel(r.release), r.test)):
                out.append(
                    f"| {row.engine} | {r.release} | draft model {era_range(row)} | `{r.test}` | {r.cases} | {r.agreed}/{r.cases} | {r.date} |"
                )
    totals = {}
    every = [era for eras in ENGINES.values() for era in eras] + [row for rows in FAMILY_RANGES.values() for row in rows]
    every += [row for rows in DRAFT_MODEL.values() for row in rows]
    for era in every:
        for r in era.runs:
            t = totals.setdefault((era.engine, r.test), [0, 0, 0])
            t[0] += 1
            t[1] += r.agreed
            t[2] += r.cases
    out += [""] + [f"- {e} `{test}`: {n} releases, {a}/{c} cases agree" for (e, test), (n, a, c) in totals.items()]
    out += adopted_rows(every)
    out += [
        "",
        "## Outcomes",
        "",
        "One row per producer layout × engine era: find the layout, then the engine and release.",
        "",
        "| producer layout | engine | releases | outcome | how known |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label, _what, path in LAYOUTS:
        for eras in ENGINES.values():
            for era in eras:
                out.append(f"| {label} | {era.engine} | {era_range(era)} | {outcome(path, era)} | {level(era)} |")
    out += ["", "## The layouts", "", "| producer layout | what it is | checkpoint |", "| --- | --- | --- |"]
    for label, what, path in LAYOUTS:
        out.append(f"| {label} | {what} | `{path.relative_to(ROOT)}` |")
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    from pages import write_or_check

    sys.exit(write_or_check(PAGE, render(), sys.argv[1:]))
