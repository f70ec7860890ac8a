"""convert for DFlash drafters: each real layout change (a `model.`-prefixed save, Muse Glimmer's names for releases
before their aliases, the mask embedding as a tensor or a bare-tensor side file) written, byte-verified and checked
before (the finding) and after (gone); a release that reads no mask embedding refused; DFlash → EAGLE-3 refused; a
drafter already in the layout said to need nothing."""

from __future__ import annotations

import io
import json

import dflash_fixtures as dfx
import numpy as np
import pytest
from conftest import raw_tensors, run_cli, tree_state

from specbridge.checkpoint.maskfile import mask_file_bytes, read_mask_file
from specbridge.engines.registry import newest_in_ci

MASK_ROW = (np.arange(dfx.H, dtype=np.float32) / dfx.H + 0.5).astype(np.float32)


def codes(path, engine: str) -> tuple[int, dict[str, list[str]]]:
    r = run_cli("check", path, "--engine", engine, "--json")
    out = json.loads(r.stdout)
    found: dict[str, list[str]] = {}
    for f in out["findings"]:
        if f["severity"] == "error":
            found.setdefault(f["code"], []).append(f["message"])
    return r.returncode, found


def convert(*args):
    r = run_cli("convert", *map(str, args), "--json")
    return r, (json.loads(r.stdout) if r.stdout.strip().startswith("{") else None)


def same_bytes(src, dst, rename=lambda n: n) -> None:
    """Every source tensor is in the output under its new name with the same dtype, shape and bytes."""
    before, after = raw_tensors(src), raw_tensors(dst)
    moved = {rename(n): v for n, v in before.items() if n.removeprefix("model.") != "mask_embedding"}
    assert moved == after


@pytest.fixture
def target_cfg(tmp_path):
    p = tmp_path / "target" / "config.json"
    p.parent.mkdir()
    p.write_text(
        json.dumps(
            {
                "architectures": ["Qwen3ForCausalLM"],
                "model_type": "qwen3",
                "hidden_size": dfx.H,
                "num_hidden_layers": 4,
                "vocab_size": dfx.V,
            }
        )
    )
    return p


def test_model_prefixed_save_for_vllm(tmp_path):
    """vLLM prefixes every non-lm_head name with `model.`: a `model.`-prefixed save raises there (L004)."""
    src = dfx.write(tmp_path / "src", ts={"model." + k: v for k, v in dfx.tensors().items()})
    rc, found = codes(src, "vllm==0.32.0")
    assert rc == 1 and "L004" in found
    state = tree_state(src)
    r, obj = convert(src, "--engine", "vllm==0.32.0", "-o", tmp_path / "out")
    assert r.returncode == 0 and obj["ok"] and obj["verify_problems"] == [], r.stderr
    assert obj["from_layout"] == "dflash (model.-prefixed)" and obj["to_layout"] == "dflash" and len(obj["renamed"]) == 25
    same_bytes(src, tmp_path / "out", lambda n: n.removeprefix("model."))
    assert codes(tmp_path / "out", "vllm==0.32.0") == (0, {}) and codes(tmp_path / "out", "vllm==0.27.0") == (0, {})
    assert tree_state(src) == state  # the original is kept


def test_model_prefixed_in_place_then_restore(tmp_path):
    src = dfx.write(tmp_path / "src", ts={"model." + k: v for k, v in dfx.tensors().items()})
    state = tree_state(src)
    r, obj = convert(src, "--engine", "vllm==0.32.0", "--in-place")
    assert r.returncode == 0 and obj["method"] == "in-place header" and obj["backup"], r.stderr
    assert codes(src, "vllm==0.32.0") == (0, {})
    assert run_cli("restore", src).returncode == 0 and tree_state(src) == state


