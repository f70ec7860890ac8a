"""Console entry point. `inspect` and `check` take a stdlib fast path: importing typer (and the
pydantic it pulls) costs more than the whole header read, and these two commands must answer in
well under 0.3 s for multi-GB drafters. Everything else, and every --help, goes to the typer app."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

FAST = ("inspect", "check", "convert")
# Old spellings keep working, with one line saying the new one (docs/cli.md: one vocabulary).
DEPRECATED = {"--max-tokens": "--max-new-tokens", "--verbose": "--tables"}


def modernise(argv: list[str]) -> list[str]:
    """argv with deprecated option spellings replaced (also in `--opt=value` form), each said once on stderr."""
    out = []
    for a in argv:
        name, eq, value = a.partition("=")
        if name in DEPRECATED:
            sys.stderr.write(f"specbridge: note: {name} is deprecated; use {DEPRECATED[name]}\n")
            a = DEPRECATED[name] + eq + value
        out.append(a)
    return out


def _fast(argv: list[str]) -> int:
    """The same options as the typer definitions in main.py (tests/test_cli.py keeps them equal)."""
    if argv[0] == "convert":
        return _fast_convert(argv)
    from . import commands

    p = argparse.ArgumentParser(prog=f"specbridge {argv[0]}", add_help=False)
    p.add_argument("path", type=Path)
    p.add_argument("--json", dest="as_json", action="store_true")
    if argv[0] == "check":
        p.add_argument("--engine", "-e", action="append", default=None)
        p.add_argument("--target", "-t", default=None)
        p.add_argument("--launch", default=None)
        p.add_argument("--parent", type=Path, default=None)
        p.add_argument("--tables", "-v", dest="tables", action="store_true")
        p.add_argument("--fail-on", action="append", default=None)
        p.add_argument("--ignore", action="append", default=None)
    args, rest = p.parse_known_args(argv[1:])
    if rest:
        return -1  # something only the full CLI knows: let typer handle (and explain) it
    if argv[0] == "inspect":
        return commands.inspect_cmd(args.path, args.as_json)
    return commands.check_cmd(args.path, args.engine, args.as_json, args.tables, args.target, args.launch, args.parent,
                              args.fail_on, args.ignore)


def _fast_convert(argv: list[str]) -> int:
    """`convert` without typer: an in-place rename is a header rewrite, and must not wait ~0.1 s for
    typer and pydantic to import. The options of convert_cmd.register (tests/test_convert_speed.py
    keeps them equal); anything else goes to typer."""
    from .convert_cmd import convert_cmd

    p = argparse.ArgumentParser(prog="specbridge convert", add_help=False, allow_abbrev=False)
    p.add_argument("src", type=Path)
    p.add_argument("--to", default=None)
    p.add_argument("-o", "--out", type=Path, default=None)
    p.add_argument("--in-place", action="store_true")
    p.add_argument("--engine", "-e", default=None)
    p.add_argument("--target", "-t", default=None)
    p.add_argument("--embed", default="keep")
    p.add_argument("--force", action="store_true")
    p.add_argument("--no-backup", action="store_true")
    p.add_argument("--shard-size", default=None)
    p.add_argument("--json", dest="as_json", action="store_true")
    args, rest = p.parse_known_args(argv[1:])
    if rest:
        return -1
    return convert_cmd(args.src, args.to, args.out, args.in_place, args.engine, args.target, args.embed, args.force,
                       not args.no_backup, args.shard_size, args.as_json)


def main() -> None:
    from .contract import CliError, report_error

    try:
        _main()
    except CliError as e:
        sys.exit(report_error(e, "--json" in sys.argv[1:]))
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
    argv = modernise(sys.argv[1:])
    if argv in (["--version"], ["-V"]):
        from .. import __version__

        print(f"specbridge {__version__}")
        sys.exit(0)
    if argv and argv[0] in FAST and not {"-h", "--help"} & set(argv):
        try:
            code = _fast(argv)
        except SystemExit:  # argparse usage error: let typer print its own help-style message
            code = -1
        if code >= 0:
            sys.exit(code)
    sys.exit(run_typer(argv))


def run_typer(argv: list[str]) -> int:
    """The full CLI. Usage errors (bad option, value out of range) become a CliError under --json, so a
    CI gate always gets a JSON object on stdout; a person gets click's usage message."""
    from typer.exceptions import TyperException

    from .contract import CliError
    from .main import app

    try:
        return app(args=argv, prog_name="specbridge", standalone_mode=False) or 0
    except TyperException as e:
        if "--json" in argv:
            raise CliError(e.format_message(), getattr(e, "exit_code", 2)) from None
        e.show()
        return getattr(e, "exit_code", 2)


if __name__ == "__main__":
    main()
