"""Fuzz targets for everything that reads untrusted files: the safetensors reader, sharded indexes,
config.json, and the commands built on them (describe, check on every engine, convert planning).

One function, `exercise(dir)`, is the contract: any input must end in a result or a CheckpointError
(the CLI turns that into exit 2). Anything else is a crash. Used by tests/test_fuzz.py (bounded, in
CI) and scripts/fuzz.py (long runs).
"""

from __future__ import annotations

import copy
import json
import os
import random
import struct
from pathlib import Path

from .checkpoint.errors import CheckpointError

SEED_CONFIG_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "draft_vocab_size",
    "target_hidden_size",
    "tie_word_embeddings",
    "architectures",
    "eagle_config",
    "eagle_aux_hidden_state_layer_ids",
    "transformer_layer_config",
    "speculators_config",
    "norm_before_residual",
    "max_position_embeddings",
    "rope_theta",
    "rope_parameters",
    "num_aux_hidden_states",
    "fc_norm",
    "bias",
    "model_type",
)
# Text a human report must print as written: rich markup ([/] closes nothing: MarkupError), backslashes
# that escape our own tags, emoji codes, matplotlib mathtext.
HOSTILE_TEXT = ("[/]", "[bold]x[/bold]", "a[/red]b", "[link=x]y", "\\", "x\\[/]", ":x:", "$\\frac{$", "[@click=quit]", "[#ff0000]")
WILD_VALUES = (
    None,
    0,
    -1,
    1,
    2,
    3,
    2**31,
    2**63,
    10**30,
    -(10**30),
    1.5,
    float("1e308"),
    "",
    "x" * 1000,
    "64",
    [],
    [0, 1, 2],
    [10**12],
    {},
    {"eagle_aux_hidden_state_layer_ids": [1, -5, 10**9]},
    True,
    False,
    "ü\u202e\ud7ff",
    [[[[]]]],
    *HOSTILE_TEXT,
    ["LlamaForCausalLMEagle3[/]"],
    ["[/]"],
    {"[/]": "[/]"},
)


def exercise(d: Path, engines: tuple[str, ...] = ("all",)) -> str:
    """Run the readers and checkers on `d`. Returns 'ok' or 'refused: …'; raises on a crash."""
    from .checkpoint.reader import open_checkpoint
    from .convert.plan import plan_conversion
    from .rules.check import check
    from .view import read_view

    try:
        view = read_view(open_checkpoint(d))
        for e in engines:
            for res in check(view, e, str(d)):
                res.to_json()
                json.dumps(res.to_json())
        for layout in ("sglang", "speculators"):
            try:
                plan_conversion(view, layout)
            except CheckpointError:
                pass
        return "ok"
    except CheckpointError as e:
        return f"refused: {e.message}"


# The human reports as users run them: (argv, what it exercises). In-process through the CLI's own entry
# point, so an exception anywhere in reading, checking, converting or rendering is a crash, not a
# swallowed exit 3.
CLI_RUNS = (
    ("inspect", "{d}"),
    ("check", "{d}"),  # every engine era: the summary table and each failing era's findings
    ("check", "{d}", "--engine", "sglang==0.5.11", "-v"),  # one era: tensor and parameter tables
    ("check", "{d}", "--engine", "vllm", "-v"),
    ("convert", "{d}", "--to", "sglang", "-o", "{out}"),
)


def render_cli(d: Path, work: Path) -> list[tuple[str, int]]:
    """Run every human report of the CLI on `d` and render eval's summary from its strings. Returns
    (command, exit code) pairs; exit codes are 0, 1 or 2 by contract, and an exception (SPECBRIDGE_DEBUG
    makes the entry point re-raise what users would see as exit 3) propagates to the caller as a crash."""
    import contextlib
    import io
    import shutil
    import sys

    from .cli import entry

    codes = []
    out = work / "convert-out"
    saved = sys.argv, os.environ.get("SPECBRIDGE_DEBUG")
    os.environ["SPECBRIDGE_DEBUG"] = "1"
    try:
        for run in CLI_RUNS:
            argv = [a.format(d=d, out=out) for a in run]
            sys.argv = ["specbridge", *argv]
            sink = io.StringIO()
            try:
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                    entry.main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            finally:
                shutil.rmtree(out, ignore_errors=True)
            if code not in (0, 1, 2):
                raise AssertionError(f"specbridge {' '.join(argv)}: exit {code}\n{sink.getvalue()[-2000:]}")
            codes.append((run[0], code))
        render_eval_summary(d)
    finally:
        sys.argv = saved[0]
        if saved[1] is None:
            os.environ.pop("SPECBRIDGE_DEBUG", None)
        else:
            os.environ["SPECBRIDGE_DEBUG"] = saved[1]
    return codes