def test_muse_glimmer_names_for_releases_before_their_aliases(tmp_path, target_cfg):
    """Meta's encoder.fc / encoder.output_norm_enc and MuseGlimmerAssistantModel load on vLLM 0.29+ and SGLang 0.5.19+
    only; converted, the drafter loads on vLLM 0.27 and SGLang 0.5.16 too (num_target_layers from the target)."""
    cfg = dfx.config(architectures=["MuseGlimmerAssistantModel"], model_type="muse_glimmer_assistant", rope_parameters={"rope_theta": 5e5})
    dc = cfg.pop("dflash_config")
    cfg.pop("rope_theta")
    cfg |= {"mask_token_id": dc["mask_token_id"], "target_layer_ids": dc["target_layer_ids"]}
    ren = {"fc.weight": "encoder.fc.weight", "hidden_norm.weight": "encoder.output_norm_enc.weight"}
    src = dfx.write(tmp_path / "muse", cfg, {ren.get(k, k): v for k, v in dfx.tensors().items()})
    rc27, f27 = codes(src, "vllm==0.27.0")
    rc16, f16 = codes(src, "sglang==0.5.16")
    assert rc27 == 1 and {"L004", "L005"} <= set(f27) and rc16 == 1 and {"L001", "L005"} <= set(f16)
    assert codes(src, "vllm==0.32.0") == (0, {})  # 0.29+ reads it as it is (its top-level target_layer_ids sizes fc)
    out = tmp_path / "out"
    r, obj = convert(src, "--engine", "sglang==0.5.16", "--target", target_cfg, "-o", out)
    assert r.returncode == 0 and obj["ok"] and obj["verify_problems"] == [], r.stdout + r.stderr
    back = {v: k for k, v in ren.items()}
    same_bytes(src, out, lambda n: back.get(n, n))
    new = json.loads((out / "config.json").read_text())
    assert new["architectures"] == ["DFlashDraftModel"] and new["model_type"] == "qwen3" and new["rope_theta"] == 5e5
    assert new["dflash_config"] == dc and new["num_target_layers"] == 4 and "target_layer_ids" not in new
    for engine in ("vllm==0.27.0", "sglang==0.5.16", "vllm==0.32.0", "sglang==0.5.23"):
        assert codes(out, engine) == (0, {}), engine


@pytest.mark.ml
def test_mask_embedding_tensor_becomes_the_side_file(tmp_path):
    """A trained mask row shipped as a `mask_embedding` tensor is skipped by vLLM and SGLang (D004); converted it is
    mask_embedding.pt, {embedding, mask_token_id}, which both read (torch.load weights_only, as the engines do)."""
    torch = pytest.importorskip("torch")  # torch.load reads the file back as the engines do
    src = dfx.write(tmp_path / "src", ts=dfx.tensors() | {"mask_embedding": MASK_ROW})
    for engine in ("vllm==0.32.0", "sglang==0.5.23"):
        rc, found = codes(src, engine)
        assert rc == 1 and "D004" in found, (engine, found)
    out = tmp_path / "out"
    r, obj = convert(src, "--engine", "sglang==0.5.23", "-o", out)
    assert r.returncode == 0 and obj["ok"] and obj["verify_problems"] == [], r.stdout + r.stderr
    assert obj["dropped"][0][0] == "mask_embedding" and obj["added"][0][0] == "mask_embedding.pt" and "mask_embedding.pt" in obj["verified"]
    same_bytes(src, out)
    saved = torch.load(io.BytesIO((out / "mask_embedding.pt").read_bytes()), weights_only=True)
    assert saved["mask_token_id"] == dfx.MASK_ID and np.array_equal(saved["embedding"].numpy(), MASK_ROW)
    for engine in ("vllm==0.32.0", "vllm==0.27.0", "sglang==0.5.23"):
        assert codes(out, engine) == (0, {}), engine


@pytest.mark.ml
def test_bare_tensor_side_file_for_sglang(tmp_path):
    """vLLM reads a bare-tensor mask_embedding.pt; SGLang 0.5.20+ reads saved['embedding'] and raises on it (D004)."""
    torch = pytest.importorskip("torch")  # torch.load reads the file back as the engines do
    src = dfx.write(tmp_path / "src")
    torch.save(torch.from_numpy(MASK_ROW), src / "mask_embedding.pt")
    assert codes(src, "vllm==0.32.0") == (0, {})
    rc, found = codes(src, "sglang==0.5.23")
    assert rc == 1 and "bare tensor" in found["D004"][0]
    out = tmp_path / "out"
    r, obj = convert(src, "--engine", "sglang==0.5.23", "-o", out)
    assert r.returncode == 0 and obj["ok"] and obj["transformed"][0][0] == "mask_embedding.pt", r.stdout + r.stderr
    same_bytes(src, out)
    saved = torch.load(io.BytesIO((out / "mask_embedding.pt").read_bytes()), weights_only=True)
    assert saved["mask_token_id"] == dfx.MASK_ID and np.array_equal(saved["embedding"].numpy(), MASK_ROW)
    assert codes(out, "sglang==0.5.23") == (0, {}) and codes(out, "vllm==0.32.0") == (0, {})


