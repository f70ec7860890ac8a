"""Drafter families: every checkpoint is read as the family its evidence shows, or refused (exit 2, what was seen).

EAGLE-3 drafters (the corpus, the producer fixtures, the examples) stay EAGLE-3; a DFlash drafter laid out as
vLLM's qwen3_dflash.py loads it is checked against vLLM's DFlash rows (no false error, no convert-to-EAGLE-3 fix);
families specbridge does not model are refused with their evidence, never simulated as EAGLE-3."""

from __future__ import annotations

import json
from pathlib import Path

import dflash_fixtures as dfx
import eagle1_fixtures as e1
import numpy as np
import pytest
from conftest import TINY_TARGET, run_cli
from safetensors.numpy import save_file

from specbridge.checkpoint.maskfile import mask_file_bytes
from specbridge.checkpoint.reader import open_checkpoint
from specbridge.families.detect import detect_family

ROOT = Path(__file__).resolve().parents[1]


def _family(path: Path) -> str:
    c = open_checkpoint(path)
    return detect_family(c.config, {n: t.shape for n, t in c.tensors.items()}, str(path)).name


def _corpus_entries():
    for p in sorted((ROOT / "tests" / "fixtures" / "corpus").glob("*.json")):
        yield json.loads(p.read_text())


def test_every_eagle3_checkpoint_we_hold_is_read_as_eagle3():
    """The guard for 'no EAGLE-3 verdict changes': every published drafter of the corpus, every producer fixture
    and every example is detected as EAGLE-3 (their tensors' shapes and configs, as check reads them)."""
    n = 0
    for e in _corpus_entries():
        shapes = {t["name"]: t["shape"] for t in e["tensors"]} if isinstance(e["tensors"], list) else {}
        v = detect_family(e["config"], shapes, e["id"])
        assert v.name == "eagle3", (e["id"], v.evidence)
        n += 1
    dirs = [ROOT / "examples" / "story", ROOT / "examples" / "smollm2-drafter", ROOT / "tests" / "fixtures" / "story"]
    dirs += [
        d for d in (ROOT / "tests" / "fixtures" / "producers").glob("*/*") if (d / "config.json").exists() and "target" not in d.parent.name
    ]
    for d in dirs:
        assert _family(d) == "eagle3", d
        n += 1
    assert n >= 17


@pytest.fixture(scope="module")
def dflash(tmp_path_factory) -> Path:
    return dfx.write(tmp_path_factory.mktemp("dflash") / "qwen3-dflash-2l")