# Every path option of every command, each given values that cannot work: (command argv with {bad} where
# the value goes, what the option takes). Everything else in the argv is valid, so the refusal is the
# path's. {d}: a drafter, {t}: a target config directory, {p}: a prompts file, {out}: a directory not made
# yet, {w}: a writable directory.
PATH_OPTIONS = (
    (("inspect", "{bad}"), "checkpoint"),
    (("check", "{bad}"), "checkpoint"),
    (("check", "{d}", "--target", "{bad}"), "target"),
    (("check", "{d}", "--parent", "{bad}"), "checkpoint"),
    (("convert", "{bad}", "--to", "sglang", "-o", "{out}"), "checkpoint"),
    (("convert", "{d}", "--to", "sglang", "-o", "{bad}"), "output dir"),
    (("convert", "{d}", "--to", "sglang", "-o", "{out}", "--target", "{bad}"), "target"),
    (("restore", "{bad}"), "checkpoint"),
    (("launch", "{bad}", "-e", "sglang", "-t", "{t}"), "checkpoint"),
    (("launch", "{d}", "-e", "sglang", "-t", "{bad}"), "target"),
    (("eval", "{bad}", "--target", "{t}"), "checkpoint"),
    (("eval", "{d}", "--target", "{bad}"), "target"),
    (("eval", "{d}", "--target", "{t}", "--prompts", "{bad}"), "input file"),
    (("eval", "{d}", "--target", "{t}", "--plot", "{bad}", "--json"), "output file"),
    (("bench", "--url", "http://127.0.0.1:9", "--prompts", "{bad}"), "input file"),
    (("bench", "--url", "http://127.0.0.1:9", "--prompts", "{p}", "--plot", "{bad}"), "output file"),
    (("serve", "{bad}", "-e", "vllm", "-t", "{t}", "--log", "{w}/serve.log"), "checkpoint"),
    (("serve", "{d}", "-e", "vllm", "-t", "{bad}", "--log", "{w}/serve.log"), "target"),
    (("serve", "{d}", "-e", "vllm", "-t", "{t}", "--log", "{bad}"), "output file"),
    (("serve", "{d}", "-e", "vllm", "-t", "{t}", "--log", "{w}/serve.log", "--python", "{bad}"), "program"),
    (("sweep", "{bad}", "-e", "vllm", "-t", "{t}", "--log-dir", "{out}"), "checkpoint"),
    (("sweep", "{d}", "-e", "vllm", "-t", "{bad}", "--log-dir", "{out}"), "target"),
    (("sweep", "{d}", "-e", "vllm", "-t", "{t}", "--prompts", "{bad}", "--log-dir", "{out}"), "input file"),
    (("sweep", "{d}", "-e", "vllm", "-t", "{t}", "--log-dir", "{bad}"), "output dir"),
    (("sweep", "{d}", "-e", "vllm", "-t", "{t}", "--log-dir", "{out}", "--plot", "{bad}"), "output file"),
    (("sweep", "{d}", "-e", "vllm", "-t", "{t}", "--log-dir", "{out}", "--python", "{bad}"), "program"),
    (("train", "--out", "{bad}"), "output dir"),
    (("train", "--out", "{out}", "--data-dir", "{bad}"), "output dir"),
    (("train", "--out", "{out}", "--train-prompts", "{bad}"), "input file"),
    (("train", "--out", "{out}", "--val-prompts", "{bad}"), "input file"),
    (("train", "--out", "{out}", "--init-from", "{bad}"), "checkpoint"),
    (("train", "--out", "{out}", "--target", "{bad}"), "target"),
)
# launch, serve and sweep refuse a target they cannot hand the engine with exit 1 (docs/ci.md: a launch refused)
LAUNCH_REFUSED = {("launch", "target"), ("serve", "target"), ("sweep", "target")}


