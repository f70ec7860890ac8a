"""Console entry point. `inspect`, `check`, `convert` and `restore` take a stdlib fast path: importing typer costs
more than the whole header read (or an in-place rename), and these commands must answer at header speed
for multi-GB drafters. Their options are declared once (optspec.py) for both paths. Everything else, and
every --help, goes to the typer app."""

from __future__ import annotations

import gc
import os
import sys

# at import, not in main(): a Ctrl-C while main() imports what its handlers need would escape them
from .contract import ANSWERED, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, CliError, report_error

FAST = ("inspect", "check", "convert", "restore")
# Old spellings keep working, with one line saying the new one (docs/cli.md: one vocabulary).
DEPRECATED = {"--max-tokens": "--max-new-tokens", "--verbose": "--tables"}
# Old spellings of one command only: the same flag means something else on the others (train's optimizer
# steps were --steps, which is the draft depth everywhere else).
DEPRECATED_IN = {"train": {"--steps": "--train-steps"}}


def modernise(argv: list[str]) -> list[str]:
    """argv with deprecated option spellings replaced (also in `--opt=value` form), each said once on stderr;
    nothing after `--` (the engine's own arguments) is touched."""
    old = {**DEPRECATED, **DEPRECATED_IN.get(argv[0] if argv else "", {})}
    out, said = [], set()
    for i, a in enumerate(argv):
        if a == "--":
            return out + argv[i:]
        name, eq, value = a.partition("=")
        if name in old:
            if name not in said:
                sys.stderr.write(f"specbridge: note: {name} is deprecated; use {old[name]}\n")
                said.add(name)
            a = old[name] + eq + value
        out.append(a)
    return out


def _fast(argv: list[str]) -> int:
    """inspect/check/convert/restore parsed by the rows of optspec.OPTIONS, the same rows the typer commands are
    declared from; -1 hands anything else to typer."""
    from .optspec import parse_fast

    a = parse_fast(argv[0], argv[1:])
    if a is None:
        return -1
    if argv[0] == "convert":
        from .convert_cmd import convert_cmd

        return convert_cmd(
            a["path"],
            a["to"],
            a["out"],
            a["in_place"],
            a["engine"],
            a["target"],
            a["embed"],
            a["force"],
            not a["no_backup"],
            a["shard_size"],
            a["as_json"],
        )
    if argv[0] == "restore":
        from .restore_cmd import restore_cmd

        return restore_cmd(a["path"], a["as_json"])
    from . import commands

    if argv[0] == "inspect":
        return commands.inspect_cmd(a["path"], a["as_json"])
    return commands.check_cmd(
        a["path"], a["engine"], a["as_json"], a["tables"], a["target"], a["launch"], a["parent"], a["fail_on"], a["ignore"], a["mtp"]
    )


def run() -> None:
    """The process's entry point (the `specbridge` console script, `python -m specbridge`): `main()`, then an exit
    without the interpreter's final collection. At exit Python walks every object the command left for cycles, which
    for a header-only command is a tenth of its time (5 ms of a 46 ms check) and finds nothing to free that exit
    does not free anyway; `gc.freeze()` leaves them out of it. Only here: a caller of `main()` in its own process
    (a test) keeps its collector as it was."""
    try:
        main()
    finally:
        gc.freeze()


def main() -> None:
    args = sys.argv[1:]
    as_json = "--json" in (args[: args.index("--")] if "--" in args else args)  # after --: the engine's arguments
    ANSWERED["json"] = False
    try:
        _main()
    except CliError as e:
        sys.exit(report_error(e, as_json))
    except BrokenPipeError:  # `specbridge … | head` is fine; don't print a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt as e:  # Ctrl-C (and serve's SIGTERM) anywhere, in every command: one line, exit 130
        sys.exit(report_error(CliError(interrupted_message(e), EXIT_INTERRUPTED), as_json))
    except MemoryError:
        sys.exit(report_error(CliError("out of memory (the input claims more than this machine has)", EXIT_USAGE), as_json))
    except Exception as e:  # a bug of ours: still one line, never a traceback dump on a user
        if os.environ.get("SPECBRIDGE_DEBUG"):
            raise
        message = f"internal error: {type(e).__name__}: {e} (set SPECBRIDGE_DEBUG=1 for the traceback; please report)"
        sys.exit(report_error(CliError(message, EXIT_INTERNAL), as_json))


def interrupted_message(interrupt: KeyboardInterrupt) -> str:
    """'interrupted', and what the interrupted work kept when it says so: a layer that leaves something a rerun
    resumes from (train's generated data) sets `specbridge_kept` on the KeyboardInterrupt on its way out."""
    kept = getattr(interrupt, "specbridge_kept", None)
    return f"interrupted; {kept}" if kept else "interrupted"


def _main() -> None:
    argv = modernise(sys.argv[1:])
    if argv in (["--version"], ["-V"]):
        from .. import __version__

        print(f"specbridge {__version__}")
        sys.exit(0)
    if argv and argv[0] in FAST and not {"-h", "--help"} & set(argv):
        # A header-only command builds tables and a report that reference counting frees: the cyclic collector would
        # walk every row it imports a dozen times and find nothing (a twentieth of a check). Off while it runs.
        collecting = gc.isenabled()
        gc.disable()
        try:
            code = _fast(argv)
        except SystemExit:  # argparse usage error: let typer print its own help-style message
            code = -1
        finally:
            if collecting:
                gc.enable()
        if code >= 0:
            sys.exit(code)
    sys.exit(run_typer(argv))


def run_typer(argv: list[str]) -> int:
    """The full CLI. A usage error (bad option, value out of range) is a CliError like any refusal: one line
    on stderr naming the command's --help, and under --json the error object on stdout. Only a bare
    `specbridge` (or a command without its arguments) prints the help it asks for.

    The command is invoked here, not through typer's standalone handling (`app(...)`): that handling turns
    Ctrl-C into a silent `Exit(130)` (typer 0.2x) or an `Abort` (older typer, click), so the interrupt never
    reached main() and nothing was said. Here a KeyboardInterrupt leaves as itself, whatever the typer version."""
    import typer
    from typer.exceptions import TyperException

    from .main import app, click_command

    if any(name.endswith("_COMPLETE") and name.startswith("_SPECBRIDGE") for name in os.environ):
        return app(args=argv, prog_name="specbridge", standalone_mode=False) or 0  # shell completion: typer's own path
    command = click_command()
    try:
        with command.make_context("specbridge", list(argv)) as ctx:
            return command.invoke(ctx) or 0
    except typer.Exit as e:  # every command ends with `raise typer.Exit(code)`; --help and --version too
        return e.exit_code
    except TyperException as e:
        if type(e).__name__ == "NoArgsIsHelpError" and "--json" not in argv:
            e.show()
            return getattr(e, "exit_code", EXIT_USAGE)
        ctx = getattr(e, "ctx", None)
        hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        raise CliError(e.format_message().rstrip(".") + hint, getattr(e, "exit_code", EXIT_USAGE)) from None


if __name__ == "__main__":
    run()
