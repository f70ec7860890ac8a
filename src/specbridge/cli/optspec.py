"""The options of the commands with a stdlib fast path (inspect, check, convert, restore), declared once. The typer
commands take their flags, defaults and help from these rows (`options.typer_param`), and the fast path in
entry.py builds its argparse parser from them, so the two cannot disagree. Stdlib only: the fast path
must not import typer."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ..prompts import DEFAULT_PROMPT_FORMAT, MAX_NEW_TOKENS, STOPPING_RULE

ARGUMENT, VALUE, PATH, FLAG, MANY = "argument", "value", "path", "flag", "many"


@dataclass(frozen=True)
class Opt:
    dest: str
    flags: tuple[str, ...]  # () for the positional argument
    help: str
    default: object = None
    kind: str = VALUE  # ARGUMENT | VALUE | PATH | FLAG (on/off) | MANY (repeatable, comma lists allowed)


DRAFTER = "drafter directory, .safetensors file, sharded index, pytorch_model.bin or Hub id (org/name[@revision])"
TARGET = "target model directory, its config.json, a HF cache dir, a Hub id or an alias (smollm2-135m)"
JSON = Opt("as_json", ("--json",), "print one JSON object (the CI contract: docs/ci.md)", False, FLAG)

# The workload options eval, bench and sweep share (specbridge.prompts): one row each, so the flag, its
# default and its help are the same on every command (options.shared_param builds the typer option).
PROMPTS = Opt(
    "prompts",
    ("--prompts",),
    ".jsonl ({prompt}, {messages} or {prompt_ids} per line) or text, one prompt per line (default: the bundled validation prompts)",
    None,
    PATH,
)
PROMPT_FORMAT = Opt(
    "prompt_format",
    ("--prompt-format",),
    "chat: the target's chat template (assistant header added), raw: the text as it is; the same token ids in eval, bench and sweep",
    DEFAULT_PROMPT_FORMAT,
)
MAX_NEW = Opt("max_new", ("--max-new-tokens",), f"tokens generated per prompt: {STOPPING_RULE}", MAX_NEW_TOKENS)

OPTIONS: dict[str, tuple[Opt, ...]] = {
    "inspect": (Opt("path", (), DRAFTER, kind=ARGUMENT), JSON),
    "check": (
        Opt("path", (), DRAFTER, kind=ARGUMENT),
        Opt(
            "engine",
            ("--engine", "-e"),
            "sglang, vllm, trtllm, NAME==VERSION, a comma list, or all; repeatable (default: all, or the --launch engine)",
            None,
            MANY,
        ),
        Opt("target", ("--target", "-t"), TARGET),
        Opt(
            "launch",
            ("--launch",),
            "the intended engine command line (SGLang, vLLM, or trtllm-serve with its --config YAML, read from disk)",
        ),
        Opt("parent", ("--parent",), "the checkpoint this drafter was fine-tuned from (vocab map must match)"),
        Opt("mtp", ("--mtp",), "PATH is a target: check the MTP head it carries (found from its index without --mtp too)", False, FLAG),
        JSON,
        Opt("tables", ("--tables", "-v"), "also print every tensor's fate and every engine parameter", False, FLAG),
        Opt("fail_on", ("--fail-on",), "finding codes that fail the run whatever their severity (comma list, repeatable)", None, MANY),
        Opt("ignore", ("--ignore",), "error codes that do not fail the run (comma list, repeatable)", None, MANY),
    ),
    "convert": (
        Opt("src", (), "drafter checkpoint to convert (never modified without --in-place)", kind=ARGUMENT),
        Opt("to", ("--to",), "speculators, sglang, vllm, eagle, trtllm, nemo; dflash; eagle1-vllm, eagle1-sglang"),
        Opt("out", ("-o", "--out"), "destination directory (must not exist unless --force)", None, PATH),
        Opt("in_place", ("--in-place",), "convert SRC itself (keeps a backup unless --no-backup)", False, FLAG),
        Opt("engine", ("--engine", "-e"), "produce exactly what NAME==VERSION needs"),
        Opt("target", ("--target", "-t"), "target model dir, Hub id or alias (aux-layer numbering, embed/head from its weights)"),
        Opt("embed", ("--embed",), "keep | drop | target: what to do with embed_tokens", "keep"),
        Opt("force", ("--force",), "replace an existing DST (atomically)", False, FLAG),
        Opt("no_backup", ("--no-backup",), "with --in-place: keep no backup", False, FLAG),
        Opt("shard_size", ("--shard-size",), "write shards of at most this size (e.g. 5GB)"),
        JSON,
    ),
    "restore": (Opt("path", (), "checkpoint directory converted with --in-place", kind=ARGUMENT), JSON),
}


def option(command: str, dest: str) -> Opt:
    return next(o for o in OPTIONS[command] if o.dest == dest)


class _Unparsed(Exception):
    pass


class _QuietParser(argparse.ArgumentParser):
    """argparse that prints nothing on a usage error: typer, given the same argv, says it in one line. It never
    formats help either (--help goes to typer), so its formatter has a fixed width: argparse's default asks the
    terminal for one, importing shutil (and bz2, lzma) on every run."""

    def error(self, message: str):
        raise _Unparsed(message)

    def _get_formatter(self):
        return self.formatter_class(prog=self.prog, width=100)


def parse_fast(command: str, argv: list[str]) -> dict | None:
    """argv parsed by the rows of `command`, or None when it holds anything else (typer then handles and explains it)."""
    p = _QuietParser(prog=f"specbridge {command}", add_help=False, allow_abbrev=False)
    for o in OPTIONS[command]:
        if o.kind == ARGUMENT:
            p.add_argument(o.dest)  # the text as typed: Path("./x") would drop the "./" that says it is no Hub id
        elif o.kind == FLAG:
            p.add_argument(*o.flags, dest=o.dest, action="store_true")
        elif o.kind == MANY:
            p.add_argument(*o.flags, dest=o.dest, action="append", default=o.default)
        else:
            p.add_argument(*o.flags, dest=o.dest, default=o.default, type=Path if o.kind == PATH else str)
    try:
        args, rest = p.parse_known_args(argv)
    except _Unparsed:  # a usage error: typer says it
        return None
    return None if rest else vars(args)