def bad_paths(work: Path) -> dict[str, dict[str, str]]:
    """For each kind of path option, the values that cannot work, by name: a missing file or directory,
    one under a missing directory, a directory where a file goes, a file where a directory goes, a path
    under a regular file, and a place nobody can write (/proc takes no new files, not even from root)."""
    plain = work / "plain.txt"
    plain.write_text("not a checkpoint\n")
    empty = work / "empty-dir"
    empty.mkdir(exist_ok=True)
    missing, under_file = work / "missing", plain / "x"
    return {
        "checkpoint": {
            "missing": str(missing),
            "./missing": "./specbridge-missing-dir/x",
            "file": str(plain),
            "under a file": str(under_file),
            "empty dir": str(empty),
        },
        "target": {"missing": str(missing), "file": str(plain), "under a file": str(under_file), "empty dir": str(empty)},
        "input file": {"missing": str(missing / "p.jsonl"), "a directory": str(empty), "under a file": str(under_file)},
        "output file": {
            "missing dir": str(missing / "p.png"),
            "a directory": str(empty),
            "under a file": str(under_file),
            "unwritable": "/proc/specbridge-p.png",
        },
        "output dir": {"a file": str(plain), "under a file": str(under_file), "unwritable": "/proc/specbridge-out"},
        "program": {
            "missing": str(missing / "python"),
            "a directory": str(empty),
            "not executable": str(plain),
            "not on PATH": "specbridge-no-such-python",
        },
    }


def path_refusals(d: Path, target: Path, prompts: Path, work: Path) -> list[tuple[str, str, str, int, str, float]]:
    """Run every PATH_OPTIONS row with every bad value of its kind, in-process through the CLI's entry point
    (SPECBRIDGE_DEBUG: what users would see as exit 3 raises here). Returns (argv, kind, the bad value,
    exit code, stderr, seconds); the caller checks each is a refusal at the door."""
    import contextlib
    import io
    import sys
    import time

    from .cli import entry

    out = work / "out"
    values = bad_paths(work)
    runs = []
    saved = sys.argv, os.environ.get("SPECBRIDGE_DEBUG")
    os.environ["SPECBRIDGE_DEBUG"] = "1"
    try:
        for template, kind in PATH_OPTIONS:
            for name, bad in values[kind].items():
                argv = [a.format(d=d, t=target, p=prompts, out=out, w=work, bad=bad) for a in template]
                sys.argv = ["specbridge", *argv]
                err = io.StringIO()
                t0 = time.perf_counter()
                try:
                    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                        entry.main()
                    code = 0
                except SystemExit as e:
                    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
                runs.append((" ".join(argv), f"{kind}: {name}", bad, code, err.getvalue(), time.perf_counter() - t0))
    finally:
        sys.argv = saved[0]
        if saved[1] is None:
            os.environ.pop("SPECBRIDGE_DEBUG", None)
        else:
            os.environ["SPECBRIDGE_DEBUG"] = saved[1]
    return runs


