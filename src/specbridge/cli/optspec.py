"""The options of the commands with a stdlib fast path (inspect, check, convert, restore), declared once. The typer
commands take their flags, defaults and help from these rows (`options.typer_param`), and the fast path in
entry.py builds its argparse parser from them, so the two cannot disagree. Also every numeric option's bounds
(NUMBERS), one row per flag for every command that has it. Stdlib only: the fast path must not import typer."""

from __future__ import annotations

from pathlib import Path

from ..prompts import DEFAULT_PROMPT_FORMAT, MAX_NEW_TOKENS, STOPPING_RULE
from ..record import record

ARGUMENT, VALUE, PATH, FLAG, MANY = "argument", "value", "path", "flag", "many"


@record
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
        Opt(
            "fail_on",
            ("--fail-on",),
            "finding codes that fail the run whatever their severity, or `warning`: every warning fails it (comma list, repeatable)",
            None,
            MANY,
        ),
        Opt("ignore", ("--ignore",), "error codes that do not fail the run (comma list, repeatable)", None, MANY),
    ),
    "convert": (
        Opt("path", (), "drafter checkpoint to convert (never modified without --in-place)", kind=ARGUMENT),
        Opt("to", ("--to",), "speculators, sglang, vllm, eagle, trtllm, nemo; dflash; eagle1-vllm, eagle1-sglang"),
        Opt("out", ("-o", "--out"), "destination directory (must not exist unless --force)", None, PATH),
        Opt("in_place", ("--in-place",), "convert PATH itself (keeps a backup unless --no-backup)", False, FLAG),
        Opt("engine", ("--engine", "-e"), "produce exactly what NAME==VERSION needs"),
        Opt("target", ("--target", "-t"), "target model dir, Hub id or alias (aux-layer numbering, embed/head from its weights)"),
        Opt("embed", ("--embed",), "keep | drop | target: what to do with embed_tokens", "keep"),
        Opt("force", ("--force",), "replace an existing --out directory (atomically)", False, FLAG),
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


def _argparse(command: str, argv: list[str]) -> dict | None:
    """argv parsed by argparse from the rows of `command`, or None when it holds anything else."""
    import argparse

    class QuietParser(argparse.ArgumentParser):
        """argparse that prints nothing on a usage error: typer, given the same argv, says it in one line. It never
        formats help either (--help goes to typer), so its formatter has a fixed width: argparse's default asks the
        terminal for one, importing shutil (and bz2, lzma) on every run."""

        def error(self, message: str):
            raise _Unparsed(message)

        def _get_formatter(self):
            return self.formatter_class(prog=self.prog, width=100)

    p = QuietParser(prog=f"specbridge {command}", add_help=False, allow_abbrev=False)
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


def _plain_forms(command: str, argv: list[str]) -> dict | None:
    """What argparse makes of argv when it holds only the plain forms, which argparse reads one way only: the
    positional argument once (not starting with '-'), and each option by one of its exact flags, a value after it
    (`--engine vllm`, not starting with '-') or after `=` (`--engine=vllm`, non-empty; long flags only). None for
    anything else: argparse itself reads it (a `--`, `-evllm`, an abbreviation, a value starting with '-'...)."""
    rows = OPTIONS[command]
    by_flag = {f: o for o in rows for f in o.flags}
    out = {o.dest: False if o.kind == FLAG else o.default for o in rows}
    positional = next(o.dest for o in rows if o.kind == ARGUMENT)
    out[positional] = None
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if out[positional] is not None:
                return None
            out[positional] = word
            continue
        flag, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        o = by_flag.get(flag)
        if o is None or (eq and (o.kind == FLAG or not value)):
            return None
        if o.kind == FLAG:
            out[o.dest] = True
            continue
        if not eq:
            if i == len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        if o.kind == MANY:
            out[o.dest] = [*(out[o.dest] or ()), value]
        else:
            out[o.dest] = Path(value) if o.kind == PATH else value
    return out if out[positional] is not None else None


def parse_fast(command: str, argv: list[str]) -> dict | None:
    """argv parsed by the rows of `command`, or None when it holds anything else (typer then handles and explains it).
    The plain forms every script writes are read here; anything else by argparse (~5 ms of imports), the same way."""
    return _plain_forms(command, argv) or _argparse(command, argv)


# --- numeric values ----------------------------------------------------------------------------------------
# Every numeric option of every command has one row here, keyed by its flag: the same flag means the same
# quantity and keeps the same bounds on every command that has it (tests/test_fuzz.py fails on a numeric
# option without a row, and tries 0 and a negative value on each). The rows are applied while the command
# line is parsed (options.number_param, train's options), so a value out of range is refused before any
# work: exit 2, one line naming the option.


@record
class Number:
    flag: str
    what: str  # the quantity, said in the refusal
    least: float = 1  # the smallest legal value
    most: float | None = None
    above: bool = False  # `least` itself is refused (a float that must be > least)
    zero: str = ""  # where 0 is legal: what it means (documented in docs/cli.md)


_NUMBER_ROWS = (
    Number("--steps", "draft depth: tokens drafted per verify step"),
    Number("--topk", "tree branching: draft tokens kept per step"),
    Number("--draft-tokens", "tree node budget: tokens verified per step, the last verified one included", least=2),
    Number("--max-new-tokens", "tokens generated per prompt"),
    Number("--num-prompts", "prompts used"),
    Number("--concurrency", "requests in flight at once"),
    Number("--threads", "torch threads"),
    Number("--port", "TCP port", most=65535),
    Number("--timeout", "seconds per request", least=0.1),
    Number("--phase-timeout", "seconds without reaching the next start-up phase"),
    Number("--startup-timeout", "seconds the whole start-up may take"),
    Number("--warmup", "warm-up requests per server", least=0, zero="no warm-up request"),
    Number("--max-errors", "failed requests tolerated", least=0, zero="the first failed request stops the run"),
    Number("--fail-under", "mean accept length the run must reach (at most steps + 1)"),
    Number("--shard-size", "bytes per shard: 5GB, 500MiB or a byte count"),
    # train's
    Number("--aux-layers", "target layer ids the drafter reads", least=0, zero="the input of layer 0 (the embeddings' output)"),
    Number("--train-steps", "optimizer steps; unset, --epochs decides"),
    Number("--epochs", "passes over the training data", least=0, above=True),
    Number("--lr", "peak learning rate", least=0, above=True),
    Number("--step-decay", "loss weight ratio between TTT steps", least=0, above=True),
    Number("--warmup-steps", "learning-rate warmup steps", least=0, zero="no warmup: the peak rate from the first step"),
    Number("--batch-size", "sequences per process per step"),
    Number("--gen-batch-size", "prompts decoded together"),
    Number("--gen-workers", "processes generating the data"),
    Number("--max-length", "tokens per training sequence"),
    Number("--draft-vocab-size", "draft vocabulary size"),
    Number("--ttt-steps", "train-time-test unroll depth"),
    Number("--tp", "tensor-parallel size"),
    Number("--pp", "pipeline-parallel size"),
    Number("--seed", "random seed", least=0, zero="a seed like any other (the default)"),
    Number("--save-every", "steps between checkpoints", least=0, zero="a checkpoint at the end only (the default)"),
    Number("--eval-every", "steps between validations", least=0, zero="validation at start and end only (the default)"),
)
NUMBERS: dict[str, Number] = {r.flag: r for r in _NUMBER_ROWS}


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def bound(row: Number) -> str:
    """The values `row` allows, as the refusal and docs/cli.md say them."""
    if row.most is not None:
        return f"between {row.least:g} and {row.most:g}"
    return f"{'>' if row.above else '≥'} {row.least:g}"


def number_problem(flag: str, value) -> str | None:
    """Why `value` cannot be `flag`'s value (its row), or None when it can. None (an option not given) can."""
    row = NUMBERS[flag]
    if value is None:
        return None
    low = value <= row.least if row.above else value < row.least
    if low or (row.most is not None and value > row.most) or value != value:  # NaN is no number
        return f"{flag} must be {bound(row)} ({row.what}), got {_shown(value)}"
    return None


def check_number(flag: str, value):
    """`value` if `flag`'s row allows it; else the refusal (exit 2, one line)."""
    from .contract import CliError

    problem = number_problem(flag, value)
    if problem:
        raise CliError(problem)
    return value


def number_list(flag: str, text: str | None) -> list[int] | None:
    """'1,3,5' -> [1, 3, 5], each item checked by `flag`'s row; an empty or non-integer list is refused.
    None (not given) stays None."""
    from .contract import CliError

    if text is None:
        return None
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or any(number_problem(flag, v) for v in values):
        raise CliError(f"{flag} takes comma-separated integers {bound(NUMBERS[flag])} ({NUMBERS[flag].what}), got {text!r}")
    return values


def validate_draft_shape(steps: int, topk: int, draft_tokens: int | None) -> None:
    """Draft depth, branching and node budget the engines accept, each by its optspec.NUMBERS row (steps ≥ 1,
    topk ≥ 1, draft tokens ≥ 2) and together: a chain (topk 1) verifies exactly steps + 1 tokens; a tree at
    most the nodes SGLang accepts (engines.launch, the same bound check's C008 applies to a launch line).
    Unusable input (exit 2), wherever a command meets it: at the door, or once a drafter's default depth is known."""
    from .contract import fail

    check_number("--steps", steps)
    check_number("--topk", topk)
    check_number("--draft-tokens", draft_tokens)
    if draft_tokens is None:
        return
    if topk == 1:
        if draft_tokens != steps + 1:
            fail(f"--draft-tokens {draft_tokens} with --topk 1 must be steps + 1 = {steps + 1} (a chain has no other size)")
        return
    from ..engines.launch import max_draft_tokens

    most = max_draft_tokens(steps, topk)
    if not draft_tokens <= most:
        fail(f"--draft-tokens must be between 2 and {most} (topk {topk} × steps {steps} + 1) for a tree; got {draft_tokens}")
