"""TensorRT-LLM's DSpark rows (src/specbridge/engines/trtllm/dspark.py): read from source, never run.

A standalone DSpark drafter (DeepSeek's Qwen3 layout) is GQADSparkForCausalLM: DFlash's class plus the Markov head
tensors ([vocab_size, markov_rank], taken before DFlash's remap, nested or bare names) and the confidence head's
(loaded, unused). What raises is what modeling_dspark.py @ 008b54fe raises; releases before 1.3.0 have no DSpark
(DSparkDecodingConfig is first read in 1.3.0rc24's llm_args)."""

from __future__ import annotations

import json

import dflash_fixtures as df
import numpy as np
from conftest import TINY_TARGET, run_cli

from specbridge.engines.registry import family_rows

E = "trtllm==1.3.0"


def _check(path, engine=E):
    r = run_cli("check", path, "--engine", engine, "--target", TINY_TARGET, "--json")
    out = json.loads(r.stdout)
    codes: dict[str, list[str]] = {}
    for f in out["findings"]:
        if f["severity"] != "info":
            codes.setdefault(f["code"], []).append(f["message"])
    return r.returncode, codes


def _write(tmp_path, name, cfg=None, drop=(), add=None, rename=None):
    ts = {k: v for k, v in df.tensors_dspark().items() if k not in drop} | (add or {})
    ts = {(rename or {}).get(k, k): v for k, v in ts.items()}
    return df.write(tmp_path / name, cfg or df.config_dspark(), ts)


def test_the_range_cites_its_reads_and_leaves_the_mla_and_embedded_forms_unmodelled():
    [row] = family_rows("trtllm", "dspark")
    assert row.first == "1.3.0" and "1.3.0rc24" in row.begins and not row.runs
    assert any("1.3.0rc24" in r.release for r in row.reads) and all(r.file for r in row.reads)
    assert set(row.unmodelled_archs) == {"K3DSparkModel", "DSparkDraftModel"}
    cls = row.classes["GQADSparkForCausalLM"]
    assert cls.methods == ("DSPARK",) and "008b54fe" in cls.file


def test_deepseek_layout_loads_whole_on_1_3_and_has_no_class_before(tmp_path):
    d = _write(tmp_path, "plain")
    rc, codes = _check(d)
    assert rc == 0 and set(codes) <= {"R004"}, codes
    # bare head spellings are the nested ones (_DSPARK_HEAD_WEIGHT_ALIASES)
    bare = _write(
        tmp_path, "bare", rename={"markov_head.markov_w1.weight": "markov_w1.weight", "markov_head.markov_w2.weight": "markov_w2.weight"}
    )
    rc, codes = _check(bare)
    assert rc == 0 and set(codes) <= {"R004"}, codes
    rc, codes = _check(d, "trtllm==1.2.0")
    assert rc == 1 and any("first release with one is 1.3.0" in m for m in codes["L005"])


def test_what_the_head_loader_raises(tmp_path):
    # markov_rank 0 while the checkpoint ships the Markov head: ValueError, not a silent drop
    rc, codes = _check(_write(tmp_path, "rank0", cfg=df.config_dspark(markov_rank=0)))
    assert rc == 1 and any("markov_rank resolved to 0" in m for m in sum(codes.values(), []))
    # a gated / rnn head or causal=true: refused while building the drafter
    for name, over, words in (("gated", {"markov_head_type": "gated"}, "only 'vanilla'"), ("causal", {"causal": True}, "causal=true")):
        rc, codes = _check(_write(tmp_path, name, cfg=df.config_dspark(**over)))
        assert rc == 1 and any(words in m for m in codes.get("L006", [])), (name, codes)
    # markov_w2 is checked against (vocab_size, markov_rank): a draft-vocabulary head is a size mismatch
    narrow = {"markov_head.markov_w2.weight": np.zeros((256, df.MARKOV_RANK), np.float32)}
    rc, codes = _check(_write(tmp_path, "narrow", add=narrow))
    assert rc == 1 and "L003" in codes, codes
    # the rank a head switch spelling resolves to: dspark_config wins over the top level
    cfg = df.config_dspark(markov_rank=0, dspark_config={"markov_rank": df.MARKOV_RANK})
    rc, codes = _check(_write(tmp_path, "nested", cfg=cfg))
    assert rc == 0, codes


def test_markov_head_type_is_lower_cased_and_an_empty_one_is_vanilla(tmp_path):
    """_init_dspark_heads compares str(markov_head_type or 'vanilla').lower() with 'vanilla': any case of vanilla and an
    empty value pass, a gated head in capitals is still refused."""
    for name, mht in (("capitalised", "Vanilla"), ("mixed", "vAnIlLa"), ("empty", ""), ("nested-upper", None)):
        cfg = df.config_dspark(markov_head_type=mht) if mht is not None else df.config_dspark(dspark_config={"markov_head_type": "VANILLA"})
        rc, codes = _check(_write(tmp_path, name, cfg=cfg))
        assert rc == 0 and not codes.get("L006"), (name, codes)
    rc, codes = _check(_write(tmp_path, "gated-upper", cfg=df.config_dspark(markov_head_type="GATED")))
    assert rc == 1 and any("only 'vanilla'" in m for m in codes.get("L006", [])), codes


def test_the_confidence_head_is_loaded_unused_and_embed_head_come_from_the_target(tmp_path):
    d = _write(tmp_path, "plain2")
    r = run_cli("check", d, "--engine", E, "--target", TINY_TARGET, "--json", "--tables")
    out = json.loads(r.stdout)
    text = json.dumps(out)
    assert "confidence-scheduled verification is not implemented" in text
    no_conf = _write(tmp_path, "noconf", drop=("confidence_head.proj.weight", "confidence_head.proj.bias"))
    assert _check(no_conf)[0] == 0