def render_eval_summary(d: Path) -> None:
    """eval's human summary (without running a model, which needs torch) over this input's own strings:
    its path, architecture, tensor names and the findings that quote config values, as eval's notes."""
    import io

    from rich.console import Console

    from .checkpoint.reader import open_checkpoint
    from .cli.eval_common import print_summary
    from .rules.check import check
    from .view import read_view

    try:
        ck = open_checkpoint(d)
        res = check(read_view(ck), "sglang==0.5.11", str(d))[0]
    except CheckpointError:
        return
    notes = [str((ck.config or {}).get("architectures")), *list(ck.tensors)[:8], *(f.message for f in res.findings)]
    out = {
        "mean_accept_length": 1.0,
        "num_prompts": 2,
        "drafts": 4,
        "draft_acceptance_rate": 0.0,
        "per_position": [0.0, 0.0, 0.0],
        "per_prompt": [1.0, 1.0],
    }
    engine = {"name": res.report.engine, "version": res.report.version}
    print_summary(Console(file=io.StringIO(), highlight=False, emoji=False), out, d, res.drafter.architecture, engine, 3, 1, notes)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """Header-aware byte mutations of a safetensors file."""
    n = struct.unpack("<Q", data[:8])[0] if len(data) >= 8 else 0
    header = data[8 : 8 + n]
    body = data[8 + n :]
    op = rng.randrange(9)
    if op == 0:  # truncate anywhere
        return data[: rng.randrange(len(data) + 1)]
    if op == 1:  # header length field
        return struct.pack("<Q", rng.choice([0, 1, 7, max(0, n - 1), n + 1, 2**32, 2**63, rng.randrange(2**64)])) + data[8:]
    if op == 2:  # flip bytes in the header
        h = bytearray(header)
        for _ in range(rng.randrange(1, 8)):
            if h:
                h[rng.randrange(len(h))] = rng.randrange(256)
        return data[:8] + bytes(h) + body
    try:
        obj = json.loads(header)
    except Exception:
        return data
    names = [k for k in obj if k != "__metadata__"]
    if not names:
        return data
    k = rng.choice(names)
    if op == 3:
        obj[k]["dtype"] = rng.choice(["Q7", "F8", "", None, 3, "BF16", "I64", "BOOL", "F4"])
    elif op == 4:
        obj[k]["shape"] = rng.choice([[], [-1], [10**12, 10**12], [0], ["4"], None, [2**63], list(range(40))])
    elif op == 5:
        a = rng.randrange(len(body) + 10)
        obj[k]["data_offsets"] = rng.choice([[a, a], [a, a - 1], [0, len(body)], [0, 10**15], [-1, 4], [a], "0-4"])
    elif op == 6:  # rename to odd names (unicode, prefixes, dotted paths)
        obj[
            rng.choice(
                [
                    "model." + k,
                    "midlayer." + k,
                    "\u00e9" * 5,
                    "../" + k,
                    "",
                    "a" * 10000,
                    "layers.9999.x",
                    k + rng.choice(HOSTILE_TEXT),
                    rng.choice(HOSTILE_TEXT) + k,
                ]
            )
        ] = obj.pop(k)
    elif op == 7:
        obj["__metadata__"] = rng.choice([{"a": 1}, [], "x", {"format": "pt"}, None])
    else:
        obj[k + "_dup"] = dict(obj[k])
    raw = json.dumps(obj).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + body


def mutate_config(cfg: dict, rng: random.Random) -> dict:
    cfg = json.loads(json.dumps(cfg))
    for _ in range(rng.randrange(1, 4)):
        key = rng.choice(SEED_CONFIG_KEYS)
        where = cfg
        if isinstance(cfg.get("transformer_layer_config"), dict) and rng.random() < 0.5:
            where = cfg["transformer_layer_config"]
        if rng.random() < 0.15:
            where.pop(key, None)
        else:
            where[key] = copy.deepcopy(rng.choice(WILD_VALUES))  # never share one mutable value twice
    return cfg


def hostile_index(d: Path, rng: random.Random, outside: Path) -> None:
    """Replace the weights with a sharded index pointing somewhere it must not."""
    weights = d / "model.safetensors"
    names = []
    if weights.exists():
        try:
            n = struct.unpack("<Q", weights.read_bytes()[:8])[0]
            names = [k for k in json.loads(weights.read_bytes()[8 : 8 + n]) if k != "__metadata__"]
        except Exception:
            names = ["fc.weight"]
        os.rename(weights, d / "shard.safetensors")
    choice = rng.randrange(6)
    target = {
        0: "../" + outside.name,
        1: str(outside),
        2: "shard.safetensors",
        3: "missing.safetensors",
        4: "link.safetensors",
        5: "shard.safetensors\x00x",
    }[choice]
    if choice == 4:
        (d / "link.safetensors").symlink_to(outside)
    wmap = {n: target for n in (names or ["fc.weight"])}
    if rng.random() < 0.3:
        wmap["ghost.weight"] = "shard.safetensors"
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wmap}))


