"""The contract every `--json` output keeps, for CI gates: one object on stdout with `schema`,
`specbridge_version`, `ok` (exit code 0) and `error` (null, or `{"exit_code", "message"}` when the command
could not give its answer), strict JSON (no NaN); errors also as one line on stderr.

Schema names are `specbridge.<command>/<N>`; N changes only when a key changes meaning or goes away.
The exit codes and these keys are tables here; `scripts/gen_ci_doc.py` writes them into `docs/ci.md` and a
test keeps the page fresh and runs every command against them (tests/test_contract.py)."""

from __future__ import annotations

import math
import sys
from json.encoder import encode_basestring_ascii as _string

from .. import __version__

SCHEMA_VERSION = 2
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_CODES = {
    EXIT_OK: "OK: no failing finding (and, for `eval --fail-under`, the accept length reached the bar)",
    EXIT_FINDINGS: "a failing finding (severity `error`, or a code named in `--fail-on`; any warning under `--fail-on warning`), a launch refused, a load the engine "
    "refuses (`eval --engine`: `refused`), an eval below `--fail-under`, a bench or sweep run that failed, a conversion "
    "that failed while writing (no space left, an I/O error, verification; nothing is placed)",
    EXIT_USAGE: "unusable input or request: a path that is not a drafter (or of a drafter family the command does not read), "
    "an unknown or unreadable engine version, an unknown option, an option out of range, contradictory options, a convert "
    "destination that exists (without `--force`), is the source or cannot be written",
    EXIT_INTERNAL: "an internal error (a bug of ours; the fuzzer and the tests check that no input reaches it)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
# The commands with --json and their schema names; `error` is the object every failure prints.
JSON_COMMANDS = ("inspect", "check", "convert", "restore", "launch", "engines", "eval", "bench", "sweep", "verify")
SCHEMAS = (*JSON_COMMANDS, "error")
# Keys every --json object has, first.
COMMON_KEYS = {
    "schema": f"`specbridge.<command>/<N>`: {', '.join(f'`{s}`' for s in SCHEMAS)}. `N` (now {SCHEMA_VERSION}) changes "
    "only when a key changes meaning or goes away.",
    "specbridge_version": "the tool's version",
    "ok": "the run's verdict: `true` exactly when the exit code is 0",
    "error": "`null` when the command gave its answer (even a failing one: findings, a refusal, a low accept length); "
    '`{"exit_code", "message"}` when it could not: every exit 2, 3 and 130; exit 1 for a request refused before any '
    "answer (a launch line that cannot start, a conversion convert will not make) and a bench or sweep run that "
    "failed. The message is also the one line on stderr",
}


class CliError(Exception):
    """A request we refuse or cannot answer: one line for a person, an object for a machine."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.message = message
        self.code = code


def finite(obj):
    """NaN and ±inf are not JSON: they become null (a mean over nothing has no value)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def error_object(code: int, message: str) -> dict:
    return {"exit_code": code, "message": message}


def document(command: str, body: dict) -> dict:
    """The object for one command: the common keys first; a body without a boolean `ok` is our bug."""
    if command not in SCHEMAS or not isinstance(body.get("ok"), bool):
        raise ValueError(f"--json output of {command!r} breaks the contract (schema listed, boolean ok): {sorted(body)}")
    error = body.get("error")
    if error is not None and set(error) != {"exit_code", "message"}:
        raise ValueError(f"--json output of {command!r}: error must be null or an error_object, not {error!r}")
    head = {"schema": f"specbridge.{command}/{SCHEMA_VERSION}", "specbridge_version": __version__, "ok": body["ok"], "error": error}
    return {**head, **{k: v for k, v in body.items() if k not in head}}


_float_repr = float.__repr__
_int_repr = int.__repr__


def _float(o: float) -> str:
    if o != o or o in (float("inf"), float("-inf")):
        raise ValueError("Out of range float values are not JSON compliant: " + repr(o))
    return _float_repr(o)


def _key(k) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return _float(k)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return _int_repr(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


# exact classes only (a str or int subclass goes through `value`, as the standard library's isinstance tests take it)
_LEAVES = {
    str: _string,
    type(None): {None: "null"}.__getitem__,
    bool: {True: "true", False: "false"}.__getitem__,
    int: _int_repr,
}


def indented_json(obj) -> str:
    """json.dumps(obj, indent=2, allow_nan=False), byte for byte (tests/test_contract_json.py holds the two equal):
    the same type tests in the same order, the same key conversions and refusals, the standard library's own string
    escape (C), written by one recursive pass into a list. Python's json writes an indented document through its pure
    Python encoder, a generator per nesting level: twice as slow on an MTP target's check (5 MB, 80 ms)."""
    out: list[str] = []
    put = out.append
    leaf = _LEAVES.get  # the common leaves are written in the loops below, not by a recursive call each (120 k in 5 MB)

    def value(o, indent: str) -> None:
        if isinstance(o, str):
            put(_string(o))
        elif o is None:
            put("null")
        elif o is True:
            put("true")
        elif o is False:
            put("false")
        elif isinstance(o, int):
            put(_int_repr(o))
        elif isinstance(o, float):
            put(_float(o))
        elif isinstance(o, (list, tuple)):
            if not o:
                put("[]")
                return
            inner = indent + "  "
            sep = ",\n" + inner
            put("[\n" + inner)
            first = True
            for v in o:
                if first:
                    first = False
                else:
                    put(sep)
                w = leaf(v.__class__)
                if w:
                    put(w(v))
                else:
                    value(v, inner)
            put("\n" + indent + "]")
        elif isinstance(o, dict):
            if not o:
                put("{}")
                return
            inner = indent + "  "
            sep = ",\n" + inner
            put("{\n" + inner)
            first = True
            for k, v in o.items():
                k = _key(k)
                if first:
                    first = False
                else:
                    put(sep)
                put(_string(k))
                put(": ")
                w = leaf(v.__class__)
                if w:
                    put(w(v))
                else:
                    value(v, inner)
            put("\n" + indent + "}")
        else:
            raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")

    value(obj, "")
    return "".join(out)


def dumps(obj: dict) -> str:
    """The object as strict JSON. Written as it is when it holds no NaN or ±inf (the rule, and no copy of a
    document that can be megabytes: an MTP target's check); else `finite`'s copy, with them as null."""
    try:
        return indented_json(obj)
    except ValueError:  # a non-finite float (or what json refuses anyway: the copy says it as before)
        return indented_json(finite(obj))


# Whether this run has printed its --json document: an interrupt that comes after it (Ctrl-C while the command
# tidies up) still exits 130 with its line, but adds no second object to stdout (entry.main resets it per run).
ANSWERED = {"json": False}


def print_json(command: str, body: dict) -> None:
    print(dumps(document(command, body)))
    ANSWERED["json"] = True


def one_line(message: str) -> str:
    """A message as the one line the contract promises (a wrapped usage message joined up)."""
    return " ".join(message.split())


def report_error(err: CliError, as_json: bool) -> int:
    message = one_line(err.message)
    sys.stderr.write(f"specbridge: error: {message}\n")
    if as_json and not ANSWERED["json"]:
        print(dumps(document("error", {"ok": False, "error": error_object(err.code, message)})))
    return err.code


def fail(message: str, code: int = 2) -> int:
    """Refuse: the entry point prints one line (and a JSON object under --json) and exits with `code`."""
    raise CliError(message, code)
