"""Target fit for every drafter family but EAGLE-3 (rules F001, F002; C003 for every family with a target of its own):
a DFlash drafter of hidden size 256 checked against SmolLM2-135M (hidden 576) read OK, info only, and `launch` printed a
serve line; so did EAGLE-1 and Medusa drafters of another width. The width comes from each family's module
(families/fit.py), the vocabulary from the embedding and head each engine release keeps as the drafter's own."""

from __future__ import annotations

import json
import shutil

import dflash_fixtures as df
import eagle1_fixtures as e1
import medusa_fixtures as mf
import mtp_fixtures as mx
import numpy as np
import pytest
from conftest import TINY_TARGET, error_messages, write_checkpoint

from specbridge.checkpoint.aliases import alias_config_dir
from specbridge.cli.targets import open_target_arg
from specbridge.families.fit import FIT_FAMILIES, _readers
from specbridge.families.table import BY_NAME
from specbridge.rules.check import check_family
from specbridge.rules.registry import RULES
from specbridge.view import open_view

SMOLLM = open_target_arg("smollm2-135m")  # hidden 576, vocab 49152
TINY = open_target_arg(TINY_TARGET)  # hidden 64, vocab 512: what the fixtures were sized for


def _results(path, family: str, target, engine: str = "vllm==0.32.0"):
    results, _ = check_family(open_view(path), engine, BY_NAME[family], str(path), target=target)
    return results


def _codes(res, severity: str) -> set[str]:
    return {f.code for f in res.findings if f.severity == severity}