# --- every numeric option given 0 and a negative value ----------------------------------------------------
# A valid command line of each command with numeric options: the option under test is appended, everything
# else is valid, so a refusal is the number's. {d}: a drafter, {t}: a target config directory, {out}: a
# directory not made yet, {w}: a writable directory. A command with a numeric option and no row here fails
# the test (numeric_cases).
NUMBER_BASES = {
    "launch": ("launch", "{d}", "-e", "vllm", "-t", "{t}"),
    "eval": ("eval", "{d}", "-t", "{t}"),
    "bench": ("bench", "--url", "http://127.0.0.1:9"),
    "serve": ("serve", "{d}", "-e", "vllm", "-t", "{t}", "--log", "{w}/serve.log"),
    "sweep": ("sweep", "{d}", "-e", "vllm", "-t", "{t}", "--log-dir", "{out}"),
    "train": ("train", "--out", "{out}"),
    "convert": ("convert", "{d}", "--to", "sglang", "-o", "{out}"),
    "verify": ("verify", "{d}", "-e", "vllm", "--python", "{w}/python"),
}
NUMBER_VALUES = ("0", "-1")


class WorkStarted(Exception):
    """A command's body was reached: the command line was accepted, and the work would start here."""


def numeric_options() -> list[tuple[str, str]]:
    """(command, flag) for every option of every command whose value is a number or a list of numbers: an int
    or float annotation, or a flag with an optspec.NUMBERS row (--shard-size, --aux-layers, sweep's lists),
    read from the click commands typer builds. Sorted: the order and the count depend on the tables only."""
    import typer

    from .cli.main import app
    from .cli.optspec import NUMBERS

    found = set()
    for name, cmd in typer.main.get_command(app).commands.items():
        for p in cmd.params:
            flag = next((o for o in p.opts if o.startswith("--")), None)
            hint = getattr(getattr(p, "type_descriptor", None), "annotation", None)
            if flag and (hint in (int, float) or flag in NUMBERS):
                found.add((name, flag))
    return sorted(found)


def numeric_cases() -> list[tuple[str, str, str, bool]]:
    """(command, flag, value, legal) for each numeric option and each of NUMBER_VALUES: `legal` where the
    option's NUMBERS row documents what the value means (0 for --warmup: no warm-up request), else the value
    must be refused. An option without a row is a case that must be refused too (and fails: it has no check)."""
    from .cli.optspec import NUMBERS

    cases = []
    for command, flag in numeric_options():
        row = NUMBERS.get(flag)
        for value in NUMBER_VALUES:
            legal = row is not None and float(value) >= row.least and not (row.above and float(value) == row.least)
            cases.append((command, flag, value, legal))
    return cases


def number_refusals(d: Path, target: Path, work: Path) -> list[tuple[str, bool, int | None, str, bool]]:
    """Run every numeric_cases() case in-process through the CLI's entry point, on the click commands typer
    builds, built once with every command's body replaced by one that raises WorkStarted (so an accepted value
    does no work, and a refusal is seen to come before any). Returns (argv, legal, exit code or None when the
    body was reached, stderr, stdout empty)."""
    import contextlib
    import io
    import sys

    import typer

    from .cli import entry
    from .cli import main as cli_main

    cases = numeric_cases()
    group = typer.main.get_command(cli_main.app)
    for cmd in group.commands.values():
        cmd.callback = _work_started
    saved = sys.argv, os.environ.get("SPECBRIDGE_DEBUG"), cli_main.click_command
    os.environ["SPECBRIDGE_DEBUG"] = "1"  # what users would see as exit 3 raises here
    cli_main.click_command = lambda: group  # what entry.run_typer invokes
    out, runs = work / "out", []
    try:
        for command, flag, value, legal in cases:
            template = NUMBER_BASES.get(command, (command,))
            argv = [a.format(d=d, t=target, out=out, w=work) for a in template] + [flag, value]
            sys.argv = ["specbridge", *argv]
            err, std = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stdout(std), contextlib.redirect_stderr(err):
                    entry.main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            except WorkStarted:
                code = None
            runs.append((" ".join(argv), legal, code, err.getvalue(), std.getvalue() == ""))
    finally:
        sys.argv, cli_main.click_command = saved[0], saved[2]
        if saved[1] is None:
            os.environ.pop("SPECBRIDGE_DEBUG", None)
        else:
            os.environ["SPECBRIDGE_DEBUG"] = saved[1]
    return runs