def test_inspect_names_dflash_with_its_own_geometry(dflash):
    r = run_cli("inspect", dflash, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["family"]["name"] == "dflash"
    assert any("DFlashDraftModel" in e for e in out["family"]["evidence"])
    g = out["geometry"]
    assert g["draft_layers_in_keys"] == 2 and g["fc"] == [dfx.H, dfx.H * 3]
    assert g["target_layer_ids"] == dfx.TARGET_IDS and g["target_layer_ids_where"] == "dflash_config.target_layer_ids"
    assert g["mask_token_id"] == dfx.MASK_ID and g["block_size"] == 4
    assert g["embed_tokens"] == g["lm_head"] == "shared from the target"
    assert "unrecognised" not in r.stdout
    text = run_cli("inspect", dflash).stdout
    assert "family: DFlash" in text and "layer outputs, 0-based" in text


@pytest.mark.parametrize("version", ["0.27.0", "0.32.0"])
def test_the_two_layer_dflash_drafter_is_ok_on_vllm(dflash, version):
    """The issue's checkpoint: exit 0, no finding above info, every tensor loaded by DFlashQwen3ForCausalLM."""
    r = run_cli("check", dflash, "--engine", f"vllm=={version}", "--json")
    assert r.returncode == 0, r.stdout
    out = json.loads(r.stdout)
    assert out["class"] == "DFlashQwen3ForCausalLM" and out["layout"] == "dflash" and out["family"]["name"] == "dflash"
    assert {f["severity"] for f in out["findings"]} <= {"info"}, out["findings"]
    assert all(t["status"] == "loaded" for t in out["tensors"])
    shared = {p["name"] for p in out["parameters"] if p["status"] == "shared-from-target"}
    assert shared == {"model.embed_tokens.weight", "lm_head.weight"}
    assert not out["load"]["missing"] and not out["load"]["dropped"]


def test_a_release_without_a_dflash_class_says_which_release_has_one(dflash):
    r = run_cli("check", dflash, "--engine", "vllm==0.18.0", "--json")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    l005 = [f for f in out["findings"] if f["code"] == "L005"]
    assert l005 and "first release with one is 0.20.0" in l005[0]["message"]
    assert "convert" not in (l005[0]["fix"] or "")  # never a fix that converts it into another family
    assert "serve it on vllm 0.20.0 or later" in l005[0]["fix"] and "rename" not in l005[0]["fix"]  # nothing to rename


@pytest.mark.parametrize("engine, says", [("vllm==0.22.0", "models the DFlash loader from 0.26.0")])
def test_engines_and_releases_without_dflash_rows_are_refused_not_guessed(dflash, engine, says):
    r = run_cli("check", dflash, "--engine", engine)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not r.stdout.strip()


def test_engine_all_answers_every_modelled_dflash_range_and_names_the_rest(dflash):
    """One answer per modelled range at its newest release read; SGLang 0.5.11–0.5.17 really refuse this drafter (its
    target ids [0, 1, 2] are checked against the draft's 2 layers when num_target_layers is absent)."""
    r = run_cli("check", dflash, "--json")
    out = json.loads(r.stdout)
    got = {(x["engine"]["name"], x["engine"]["version"]): x["ok"] for x in out["results"]}
    assert got == {
        ("sglang", "0.5.17"): False,
        ("sglang", "0.5.18"): True,
        ("sglang", "0.5.19"): True,
        ("sglang", "0.5.23"): True,
        ("vllm", "0.27.0"): True,
        ("vllm", "0.30.0"): True,  # 0.28–0.30 and 0.31+ differ for Laguna drafters only (tests/test_laguna_dflash.py)
        ("vllm", "0.32.0"): True,
        ("trtllm", "1.4.0rc1"): True,  # read, not run (tests/test_trtllm_dflash.py)
    }
    assert r.returncode == 1
    assert any("0.20.0–0.24" in s for s in out["not_checked"])
    assert any("0.25.0 builds qwen3_dflash.py" in s for s in out["not_checked"])  # 0.25.0 is modelled for Laguna only


def test_sglang_dflash_ranges(dflash, tmp_path):
    rc, codes = _codes(dflash, "sglang==0.5.11")
    assert rc == 1 and any("out-of-range layer id" in m and "num_target_layers" in m for m in codes["L006"])
    fixed = dfx.write(tmp_path / "ntl", dfx.config(num_target_layers=4))
    assert _codes(fixed, "sglang==0.5.11")[0] == 0
    rc, codes = _codes(dflash, "sglang==0.5.10")
    assert rc == 1 and any("first release with one is 0.5.11" in m for m in codes["L005"])
    out = json.loads(run_cli("check", dflash, "--engine", "sglang==0.5.23", "--json").stdout)
    assert out["ok"] and out["class"] == "DFlashDraftModel"
    assert not any(p["status"] == "shared-from-target" for p in out["parameters"])  # SGLang's draft has no embed/head
    laguna = dfx.write(tmp_path / "laguna", dfx.config(architectures=["DFlashLagunaForCausalLM"]))
    r = run_cli("check", laguna, "--engine", "sglang==0.5.23")
    assert r.returncode == 2 and "does not model that class" in r.stderr


def test_sglang_0517_dflash_is_0516s(dflash):
    """0.5.17's dflash.py still checks target_layer_ids against the draft's layer count (no num_target_layers given)
    and has no MuseGlimmerAssistantModel: both change in 0.5.18."""
    rc, codes = _codes(dflash, "sglang==0.5.17")
    assert rc == 1 and any("out-of-range layer id" in m for m in codes["L006"]), codes
    assert _codes(dflash, "sglang==0.5.18")[0] == 0


def _mutant(tmp_path: Path, name: str, cfg=None, drop=(), add=None) -> Path:
    ts = {k: v for k, v in dfx.tensors().items() if k not in drop} | (add or {})
    return dfx.write(tmp_path / name, cfg, ts)


def _codes(path: Path, engine: str) -> tuple[int, dict[str, list[str]]]:
    r = run_cli("check", path, "--engine", engine, "--json")
    out = json.loads(r.stdout)
    codes: dict[str, list[str]] = {}
    for f in out["findings"]:
        codes.setdefault(f["code"], []).append(f["message"])
    return r.returncode, codes


def test_mask_hidden_shipped_raises_in_vllms_dflash_loader(tmp_path):
    p = _mutant(tmp_path, "mask-hidden", add={"mask_hidden": np.zeros((1, 1, dfx.H * 3), np.float32)})
    rc, codes = _codes(p, "vllm==0.32.0")
    assert rc == 1 and any("should not ship a mask_hidden weight" in m for m in codes["L006"])


def test_fc_narrower_than_the_configured_target_layers_is_a_size_mismatch(tmp_path):
    """fc reads one target state per configured layer id: four ids against a three-state fc."""
    p = _mutant(tmp_path, "ids-4", cfg=dfx.config(dflash_config={"target_layer_ids": [0, 1, 2, 3], "mask_token_id": dfx.MASK_ID}))
    rc, codes = _codes(p, "vllm==0.32.0")
    assert rc == 1 and any("model.fc.weight" in m and "[64, 256]" in m for m in codes["L003"])


def test_reduced_vocab_without_d2t_leaves_the_vocab_map_at_zeros(tmp_path):
    vd = 256
    rng = np.random.default_rng(1)
    head = {"lm_head.weight": (rng.standard_normal((vd, dfx.H)) * 0.02).astype(np.float32)}
    p = _mutant(tmp_path, "reduced", cfg=dfx.config(draft_vocab_size=vd), add=head)
    rc, codes = _codes(p, "vllm==0.32.0")
    assert rc == 1 and any("draft_id_to_target_id" in m for m in codes["L002"])


def test_muse_glimmer_names_load_only_from_028(tmp_path):
    ts = dfx.tensors()
    ts["encoder.fc.weight"] = ts.pop("fc.weight")
    ts["encoder.output_norm_enc.weight"] = ts.pop("hidden_norm.weight")
    p = dfx.write(tmp_path / "muse", dfx.config(), ts)
    assert _codes(p, "vllm==0.32.0")[0] == 0
    assert _codes(p, "vllm==0.28.0")[0] == 0  # the renames ship in the 0.28.0 wheel
    rc, codes = _codes(p, "vllm==0.27.0")
    assert rc == 1 and "L004" in codes  # an unknown name raises in 0.27's AutoWeightsLoader


def test_convert_refuses_a_dflash_drafter_into_eagle3(dflash, tmp_path):
    """convert reads DFlash drafters (tests/test_convert_dflash.py), but never into an EAGLE-3 layout."""
    r = run_cli("convert", dflash, "--to", "sglang", "-o", tmp_path / "out")
    assert r.returncode == 2 and "not converted into the EAGLE-3 layout" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


# --- families specbridge does not model: refused, evidence shown, nothing simulated ------------------------------


def _write(dir: Path, cfg: dict, ts: dict[str, np.ndarray]) -> Path:
    dir.mkdir(parents=True)
    (dir / "config.json").write_text(json.dumps(cfg))
    save_file(ts, str(dir / "model.safetensors"))
    return dir


def test_a_medusa_drafter_is_checked_where_an_engine_has_medusa(tmp_path):
    """Medusa is read with vLLM's medusa.py rows (no longer refused); SGLang has no Medusa and TensorRT-LLM builds it
    only on its TensorRT engine backend: each says so (exit 2), with no findings and no fix into another family."""
    d = tmp_path / "medusa"
    _write(d, {"architectures": ["MedusaModel"], "medusa_num_heads": 2}, {"blocks.0.layers.0.weight": np.zeros((8, 8), np.float32)})
    r = run_cli("check", d, "--engine", "vllm==0.32.0")
    assert r.returncode == 1 and "class Medusa" in r.stdout, (r.stdout, r.stderr)
    assert "L002" in r.stdout  # head 1 and both lm_heads: nothing fills them
    for engine, says in (("sglang", "sglang has no Medusa drafter class"), ("trtllm", "only on its TensorRT engine backend")):
        r = run_cli("check", d, "--engine", engine)
        assert r.returncode == 2 and says in r.stderr and "nothing was checked" in r.stderr, r.stderr
        assert "L00" not in r.stdout and "specbridge convert" not in r.stderr


@pytest.mark.parametrize(
    "kind, says",
    [
        ("mlp_speculator", "MLP speculator drafter"),
    ],
)
def test_unmodelled_families_are_refused_with_their_evidence(tmp_path, kind, says):
    d = tmp_path / kind
    _write(
        d, {"architectures": ["MLPSpeculatorPreTrainedModel"], "n_predict": 2}, {"speculator.emb.0.weight": np.zeros((8, 8), np.float32)}
    )
    for cmd in (["check", d, "--engine", "vllm==0.32.0"], ["inspect", d], ["check", d, "--json"]):
        r = run_cli(*cmd)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        assert says in r.stderr and "nothing was checked" in r.stderr, r.stderr
        assert "L00" not in r.stdout and "convert" not in r.stderr  # no findings, no fix into another family


def test_a_checkpoint_of_no_known_family_is_refused_in_one_line(tmp_path):
    d = _write(tmp_path / "odd", {"architectures": ["Mystery"], "model_type": "odd"}, {"w.weight": np.zeros((4, 4), np.float32)})
    r = run_cli("check", d, "--engine", "vllm==0.32.0")
    assert r.returncode == 2 and "fits no drafter family" in r.stderr and "Mystery" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not r.stdout.strip()


def test_an_architecture_name_over_another_familys_structure_is_answered_as_the_engine_builds_it(tmp_path):
    """An EAGLE-3 architecture name over DFlash's structure and keys of neither: the engines dispatch on the name, so
    the EAGLE-3 class is simulated (said as such: the verdict's mislabel, rule L017) and the answer is the engine's
    (a load that raises), not a refusal as "ambiguous" (tests/test_mislabelled.py has the matrix)."""
    cfg = dfx.config(architectures=["Eagle3LlamaForCausalLM"])
    del cfg["dflash_config"]
    d = dfx.write(tmp_path / "both", cfg)
    v = detect_family(json.loads((d / "config.json").read_text()), {n: t.shape for n, t in open_checkpoint(d).tensors.items()})
    assert v.family.name == "eagle3" and v.candidates == [] and (v.mislabel.named, v.mislabel.shown) == ("eagle3", "dflash")
    r = run_cli("check", d, "--engine", "vllm==0.32.0")
    assert r.returncode == 1 and "L017 error: architectures[0] 'Eagle3LlamaForCausalLM' names the EAGLE-3 family" in r.stdout
    assert "write architectures ['DFlashDraftModel']" in r.stdout, r.stdout


# --- D rules: the public DFlash failures, reproduced from files -------------------------------------------------


def test_no_mask_token_refuses_to_start_on_vllm(tmp_path):
    p = dfx.write(tmp_path / "no-mask", dfx.config(dflash_config={"target_layer_ids": dfx.TARGET_IDS}))
    rc, codes = _codes(p, "vllm==0.32.0")
    assert rc == 1 and any("mask_token_id" in m for m in codes["L006"])


def test_mask_token_outside_the_vocabulary(tmp_path):
    p = dfx.write(tmp_path / "mask-oob", dfx.config(dflash_config={"target_layer_ids": dfx.TARGET_IDS, "mask_token_id": dfx.V}))
    rc, codes = _codes(p, "vllm==0.32.0")
    assert rc == 1 and any("outside the vocabulary" in m for m in codes["D003"])


def test_zero_mask_row_without_the_side_file_is_the_mimo_failure(tmp_path):
    """sglang #27924: a shipped embedding whose <|MASK|> row is zero, and no mask_embedding.pt."""
    emb = (np.random.default_rng(4).standard_normal((dfx.V, dfx.H)) * 0.02).astype(np.float32)
    emb[dfx.MASK_ID] = 0.0
    p = _mutant(tmp_path, "mimo", add={"embed_tokens.weight": emb})
    r = run_cli("check", p, "--engine", "vllm==0.32.0", "--json")
    out = json.loads(r.stdout)
    d004 = [f for f in out["findings"] if f["code"] == "D004"]
    assert r.returncode == 1 and d004 and d004[0]["severity"] == "error" and d004[0]["doc"].endswith("#d004")
    assert "mask_embedding.pt" in d004[0]["fix"]
    # present, in the form both engines read: vLLM reads it (never unpickled here)
    (p / "mask_embedding.pt").write_bytes(mask_file_bytes("F32", (dfx.H,), np.ones(dfx.H, np.float32).tobytes(), dfx.MASK_ID))
    out = json.loads(run_cli("check", p, "--engine", "vllm==0.32.0", "--json").stdout)
    assert [f["severity"] for f in out["findings"] if f["code"] == "D004"] == ["info"]
    assert next(x for x in out["parameters"] if x["name"] == "model.mask_embedding")["filled_by"] == ["mask_embedding.pt"]
    # SGLang reads the side file from 0.5.20 only: before, it is lost without a word (the MiMo failure)
    for version, severity in (("0.5.19", "error"), ("0.5.23", "info")):
        out = json.loads(run_cli("check", p, "--engine", f"sglang=={version}", "--json").stdout)
        assert [f["severity"] for f in out["findings"] if f["code"] == "D004"] == [severity], (version, out["findings"])


def test_trained_mask_row_passes(tmp_path):
    emb = (np.random.default_rng(5).standard_normal((dfx.V, dfx.H)) * 0.02).astype(np.float32)
    assert "D004" not in _codes(_mutant(tmp_path, "trained", add={"embed_tokens.weight": emb}), "vllm==0.32.0")[1]


def test_target_layer_ids_given_twice_off_by_one_disagree(tmp_path):
    """vllm #40727: target_layer_ids count layer outputs, the top-level aux ids count boundaries (ids + 1)."""
    same = dfx.write(tmp_path / "same", {**dfx.config(), "eagle_aux_hidden_state_layer_ids": dfx.TARGET_IDS})
    rc, codes = _codes(same, "vllm==0.32.0")
    assert any("disagree" in m for m in codes["D002"])
    good = dfx.write(tmp_path / "good", {**dfx.config(), "eagle_aux_hidden_state_layer_ids": [i + 1 for i in dfx.TARGET_IDS]})
    assert "D002" not in _codes(good, "vllm==0.32.0")[1]


def test_target_layers_past_the_target_are_an_error(tmp_path):
    tgt = tmp_path / "target"
    tgt.mkdir()
    (tgt / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["Qwen3ForCausalLM"],
                "model_type": "qwen3",
                "hidden_size": dfx.H,
                "num_hidden_layers": 2,
                "vocab_size": dfx.V,
            }
        )
    )
    p = dfx.write(tmp_path / "d")
    r = run_cli("check", p, "--engine", "vllm==0.32.0", "--target", tgt, "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and any(f["code"] == "D001" and "[3]" in f["message"] for f in out["findings"]), out["findings"]


# --- EAGLE-1/2: read as itself (vLLM's llama_eagle.py), its real problem caught ------------------------------------


def test_eagle1_research_layout_on_vllm(tmp_path):
    """yuhuili/EAGLE-LLaMA3-Instruct-8B's layout in miniature: no EAGLE-3 finding, no convert fix; the one real problem
    (vLLM builds fc without a bias, so the trained fc.bias is ignored) is the only error."""
    d = e1.write(tmp_path / "eagle1")
    out = json.loads(run_cli("inspect", d, "--json").stdout)
    assert out["family"]["name"] == "eagle" and out["geometry"]["fc_bias"] and not out["geometry"]["layer0_input_layernorm"]
    r = run_cli("check", d, "--engine", "vllm==0.32.0", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["class"] == "EagleLlamaForCausalLM"
    errors = [f for f in out["findings"] if f["severity"] == "error"]
    assert [f["code"] for f in errors] == ["L013"] and "fc.bias" in errors[0]["message"]
    assert "convert" not in (errors[0]["fix"] or "")
    assert not out["load"]["missing"] and not out["load"]["dropped"]
    clean = e1.write(tmp_path / "no-bias", ts=e1.tensors(bias=False))
    assert run_cli("check", clean, "--engine", "vllm==0.32.0").returncode == 0


def test_eagle1_releases_and_engines_not_modelled_are_refused(tmp_path):
    d = e1.write(tmp_path / "eagle1")
    r = run_cli("check", d, "--engine", "vllm==0.8.4")  # no vLLM release before 0.8.5 is placed
    assert r.returncode == 2 and "0.8.5" in r.stderr
    r = run_cli("check", d, "--engine", "trtllm")
    assert r.returncode == 2 and "EAGLE-1/2" in r.stderr
    r = run_cli("convert", d, "--engine", "vllm==0.8.4", "-o", tmp_path / "out")  # convert reads EAGLE-1 (its own tests)
    assert r.returncode == 2 and "0.8.5" in r.stderr and not (tmp_path / "out").exists()


def test_a_launch_line_with_another_method_builds_another_class(dflash, tmp_path):
    """L014: the method builds the class; SGLang's EAGLE3 on a DFlash drafter, vLLM without a method on a path
    without 'dflash' (vLLM 0.32 then runs it as a plain draft model), EAGLE-1 launched as EAGLE3."""
    sg = f"python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 --speculative-draft-model-path {dflash}"
    rc, codes = _codes_launch(dflash, "sglang==0.5.23", sg)
    assert rc == 1 and any("launched with EAGLE3" in m for m in codes["L014"])
    ok = sg.replace("EAGLE3", "DFLASH")
    assert "L014" not in _codes_launch(dflash, "sglang==0.5.23", ok)[1]
    plain = dfx.write(tmp_path / "drafter")  # no method word in the path
    no_method = f"""vllm serve /m --speculative-config '{{"model": "{plain}", "num_speculative_tokens": 3}}'"""
    rc, codes = _codes_launch(plain, "vllm==0.32.0", no_method)
    assert rc == 1 and any("DRAFT_MODEL" in m and "infers it from the draft" in m for m in codes["L014"])
    named = tmp_path / "qwen3-dflash-b16"
    dfx.write(named)
    inferred = f"""vllm serve /m --speculative-config '{{"model": "{named}", "num_speculative_tokens": 3}}'"""
    assert "L014" not in _codes_launch(named, "vllm==0.32.0", inferred)[1]
    eagle1 = e1.write(tmp_path / "e1")
    as3 = f"""vllm serve /m --speculative-config '{{"method": "eagle3", "model": "{eagle1}", "num_speculative_tokens": 3}}'"""
    assert "L014" in _codes_launch(eagle1, "vllm==0.32.0", as3)[1]


def _codes_launch(path: Path, engine: str, launch: str) -> tuple[int, dict[str, list[str]]]:
    r = run_cli("check", path, "--engine", engine, "--launch", launch, "--json")
    out = json.loads(r.stdout)
    codes: dict[str, list[str]] = {}
    for f in out["findings"]:
        codes.setdefault(f["code"], []).append(f["message"])
    return r.returncode, codes


# --- DFlash2: DFlash plus grouped convolutions and a candidate selector (vLLM qwen3_dflash2.py, 0.28.0+) -------------
V1_LAUNCH = (
    "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve Qwen/Qwen3-8B --speculative-config "
    '\'{"method": "dflash", "model": "DRAFT", "num_speculative_tokens": 3}\''
)


@pytest.fixture
def dflash2(tmp_path) -> Path:
    return dfx.write(tmp_path / "df2", dfx.config2(), dfx.tensors2())


def test_dflash2_is_checked_as_itself_and_refused_before_its_first_release(dflash2):
    for version in ("0.28.0", "0.32.0"):
        rc, codes = _codes(dflash2, f"vllm=={version}")
        assert rc == 0 and set(codes) <= {"L009", "L011", "D007"}, (version, codes)
        assert "Model Runner V2" in codes["D007"][0]  # said as info: the selector runs only on V2
    rc, codes = _codes(dflash2, "vllm==0.27.0")
    assert rc == 1 and any("first release with one is 0.28.0" in m for m in codes["L005"])


def test_dflash2_on_model_runner_v1_degrades_on_028_and_is_refused_from_029(dflash2):
    """club-3090 #1064 / vllm #52816: the candidate selector exists only in the V2 speculator."""
    launch = V1_LAUNCH.replace("DRAFT", str(dflash2))
    rc, codes = _codes_launch(dflash2, "vllm==0.28.0", launch)
    assert rc == 1 and any("runs as base DFlash" in m for m in codes["D007"])
    for version, says in (("0.29.0", "dflash2 drafts"), ("0.32.0", "DFlash candidate-head drafts")):
        rc, codes = _codes_launch(dflash2, f"vllm=={version}", launch)
        assert rc == 1 and any(f"Model Runner V1 does not support: {says}" in m for m in codes["D007"]), (version, codes)


def test_dflash2_weights_under_a_dflash_architecture_fail_at_weight_load(tmp_path):
    p = dfx.write(tmp_path / "relabelled", dfx.config2(architectures=["DFlashDraftModel"]), dfx.tensors2())
    rc, codes = _codes(p, "vllm==0.32.0")
    assert rc == 1 and "D008" in codes and any("candidate_selector" in m for m in codes["L004"])


def test_dflash2_config_without_its_selector_fields_raises(tmp_path):
    cfg = dfx.config2()
    del cfg["dflash_config"]["selector_rank"]
    rc, codes = _codes(dfx.write(tmp_path / "no-rank", cfg, dfx.tensors2()), "vllm==0.32.0")
    assert rc == 1 and any("KeyError: 'selector_rank'" in m for m in codes["L006"])


def test_padded_target_vocabulary_builds_the_vocab_map_and_shares_the_head(tmp_path):
    """vllm #46435: a drafter without its own head, trained on fewer rows than the (padded) target's."""
    v = dfx.V - 64
    p = dfx.write(tmp_path / "padded", dfx.config(vocab_size=v, dflash_config={"target_layer_ids": dfx.TARGET_IDS, "mask_token_id": v - 1}))
    r = run_cli("check", p, "--engine", "vllm==0.32.0", "--target", TINY_TARGET, "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0, out["findings"]
    assert [f["severity"] for f in out["findings"] if f["code"] == "D009"] == ["info"]
    params = {q["name"]: q["status"] for q in out["parameters"]}
    assert params["lm_head.weight"] == "shared-from-target" and "draft_id_to_target_id" in params
    r = run_cli("check", p, "--engine", "vllm==0.32.0", "--json")  # without the target: nothing to compare
    assert "D009" not in {f["code"] for f in json.loads(r.stdout)["findings"]}


def test_dspark_classes_not_modelled_are_refused_not_guessed(tmp_path):
    """Gemma4DSparkModel is a DSpark vLLM builds with another class (gemma4_dspark.py): refused, nothing checked."""
    d = dfx.write(tmp_path / "gemma4-dspark", dfx.config_dspark(architectures=["Gemma4DSparkModel"]), dfx.tensors_dspark())
    r = run_cli("check", d, "--engine", "vllm==0.32.0")
    assert r.returncode == 2 and "gemma4_dspark.py" in r.stderr and "nothing was checked" in r.stderr, r.stderr


def test_dspark_drafter_on_vllm(tmp_path):
    """DeepSeek's layout: checked as DSpark from 0.25.0 (0.25–0.29 with their own loader rows), none before 0.25.0."""
    d = dfx.write(tmp_path / "dspark", dfx.config_dspark(), dfx.tensors_dspark())
    rc, codes = _codes(d, "vllm==0.32.0")
    assert rc == 0 and set(codes) <= {"L011", "D007"} and "D007" in codes, codes
    rc, codes = _codes_launch(d, "vllm==0.32.0", V1_LAUNCH.replace("DRAFT", str(d)).replace('"dflash"', '"dspark"'))
    assert rc == 1 and any("dspark speculative decoding" in m for m in codes["D007"])
    rc, codes = _codes(d, "vllm==0.24.0")
    assert rc == 1 and any("first release with one is 0.25.0" in m for m in codes["L005"])
    rc, codes = _codes(d, "vllm==0.29.0")
    assert rc == 0 and set(codes) <= {"L011", "D007"}, codes
    # a pruned draft vocabulary needs its own head and d2t (load_weights raises otherwise)
    p = dfx.write(
        tmp_path / "pruned",
        dfx.config_dspark(draft_vocab_size=256),
        dfx.tensors_dspark() | {"lm_head.weight": np.zeros((256, dfx.H), np.float32)},
    )
    r = run_cli("check", p, "--engine", "vllm==0.32.0", "--target", TINY_TARGET, "--json")
    assert r.returncode == 1 and "must include a d2t mapping" in r.stdout