def test_side_file_in_both_engines_form_is_carried_byte_for_byte(tmp_path):
    data = mask_file_bytes("F32", (dfx.H,), MASK_ROW.tobytes(), dfx.MASK_ID)
    src = dfx.write(tmp_path / "src", ts={"model." + k: v for k, v in dfx.tensors().items()})
    (src / "mask_embedding.pt").write_bytes(data)
    r, obj = convert(src, "--to", "dflash", "-o", tmp_path / "out")
    assert r.returncode == 0 and obj["verify_problems"] == [] and "mask_embedding.pt" in obj["unchanged"], r.stderr
    assert (tmp_path / "out" / "mask_embedding.pt").read_bytes() == data
    assert read_mask_file(tmp_path / "out" / "mask_embedding.pt").mask_token_id == dfx.MASK_ID


def test_a_release_that_reads_no_mask_embedding_is_refused(tmp_path):
    """SGLang before 0.5.20 embeds the mask slots with the target's own row: no drafter layout carries the mask there."""
    src = dfx.write(tmp_path / "src")
    (src / "mask_embedding.pt").write_bytes(mask_file_bytes("F32", (dfx.H,), MASK_ROW.tobytes(), dfx.MASK_ID))
    rc, found = codes(src, "sglang==0.5.19")
    assert rc == 1 and "D004" in found
    r = run_cli("convert", src, "--engine", "sglang==0.5.19", "-o", tmp_path / "out")
    assert r.returncode == 1 and "reads no mask embedding" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_already_in_the_layout_is_a_no_op(tmp_path):
    src = dfx.write(tmp_path / "src")
    state = tree_state(src)
    r, obj = convert(src, "--engine", "vllm==0.32.0", "-o", tmp_path / "out")
    assert r.returncode == 0 and obj["method"] == "unchanged" and obj["ok"], r.stderr
    assert not (tmp_path / "out").exists()
    r = run_cli("convert", src, "--to", "dflash", "--in-place")
    assert r.returncode == 0 and "nothing to change" in r.stdout and "nothing was written" in r.stdout
    assert tree_state(src) == state


@pytest.mark.parametrize("layout", ["vllm", "speculators", "sglang", "eagle", "trtllm", "nemo"])
def test_dflash_into_eagle3_is_refused(tmp_path, layout):
    src = dfx.write(tmp_path / "src")
    r = run_cli("convert", src, "--to", layout, "-o", tmp_path / "out")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "not converted into the EAGLE-3 layout" in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.ml
def test_a_hub_source_brings_its_side_file(tmp_path):
    """SGLang reads mask_embedding.pt from a local directory only: converting a Hub id downloads it (its listed size
    checked first) and writes it, in the form SGLang reads, beside the converted weights."""
    torch = pytest.importorskip("torch")  # torch.load reads the file back as the engines do
    pytest.importorskip("huggingface_hub")
    from hubserver import FakeHub, make_repo
    from test_hub import cli

    src = dfx.write(tmp_path / "src")
    torch.save(torch.from_numpy(MASK_ROW), src / "mask_embedding.pt")
    out = tmp_path / "out"
    with FakeHub({"org/df": make_repo(src)}) as hub:
        r = cli(hub, tmp_path / "hf-cache", "convert", "org/df", "--engine", "sglang==0.5.23", "-o", out, "--json")
    obj = json.loads(r.stdout)
    assert r.returncode == 0 and obj["ok"] and obj["transformed"][0][0] == "mask_embedding.pt", r.stdout + r.stderr
    same_bytes(src, out)
    saved = torch.load(io.BytesIO((out / "mask_embedding.pt").read_bytes()), weights_only=True)
    assert saved["mask_token_id"] == dfx.MASK_ID and np.array_equal(saved["embedding"].numpy(), MASK_ROW)