def _work_started(**params):
    raise WorkStarted(", ".join(params))


# Ctrl-C anywhere: every core command, under --json, interrupted by a real SIGINT at points spread over its run
# up to its first output ({d}: a drafter, {t}: a target config directory, {out}: a directory not made yet,
# {inplace}: a drafter converted in place with its backup, made fresh for each case). eval, train, bench, sweep
# and serve get the same signal from outside in tests/test_interrupt.py (a model, a server or an engine).
CTRL_C_RUNS = (
    ("inspect", "{d}", "--json"),
    ("check", "{d}", "--json"),
    ("check", "{d}", "--engine", "vllm==0.32.0", "--target", "{t}", "--json"),
    ("convert", "{d}", "--to", "sglang", "-o", "{out}", "--json"),
    ("restore", "{inplace}", "--json"),
    ("launch", "{d}", "-e", "sglang", "-t", "{t}", "--json"),
    ("engines", "--json"),
)
CTRL_C_CASES_PER_RUN = 4


def interrupted_problems(code: int, stdout: str, stderr: str, as_json: bool) -> list[str]:
    """What an interrupted command's outcome breaks of the contract (docs/ci.md): exit 130, exactly one line on
    stderr (`specbridge: error: interrupted…`), and under --json exactly the error object on stdout carrying the
    same message. Empty when it keeps it."""
    problems = []
    if code != 130:
        problems.append(f"exit {code}, not 130")
    lines = stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("specbridge: error: interrupted"):
        problems.append(f"stderr is not the one interrupted line: {stderr[-600:]!r}")
    if as_json:
        try:
            doc = json.loads(stdout)
        except ValueError:
            return [*problems, f"stdout is not one JSON object: {stdout[-600:]!r}"]
        error = doc.get("error") if isinstance(doc, dict) else None
        if doc.get("schema") != "specbridge.error/2" or doc.get("ok") is not False or not isinstance(error, dict):
            problems.append(f"stdout is not the error object: {stdout[-600:]!r}")
        elif error.get("exit_code") != 130 or lines[:1] != [f"specbridge: error: {error.get('message')}"]:
            problems.append(f"the error object does not say the stderr line: {error!r}")
    return problems


