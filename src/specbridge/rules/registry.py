"""The rule registry, ruff-style: one small function per finding code, registered with its code, title,
severity, fix and documentation. `check` runs the registry; `docs/rules.md` is generated from it
(`scripts/gen_rules_doc.py`, kept fresh by a test); `scripts/rule_removal_check.py` switches rules off
through it.

A rule function takes the `Context` of one check and yields `Hit`s (severity, message, fix); the runner
stamps each with the rule's code. Its docstring is the rule's documentation (what it detects, why it
matters when serving, the engine source it comes from), as in ruff. A rule that names its severity case by case (an error on one engine,
information on another) says so in its hits; `severity` is the one it usually has.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Iterable

from ..families.table import FAMILIES
from ..record import record
from .findings import Finding

# Categories in report order: (heading, what the docs say of them). A rule's code starts with its letter.
CATEGORIES = {
    "R": (
        "Engine version placement",
        """
Every engine version that is not a plain, modelled release is said, so an answer for `sglang==0.5.99` or a
bare `sglang` never looks more certain than it is (`src/specbridge/rules/versions.py`; the modelled releases
are the eras in `src/specbridge/engines/`, see `docs/engines.md`).""",
    ),
    "L": (
        "Load simulation",
        """
`check` runs each engine version's own loading rules (name mapping, shapes built from `config.json`,
sharing with the target after loading) over the checkpoint's tensor headers; the tables are
`src/specbridge/engines/` (`vllm/`, `sglang/`, `trtllm/`: one file per family), each row citing the engine file and release it mirrors
(see `docs/engines.md`). The L rules turn that simulated load into findings
(`src/specbridge/rules/load.py`).""",
    ),
    "G": (
        "Shape algebra",
        """
The G rules compare the checkpoint's tensor shapes with its config and, with `--target`, with the target's
config (`src/specbridge/rules/geometry.py`). All but G009 (the KV cache each engine version allocates) do
not depend on the engine.""",
    ),
    "F": (
        "Target fit",
        """
With `--target`, whether the target feeds what a drafter of a family other than EAGLE-3 reads (EAGLE-3's are the G and
V rules): the width of the target hidden states it takes, as its family's module reads it from the files
(`src/specbridge/families/fit.py`), and the vocabulary of the embedding and head each engine release keeps as the
drafter's own (`src/specbridge/rules/fit.py`). The target layers a DFlash-family drafter reads are D001; the dtype is
C003; a plain draft model's vocabulary and tokenizer are the T rules'.""",
    ),
    "V": (
        "Vocab maps",
        """
A reduced-vocab drafter scores `draft_vocab_size` tokens; `d2t` maps draft id i to target id `i + d2t[i]`
(offsets, int64) and `t2d` marks the selected target ids. The V rules check the maps and, with `--target` or
`--parent`, the vocab against the target and the parent checkpoint (`src/specbridge/rules/vocab.py`).""",
    ),
    "A": (
        "Aux layers",
        """
An EAGLE-3 drafter's `fc` reads hidden states the target captures at a few layers. The A rules resolve which
physical layers each engine version feeds and compare them with the ones the drafter was trained on
(`src/specbridge/rules/aux.py`, tables in `src/specbridge/engines/capture.py`); they need `--target`, and
A004 `--launch`.""",
    ),
    "E": (
        "Embedding and head",
        """
Whether the drafter's own embedding and head are consistent, trained, and kept or replaced by the engine
(`src/specbridge/rules/embed_head.py`).""",
    ),
    "D": (
        "DFlash",
        """
What a DFlash drafter needs beyond its load: the target layers its `fc` reads and how they are numbered, the
mask token its parallel slots are fed, and the embedding those slots get (`src/specbridge/rules/dflash.py`).
They run for DFlash drafters only; the L and R rules run for every family specbridge models.""",
    ),
    "M": (
        "MTP heads inside a target",
        """
A target that carries its own multi-token-prediction head (DeepSeek, GLM, Qwen3-Next, MiMo, …): whether the
config announces the layers the weights hold, whether each is whole, whether the target's quantization builds
the head the way its tensors are stored, and the launch line's draft steps against the layer count
(`src/specbridge/rules/mtp.py`). The head is found from the index alone (`src/specbridge/families/mtp.py`);
its load is the engine rows' (the L rules).""",
    ),
    "H": (
        "Medusa heads",
        """
A Medusa checkpoint (vLLM `method: medusa`): the launch line's `num_speculative_tokens`, which sets how many heads
vLLM builds, against the heads the checkpoint was trained with (`src/specbridge/rules/medusa.py`). Its load (names,
biases, `token_map` and `truncated_vocab_size`) is the engine rows' (`MEDUSA_CLASS` in
`src/specbridge/engines/vllm/medusa.py`), reported by the L rules.""",
    ),
    "T": (
        "Plain draft models",
        """
A small causal LM served as a draft model (vLLM `method: draft_model`, SGLang `--speculative-algorithm STANDALONE`),
checked against its target with `check DRAFT --target TARGET`, header-only: whether the engine release serves the
method, the vocab size, the token-to-id map of `tokenizer.json`, merges, special tokens, chat template and max
positions (`src/specbridge/rules/draft_model.py`; the engine rows are `DRAFT_MODEL` in
`src/specbridge/engines/vllm/draft_model.py`, `sglang/draft_model.py`).""",
    ),
    "C": (
        "Config and launch",
        """
The drafter's config against the target's and against the launch command (`--launch`), and architecture
flags against what the engine version reads (`src/specbridge/rules/config.py`).""",
    ),
}
# When a rule runs: once per checkpoint (no engine in it), or once per engine version.
CHECKPOINT, ENGINE = "checkpoint", "engine"