@pytest.fixture(scope="module")
def drafters(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("fit")
    wide = df.config(hidden_size=256)  # z-lab's layout at another width: the tensors follow the config
    ts = {
        k: np.zeros([256 if n == df.H else (256 * 3 if n == df.H * 3 else n) for n in v.shape], np.float32) for k, v in df.tensors().items()
    }
    medusa_cfg, medusa_ts = mf.cases()["vllm-names"]
    return {
        ("dflash", "256"): write_checkpoint(d / "dflash256", wide, ts),
        ("dflash", "64"): df.write(d / "dflash"),
        ("dflash2", "64"): write_checkpoint(d / "dflash2", df.config2(), df.tensors2()),
        ("dspark", "64"): write_checkpoint(d / "dspark", df.config_dspark(), df.tensors_dspark()),
        ("eagle", "64"): e1.write(d / "eagle1", ts=e1.tensors(bias=False)),
        ("medusa", "64"): write_checkpoint(d / "medusa", medusa_cfg, medusa_ts),
    }


def test_every_family_that_states_a_fit_has_a_reader_and_the_rules_run_for_them():
    assert set(FIT_FAMILIES) == set(_readers())
    assert set(RULES["F001"].families) == set(RULES["F002"].families) == set(FIT_FAMILIES)
    assert "eagle3" not in RULES["F001"].families  # EAGLE-3's G and V rules say it: its verdicts do not move


def test_F001_the_dflash_drafter_of_hidden_256_against_smollm2(drafters):
    """Before: OK, info only (D009, L009, L011). Now F001 names both widths."""
    [res] = _results(drafters[("dflash", "256")], "dflash", SMOLLM)
    [msg] = error_messages(res)["F001"]
    assert "256 wide (config hidden_size)" in msg and "hidden_size is 576" in msg
    assert "DFlash drafter expects N concatenated aux hidden features" in msg  # what vLLM raises, from its source
    assert not res.ok


@pytest.mark.parametrize("family", ["dflash", "dflash2", "dspark", "eagle", "medusa"])
def test_F001_every_family_against_a_target_of_another_width(drafters, family):
    [res] = _results(drafters[(family, "64")], family, SMOLLM)
    [msg] = error_messages(res)["F001"]
    assert "64 wide" in msg and "576" in msg, msg
    [fits] = _results(drafters[(family, "64")], family, TINY)  # the target they were sized for
    assert "F001" not in _codes(fits, "error") and "F002" not in _codes(fits, "error"), error_messages(fits)


def test_F002_an_embedding_the_engine_keeps_smaller_than_the_target_vocabulary(drafters):
    """vLLM keeps an EAGLE-1 drafter's own embedding unless it equals the target's: 512 rows against 49152 ids."""
    [res] = _results(drafters[("eagle", "64")], "eagle", SMOLLM)
    [msg] = error_messages(res)["F002"]
    assert "model.embed_tokens.weight (512 rows)" in msg and "vocabulary is 49152" in msg and "512…49151" in msg


def test_F002_a_head_over_fewer_ids_is_a_warning_and_a_filled_map_is_not_compared(tmp_path):
    """A DFlash drafter shipping its own head of 512 rows against a 576-row target of the same width: its ids are read as
    the target's first 512 (a padded target's case): a warning. With a d2t map filled, the head's ids are mapped."""
    target = tmp_path / "padded"
    target.mkdir()
    cfg = json.loads((TINY_TARGET / "config.json").read_text()) | {"vocab_size": 576}
    (target / "config.json").write_text(json.dumps(cfg))
    ts = df.tensors() | {"lm_head.weight": np.zeros((df.V, df.H), np.float32)}
    own_head = write_checkpoint(tmp_path / "own-head", df.config(), ts)
    [res] = _results(own_head, "dflash", open_target_arg(target))
    warn = [f.message for f in res.findings if f.code == "F002"]
    assert warn and "lm_head.weight (512 rows)" in warn[0] and "first 512" in warn[0], res.findings
    assert "F002" not in _codes(res, "error")
    mapped = write_checkpoint(tmp_path / "mapped", df.config(draft_vocab_size=df.V), ts | {"d2t": np.zeros(df.V, np.int64)})
    [res] = _results(mapped, "dflash", open_target_arg(target))
    assert not [f for f in res.findings if f.code == "F002" and "lm_head" in f.message], res.findings


def test_F001_an_mtp_head_against_a_target_given_beside_it(tmp_path):
    from specbridge.cli.mtp_check import check_mtp, mtp_index

    path = mx.write_target(tmp_path / "glm", mx.glm_config())
    results, *_ = check_mtp(mtp_index(path, False), path, "vllm==0.32.0", SMOLLM, None)
    [msg] = error_messages(results[0])["F001"]
    assert f"{mx.H} wide (eh_proj rows)" in msg and "576" in msg
    results, *_ = check_mtp(mtp_index(path, False), path, "vllm==0.32.0", None, None)
    assert "F001" not in _codes(results[0], "error")


def test_C003_is_said_for_a_dflash_drafter_too(tmp_path):
    target = tmp_path / "bf16"
    shutil.copytree(TINY_TARGET, target)
    cfg = json.loads((target / "config.json").read_text())
    cfg.pop("dtype", None)
    (target / "config.json").write_text(json.dumps(cfg | {"torch_dtype": "bfloat16"}))
    drafter = df.write(tmp_path / "fp16", df.config(torch_dtype="float16"))
    [res] = _results(drafter, "dflash", open_target_arg(target))
    assert "C003" in _codes(res, "warning")


def test_launch_refuses_a_drafter_that_does_not_fit_the_target(drafters, tmp_path, capsys):
    """`launch` printed `vllm serve … --speculative-config {"method":"dflash",…}` for the 256-wide drafter over
    SmolLM2-135M; it now refuses with the findings (exit 1), as for EAGLE-3."""
    from specbridge.cli.commands import launch_cmd

    target = shutil.copytree(alias_config_dir("smollm2-135m"), tmp_path / "smollm2")
    rc = launch_cmd(drafters[("dflash", "256")], "vllm==0.32.0", str(target), None, None, None, False)
    out, err = capsys.readouterr()
    assert rc == 1 and "refusing to print a launch command" in err and "F001" in err, err
    assert "vllm serve" not in out
    rc = launch_cmd(drafters[("dflash", "64")], "vllm==0.32.0", str(TINY_TARGET), None, None, None, False)
    out, err = capsys.readouterr()
    assert rc == 0 and "vllm serve" in out, err


def test_F002_a_head_over_more_ids_without_a_map_is_a_warning(tmp_path):
    """A DSpark head padded to 640 rows over the 512-token target, no d2t: vLLM 0.30.0 accepts a larger draft vocabulary
    (tests/test_vllm_dspark_early.py), so the extra ids are said as padding the drafter must never propose."""
    wide = 640
    ts = df.tensors_dspark() | {
        "lm_head.weight": np.zeros((wide, df.H), np.float32),
        "markov_head.markov_w2.weight": np.zeros((wide, df.MARKOV_RANK), np.float32),
    }
    padded = df.write(tmp_path / "padded", df.config_dspark(draft_vocab_size=wide), ts)
    [res] = _results(padded, "dspark", TINY, "vllm==0.30.0")
    [f] = [f for f in res.findings if f.code == "F002"]
    assert f.severity == "warning" and "draft ids 512…639 name no target token" in f.message, f
    assert res.ok