def _in_process(argv: list[str], on_call=None, out=None, err=None) -> tuple[int, str, str]:
    """One `specbridge ARGV` through the entry point in this process, stdout and stderr captured (into `out` and
    `err` when given); `on_call` is the profile hook while it runs (sys.setprofile: every Python call, this thread)."""
    import contextlib
    import io
    import sys

    from .cli import entry

    out, err = out or io.StringIO(), err or io.StringIO()
    saved = sys.argv
    sys.argv = ["specbridge", *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            sys.setprofile(on_call)
            try:
                entry.main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            finally:
                sys.setprofile(None)
    finally:
        sys.argv = saved
    return code, out.getvalue(), err.getvalue()


class _CallCounter:
    """A profile hook counting calls into specbridge's own code; it sends SIGINT to this process at call number
    `interrupt_at`, and remembers how many calls came before the command's first output."""

    def __init__(self, interrupt_at: int | None = None):
        from pathlib import Path

        self.root = str(Path(__file__).resolve().parent)
        self.calls, self.interrupt_at, self.fired = 0, interrupt_at, False

    def __call__(self, frame, event, arg):
        import signal

        where = frame.f_code.co_filename
        if event != "call" or not where.startswith(self.root) or where == __file__:  # not the fuzzer's own sinks
            return
        self.calls += 1  # call 1 is entry.main itself: the console script's call, before any handler can exist
        if self.calls == self.interrupt_at and not self.fired:
            self.fired = True
            signal.raise_signal(signal.SIGINT)  # a real SIGINT: Python's own handler raises KeyboardInterrupt here


def calls_before_output(argv: list[str]) -> int:
    """How many calls into specbridge's code one run of ARGV makes before its first write to stdout or stderr."""
    import io

    counter = _CallCounter()

    class FirstWrite(io.StringIO):
        at: int | None = None

        def write(self, s):
            if s and FirstWrite.at is None:
                FirstWrite.at = counter.calls
            return super().write(s)

    _in_process(argv, counter, FirstWrite(), FirstWrite())
    return FirstWrite.at if FirstWrite.at is not None else counter.calls


def ctrl_c_cases(d: Path, target: Path, work: Path, seed: int = 0, per_run: int = CTRL_C_CASES_PER_RUN) -> list[dict]:
    """Every CTRL_C_RUNS row interrupted by SIGINT at `per_run` calls spread over the run before its first output
    (the first, the last, and seeded ones between). Each case: argv, the call interrupted, exit code, stdout,
    stderr, whether the signal was sent, and what a convert left in `work` (it must be nothing half written).
    SPECBRIDGE_DEBUG is set: an internal error raises here instead of passing as exit 3."""
    import shutil
    import signal

    rng = random.Random(seed)
    saved_handler, saved_debug = signal.getsignal(signal.SIGINT), os.environ.get("SPECBRIDGE_DEBUG")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ["SPECBRIDGE_DEBUG"] = "1"
    cases = []
    try:
        for template in CTRL_C_RUNS:
            for n in range(per_run + 2):  # two unmeasured runs first: imports and caches warm, so counts repeat
                case_dir = work / f"ctrl-c-{len(cases)}-{n}"
                case_dir.mkdir(parents=True)
                inplace = _converted_in_place(d, case_dir) if "{inplace}" in template else None
                argv = [a.format(d=d, t=target, out=case_dir / "out", inplace=inplace) for a in template]
                if n < 2:
                    total = calls_before_output(argv) if n == 1 else _in_process(argv)[0]
                    shutil.rmtree(case_dir)
                    continue
                k = n - 2
                at = 2 if k == 0 else total if k == 1 else rng.randint(2, max(2, total))
                counter = _CallCounter(at)
                code, out, err = _in_process(argv, counter)
                left = sorted(p.name for p in case_dir.iterdir()) if inplace is None else None  # what a convert left
                case = {"argv": " ".join(argv), "at": at, "of": total, "code": code, "stdout": out, "stderr": err}
                cases.append({**case, "fired": counter.fired, "left": left, "out_opens": _opens(case_dir / "out")})
                shutil.rmtree(case_dir, ignore_errors=True)
    finally:
        signal.signal(signal.SIGINT, saved_handler)
        if saved_debug is None:
            os.environ.pop("SPECBRIDGE_DEBUG", None)
        else:
            os.environ["SPECBRIDGE_DEBUG"] = saved_debug
    return cases


def _opens(path: Path) -> bool | None:
    """Whether a convert's output directory opens as a whole checkpoint; None when there is none."""
    from .checkpoint.reader import open_checkpoint

    if not path.exists():
        return None
    try:
        open_checkpoint(path)
        return True
    except CheckpointError:
        return False


def _converted_in_place(d: Path, case_dir: Path) -> Path:
    """A copy of drafter `d` converted in place to the sglang layout with its backup: what restore undoes."""
    import contextlib
    import io
    import shutil

    from .cli.convert_cmd import convert_cmd

    inplace = case_dir / "inplace"
    shutil.copytree(d, inplace)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = convert_cmd(str(inplace), "sglang", None, True, None, None, "keep", False, True, None, False)
    if code != 0:
        raise AssertionError(f"converting a copy of {d} in place to restore it: exit {code}")
    return inplace