class Hit(namedtuple("Hit", "severity message fix", defaults=(None,))):
    """What a rule found: its severity, the message, and the concrete fix (the runner stamps the rule's code)."""

    # the fields and their types (collections.namedtuple: typing.NamedTuple imports typing, ~1 ms of a check)
    # severity: str
    # message: str
    # fix: str | None = None

    __slots__ = ()


@record
class Rule:
    code: str
    title: str
    severity: str  # usual severity; hits may carry another
    fix: str  # what to do, as the docs state it (hits carry the concrete command)
    doc: str  # what it detects, why it matters, the engine source it comes from (markdown)
    failure_modes: tuple[int, ...]  # rows of docs/failure-modes.md
    scope: str  # CHECKPOINT or ENGINE
    check: Callable[..., Iterable[Hit]]
    families: tuple[str, ...] = ("eagle3",)  # the drafter families (families/table.py) the rule reads


# every family check reads from a row of its own (the engines' eras and FAMILY_RANGES, an MTP head's): the load
# simulation (L) and the version placement (R) hold for any class a row describes; the other rules read EAGLE-3's
# geometry, aux layers and vocab maps. A plain draft model has its rules (rules/draft_model.py), named by family.
EVERY_FAMILY = tuple(f.name for f in FAMILIES if f.modelled and f.checker != "draft_model")


RULES: dict[str, Rule] = {}


def rule(
    code: str,
    title: str,
    *,
    severity: str,
    fix: str,
    failure_modes: tuple[int, ...] = (),
    scope: str = ENGINE,
    families: tuple[str, ...] | None = None,
) -> Callable:
    """Register the decorated function as rule `code`; its docstring is the documentation. `families`: the
    drafter families it applies to (default: the L and R rules every modelled family, the rest EAGLE-3)."""

    def register(fn: Callable[..., Iterable[Hit]]) -> Callable[..., Iterable[Hit]]:
        assert code not in RULES, f"{code} registered twice"
        assert code[0] in CATEGORIES, code
        assert fn.__doc__, f"{code}: a rule documents itself"
        fams = families if families is not None else (EVERY_FAMILY if code[0] in "LR" else ("eagle3",))
        RULES[code] = Rule(code, title, severity, fix, cleandoc(fn.__doc__), failure_modes, scope, fn, fams)
        return fn

    return register


def cleandoc(doc: str) -> str:
    """A docstring as `inspect.cleandoc` gives it (first line stripped, the rest dedented, blank lines around it
    dropped), without importing `inspect`, which a check would otherwise load for this alone."""
    lines = doc.expandtabs().split("\n")
    margin = min((len(ln) - len(ln.lstrip()) for ln in lines[1:] if ln.lstrip()), default=0)
    lines = [lines[0].lstrip(), *(ln[margin:] for ln in lines[1:])]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def run(scope: str, ctx, codes: Iterable[str] | None = None) -> list[Finding]:
    """Every registered rule of `scope` (or just `codes`), in catalogue order, on one context."""
    out = []
    for r in ordered():
        if r.scope == scope and ctx.family in r.families and (codes is None or r.code in codes):
            out.extend(Finding(r.code, h.severity, h.message, h.fix) for h in r.check(ctx))
    return out


def ordered() -> list[Rule]:
    return sorted(RULES.values(), key=lambda r: _position(r.code))


def in_catalogue_order(findings: list[Finding]) -> list[Finding]:
    """Findings sorted by their rule's place in the catalogue (stable: a rule's own findings keep their order)."""
    return sorted(findings, key=lambda f: _position(f.code))


def _position(code: str) -> tuple[int, str]:
    order = _CATEGORY_ORDER
    return order.get(code[0], len(order)), code


_CATEGORY_ORDER = {letter: i for i, letter in enumerate(CATEGORIES)}  # a letter's place in the report order


# The rule modules register themselves on import.
from . import aux, config, dflash, draft_model, embed_head, family, fit, geometry, load, medusa, mtp, versions, vocab  # noqa: E402,F401
