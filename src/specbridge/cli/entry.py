"""Console entry point. `inspect` and `check` take a stdlib fast path: importing typer (and the
pydantic it pulls) costs more than the whole header read, and these two commands must answer in
well under 0.3 s for multi-GB drafters. Everything else, and every --help, goes to the typer app."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

FAST = ("inspect", "check")


def _fast(argv: list[str]) -> int:
    from . import commands

    p = argparse.ArgumentParser(prog=f"specbridge {argv[0]}", add_help=False)
    p.add_argument("path", type=Path)
    p.add_argument("--json", dest="as_json", action="store_true")
    if argv[0] == "check":
        p.add_argument("--engine", "-e", default=None)
        p.add_argument("--target", "-t", type=Path, default=None)
        p.add_argument("--launch", default=None)
        p.add_argument("--parent", type=Path, default=None)
        p.add_argument("--verbose", "-v", action="store_true")
    args, rest = p.parse_known_args(argv[1:])
    if rest:
        return -1  # something only the full CLI knows (e.g. --target): let typer handle it
    if argv[0] == "inspect":
        return commands.inspect_cmd(args.path, args.as_json)
    return commands.check_cmd(args.path, args.engine, args.as_json, args.verbose, args.target, args.launch, args.parent)


def main() -> None:
    try:
        _main()
    except BrokenPipeError:  # `specbridge … | head` is fine; don't print a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        sys.stderr.write("specbridge: interrupted\n")
        sys.exit(130)
    except MemoryError:
        sys.stderr.write("specbridge: error: out of memory (the input claims more than this machine has)\n")
        sys.exit(2)
    except Exception as e:  # a bug of ours: still one line, never a traceback dump on a user
        if os.environ.get("SPECBRIDGE_DEBUG"):
            raise
        sys.stderr.write(f"specbridge: internal error: {type(e).__name__}: {e} (set SPECBRIDGE_DEBUG=1 for the traceback; please report)\n")
        sys.exit(3)


def _main() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] in FAST and not {"-h", "--help"} & set(argv):
        try:
            code = _fast(argv)
        except SystemExit:  # argparse usage error: let typer print its own help-style message
            code = -1
        if code >= 0:
            sys.exit(code)
    from .main import app

    app()


if __name__ == "__main__":
    main()
