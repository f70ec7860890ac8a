"""TensorRT-LLM's launch line: `trtllm-serve MODEL --config FILE`, its speculative settings in the YAML file (the
trtllm LAUNCH row in src/specbridge/engines/trtllm/launch.py, read from the 1.3.0rc27 docs and the releases' llm_args; no
TensorRT-LLM installs here, nothing is run).

`launch --engine trtllm` prints the file (a shell here-document) and the line that names it, for EAGLE-3
(decoding_type Eagle, the 1.0-1.2 name and 1.3's alias of Eagle3), DFlash and DSpark; `check --launch` reads the file
the line names and checks it the way it checks vLLM's JSON and SGLang's flags (D005/D006 block vs max_draft_len, L014
decoding type vs family, A004 for EAGLE-3)."""

from __future__ import annotations

import json
import shlex

import dflash_fixtures as df
import pytest
import yaml
from conftest import STORY, TINY_TARGET, run_cli

from specbridge.engines.launch import LaunchError, parse_launch

BLOCK = df.config()["block_size"]
LAUNCH_CODES = {"D005", "D006", "D007", "L014", "A004", "C008"}


@pytest.fixture(scope="module")
def drafters(tmp_path_factory):
    root = tmp_path_factory.mktemp("trt_launch")
    return {
        "dflash": df.write(root / "dflash", df.config(), df.tensors()),
        "dspark": df.write(root / "dspark", df.config_dspark(), df.tensors_dspark()),
    }


def _launch(path, engine="trtllm==1.3.0", *extra):
    r = run_cli("launch", path, "--engine", engine, "--target", TINY_TARGET, "--json", *extra)
    return r.returncode, json.loads(r.stdout)


def _check_codes(path, line: str, engine="trtllm==1.3.0") -> dict[str, list[tuple[str, str]]]:
    r = run_cli("check", path, "--engine", engine, "--target", TINY_TARGET, "--launch", line, "--json")
    assert r.returncode in (0, 1), r.stderr
    out: dict[str, list[tuple[str, str]]] = {}
    for f in json.loads(r.stdout)["findings"]:
        out.setdefault(f["code"], []).append((f["severity"], f["message"]))
    return out


def _write(tmp_path, section: dict, name="spec.yaml") -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump({"speculative_config": section}))
    return str(p)


@pytest.mark.parametrize(
    "family,engine,decoding,steps",
    [
        ("eagle3", "trtllm==1.2.0rc2", "Eagle", 3),  # EAGLE-3: default 3 steps
        ("eagle3", "trtllm==1.3.0", "Eagle", 3),
        ("dflash", "trtllm==1.3.0", "DFlash", BLOCK - 1),  # the anchor + max_draft_len mask slots = the block
        ("dspark", "trtllm==1.3.0", "DSpark", BLOCK),  # shift_label: block_size == max_draft_len
    ],
)
def test_launch_writes_the_yaml_and_the_line_check_reads_back(tmp_path, drafters, family, engine, decoding, steps):
    path = STORY if family == "eagle3" else drafters[family]
    rc, out = _launch(path, engine)
    if family == "eagle3" and engine.startswith("trtllm==1.2"):
        # the 1.0-1.2 loader renames nothing: the story drafter's layers.0.* never load there (L002), so no line
        assert rc == 1 and out["command"] is None and out["files"] is None
        return
    assert rc == 0, out
    [(name, text)] = out["files"].items()
    argv = shlex.split(out["command"])
    assert argv[:2] == ["trtllm-serve", str(TINY_TARGET)] and argv[2:] == ["--config", name]
    spec = yaml.safe_load(text)["speculative_config"]
    assert spec == {"decoding_type": decoding, "max_draft_len": steps, "speculative_model_dir": str(path)}
    # the text form: the file as a here-document, then the line
    r = run_cli("launch", path, "--engine", engine, "--target", TINY_TARGET)
    assert r.returncode == 0 and r.stdout.startswith(f"cat > {name} <<'EOF'\n{text}EOF\n") and r.stdout.rstrip().endswith(out["command"])
    # check --launch reads the written file and finds nothing in the line
    written = tmp_path / name
    written.write_text(text)
    line = shlex.join(["trtllm-serve", str(TINY_TARGET), "--config", str(written)])
    assert not LAUNCH_CODES & set(_check_codes(path, line, engine)), _check_codes(path, line, engine)