@pytest.mark.engine
@pytest.mark.full_conformance  # CI (per-era) leaves it to SPECBRIDGE_CONFORMANCE=all
@pytest.mark.long  # a vLLM engine start per case: ~4 min per release on 2 cores (SPECBRIDGE_LONG_TESTS=1 runs it)
@pytest.mark.parametrize("release", newest_in_ci(["0.27.0", "0.32.0"]))
def test_converted_drafters_load_on_real_vllm(release, tmp_path):
    """Before and after, through the real vLLM (the conformance harness: its DFlashQwen3ForCausalLM, load_weights and
    _read_mask_embedding on CPU): a model.-prefixed save raises, converted it loads every tensor; a mask_embedding
    tensor leaves model.mask_embedding unfilled, converted the side file fills it with the trained row; Muse Glimmer's
    names do not dispatch on 0.27, converted they load. Each converted case agrees with `check` (as the matrix does)."""
    import hashlib

    from test_conformance_vllm import _ready, differences, run_loader
    from test_conformance_vllm_dflash import predict

    why = _ready(release)
    if why:
        pytest.skip(why)
    muse_cfg = dfx.config(architectures=["MuseGlimmerAssistantModel"])
    ren = {"fc.weight": "encoder.fc.weight", "hidden_norm.weight": "encoder.output_norm_enc.weight"}
    before = {
        "prefixed": dfx.write(tmp_path / "prefixed", ts={"model." + k: v for k, v in dfx.tensors().items()}),
        "mask-tensor": dfx.write(tmp_path / "mask-tensor", ts=dfx.tensors() | {"mask_embedding": MASK_ROW}),
        "muse": dfx.write(tmp_path / "muse", muse_cfg, {ren.get(k, k): v for k, v in dfx.tensors().items()}),
    }
    after = {}
    for name, src in before.items():
        r = run_cli("convert", src, "--engine", f"vllm=={release}", "-o", tmp_path / f"{name}-converted")
        assert r.returncode == 0, r.stdout + r.stderr
        after[f"{name}-converted"] = tmp_path / f"{name}-converted"
    got = run_loader(release, before | after, tmp_path, method="dflash", arch="qwen3")
    assert got["prefixed"]["raised"] is not None and got["prefixed-converted"]["raised"] is None
    assert got["mask-tensor"]["params"]["model.mask_embedding"]["filled"] == 0
    row = got["mask-tensor-converted"]["params"]["model.mask_embedding"]
    assert row["filled"] == 1 and row["sha256"] == hashlib.sha256(MASK_ROW.tobytes()).hexdigest()
    assert got["muse-converted"]["raised"] is None
    if release == "0.27.0":
        assert got["muse"]["raised"] is not None
    else:  # 0.29+ reads Muse's names, and sizes fc by its top-level target_layer_ids (3 here, 2 draft layers)
        assert got["muse"]["raised"] is None and not differences(before["muse"], got["muse"], predict(before["muse"], release))
    for name, path in after.items():
        assert not differences(path, got[name], predict(path, release)), name


def test_a_speculators_dflash_drafter_is_refused_not_guessed(tmp_path):
    """speculators' DFlash config (aux ids as boundaries, sample_from_anchor, causal SWA) is read by vLLM as it is
    (speculators/algos.py update_dflash); convert does not rewrite it without carrying those semantics."""
    cfg = {
        "architectures": ["DFlashSpeculator"],
        "speculators_model_type": "dflash",
        "transformer_layer_config": {k: v for k, v in dfx.config().items() if k not in ("architectures", "dflash_config")},
        "aux_hidden_state_layer_ids": [1, 2, 3],
        "mask_token_id": dfx.MASK_ID,
        "draft_vocab_size": dfx.V,
    }
    src = dfx.write(tmp_path / "src", cfg)
    r = run_cli("convert", src, "--to", "dflash", "-o", tmp_path / "out")
    assert r.returncode == 2 and "speculators DFlash drafter" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()
