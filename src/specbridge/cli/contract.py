"""The contract every `--json` output keeps, for CI gates: a schema name and the tool version in every
object, strict JSON (no NaN), and errors as a JSON object on stdout as well as one line on stderr.

Schema names are `specbridge.<command>/<N>`; N changes only when a key changes meaning or goes away.
`docs/ci.md` documents the keys."""

from __future__ import annotations

import json
import math
import sys

from .. import __version__

SCHEMA_VERSION = 2
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


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


def document(command: str, body: dict) -> dict:
    return {"schema": f"specbridge.{command}/{SCHEMA_VERSION}", "specbridge_version": __version__, **body}


def dumps(obj: dict) -> str:
    return json.dumps(finite(obj), indent=2, allow_nan=False)


def print_json(command: str, body: dict) -> None:
    print(dumps(document(command, body)))


def report_error(err: CliError, as_json: bool) -> int:
    sys.stderr.write(f"specbridge: error: {err.message}\n")
    if as_json:
        print(dumps(document("error", {"ok": False, "error": {"exit_code": err.code, "message": err.message}})))
    return err.code