def test_parse_reads_the_file_its_alias_flag_and_the_eagle_alias(tmp_path):
    f = _write(tmp_path, {"decoding_type": "Eagle", "max_draft_len": 5, "speculative_model": "/d"})
    for flag in ("--config", "--extra_llm_api_options"):
        L = parse_launch(f"trtllm-serve /t {flag} {f} --tp_size 2")
        assert (L.engine, L.target, L.algorithm, L.steps, L.draft, L.tp) == ("trtllm", "/t", "EAGLE3", 5, "/d", 2)
    with pytest.raises(LaunchError, match="cannot read the speculative config file"):
        parse_launch(f"trtllm-serve /t --config {tmp_path / 'absent.yaml'}")
    bad = _write(tmp_path, {"decoding_type": "DFlash", "max_draft_len": "four"}, "bad.yaml")
    with pytest.raises(LaunchError, match="max_draft_len must be an integer"):
        parse_launch(f"trtllm-serve /t --config {bad}")
    # a config file without speculative decoding starts no drafter
    (tmp_path / "plain.yaml").write_text("kv_cache_config:\n  free_gpu_memory_fraction: 0.8\n")
    assert parse_launch(f"trtllm-serve /t --config {tmp_path / 'plain.yaml'}").algorithm is None


def test_check_reads_block_and_decoding_type_from_the_file(tmp_path, drafters):
    dflash, dspark = drafters["dflash"], drafters["dspark"]

    def line(section, name):
        return shlex.join(["trtllm-serve", str(TINY_TARGET), "--config", _write(tmp_path, section, name)])

    # DFlash: max_draft_len + 1 above the trained block is refused at start-up (D006); below it drafts fewer (D005)
    codes = _check_codes(dflash, line({"decoding_type": "DFlash", "max_draft_len": BLOCK, "speculative_model": str(dflash)}, "a.yaml"))
    assert [s for s, _ in codes["D006"]] == ["error"] and "block_size" in codes["D006"][0][1]
    codes = _check_codes(dflash, line({"decoding_type": "DFlash", "max_draft_len": 2, "speculative_model": str(dflash)}, "b.yaml"))
    assert [s for s, _ in codes["D005"]] == ["warning"] and "D006" not in codes
    # the wrong decoding type builds another class (L014), for DFlash and DSpark alike
    codes = _check_codes(dflash, line({"decoding_type": "Eagle3", "max_draft_len": 3, "speculative_model": str(dflash)}, "c.yaml"))
    assert codes["L014"][0][0] == "error"
    codes = _check_codes(dspark, line({"decoding_type": "DFlash", "max_draft_len": BLOCK, "speculative_model": str(dspark)}, "d.yaml"))
    assert codes["L014"][0][0] == "error"
    # DSpark: a block other than max_draft_len is D005, the fix names max_draft_len
    r = run_cli(
        "check", dspark, "-e", "trtllm==1.3.0", "-t", TINY_TARGET, "--json", "--launch",
        line({"decoding_type": "DSpark", "max_draft_len": BLOCK - 1, "speculative_model_dir": str(dspark)}, "e.yaml"),
    )  # fmt: skip
    [d005] = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "D005"]
    assert f"speculative_config.max_draft_len: {BLOCK}" in d005["fix"]
    # EAGLE-3 without max_draft_len: the decoding config refuses it (C008's requires_steps)
    codes = _check_codes(STORY, line({"decoding_type": "Eagle", "speculative_model_dir": str(STORY)}, "f.yaml"))
    assert any("max_draft_len" in m for s, m in codes.get("C008", []) if s == "error"), codes


def test_a_tree_is_refused_and_a_missing_file_is_exit_2(tmp_path, drafters):
    r = run_cli("launch", STORY, "-e", "trtllm==1.3.0", "-t", TINY_TARGET, "--topk", "2")
    assert r.returncode == 2 and "drafts a chain" in r.stderr
    r = run_cli("check", drafters["dflash"], "-e", "trtllm==1.3.0", "--launch", f"trtllm-serve {TINY_TARGET} --config {tmp_path}/none.yaml")
    assert r.returncode == 2 and "cannot read the speculative config file" in r.stderr


def test_mtp_file_is_written_but_no_line_without_trtllm_mtp_rows(tmp_path):
    """The MTP file carries decoding_type MTP and no drafter; launch prints no line for a target's MTP head on
    TensorRT-LLM, because no TensorRT-LLM MTP class is modelled for check to check it against."""
    import mtp_fixtures as mtp

    from specbridge.engines.launch import spec_file_text

    name, text = spec_file_text("trtllm", None, 1)
    assert yaml.safe_load(text) == {"speculative_config": {"decoding_type": "MTP", "max_draft_len": 1}}
    assert parse_launch(f"trtllm-serve /t --config {name}", {name: text}).algorithm == "MTP"
    target = mtp.write_target(tmp_path / "ds", mtp.deepseek_config())
    r = run_cli("launch", target, "-e", "trtllm==1.3.0")
    assert r.returncode == 2 and "does not model MTP" in r.stderr
