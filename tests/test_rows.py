"""Engine rows cannot fail quietly: every expression in every row of every engine table (EAGLE-3 eras and the family
ranges) parses in the expression grammar and reads only names its class defines, and an expression that does not
(a typo in a row) raises RowError naming it instead of turning into False or None."""

from __future__ import annotations

import ast

import pytest

from specbridge.engines.expr import RowError, _parse, names
from specbridge.engines.registry import ENGINES, FAMILY_RANGES, LAUNCHERS
from specbridge.engines.simulate import ROW_NAMES, simulate
from specbridge.engines.spec import DraftClass, Param
from specbridge.view import open_view


def _classes() -> list[tuple[str, DraftClass]]:
    out = []
    for eras in ENGINES.values():
        out += [(f"{era.engine} {era.name}", c) for era in eras for c in era.classes.values()]
    for rows in FAMILY_RANGES.values():
        out += [(f"{r.engine} {r.family} {r.first}", c) for r in rows for c in r.classes.values()]
    return out


def _expressions(cls: DraftClass) -> list[tuple[str, str]]:
    """(where, expression) for every expression the class's rows hold."""
    out = [(f"derive {d.name}", d.expr) for d in cls.derive]
    for p in cls.params:
        p: Param
        shapes = [e for _, s in p.shards for e in s] if p.shards else list(p.shape)
        out += [(f"param {p.name} shape", e) for e in shapes]
        out += [(f"param {p.name} {k}", getattr(p, k)) for k in ("when", "missing_ok", "missing_small")]
    out += [(f"loader {type(st).__name__}({st.a!r}) when", st.when) for st in cls.loader]
    out += [(f"raise {r.message[:40]!r}", r.when) for r in cls.raises]
    out += [("share_embed", cls.share_embed), ("share_head", cls.share_head)]
    return out


CLASSES = _classes()


@pytest.mark.parametrize("where, cls", CLASSES, ids=[f"{w} {c.name}" for w, c in CLASSES])
def test_every_row_expression_reads_only_defined_names(where, cls):
    defined = {f.name for f in cls.fields} | {d.name for d in cls.derive} | set(ROW_NAMES)
    for at, src in _expressions(cls):
        tree = _parse(src)  # parses
        assert all(isinstance(n, (ast.expr, ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)) for n in ast.walk(tree)), (
            at,
            src,
        )
        unknown = names(src) - defined
        assert not unknown, f"{where} {cls.name} {at}: {src!r} reads {sorted(unknown)}, which no field or derive defines"


def test_launch_expressions_read_only_steps_and_topk():
    for name, row in LAUNCHERS.items():
        for src in (row.draft_tokens, row.topk1_draft_tokens):
            assert not src or names(src) <= {"steps", "topk"}, (name, src)


def test_a_typo_in_a_row_raises_naming_it_instead_of_evaluating_false(tmp_path):
    """The failure this tool exists to catch, inside the tool: a misspelt name in a `when` used to read as False."""
    from dataclasses import replace

    from specbridge.engines import vllm

    era = vllm.ERAS[-1]
    cls = era.classes["Eagle3LlamaForCausalLM"]
    typo = replace(cls, params=(replace(cls.params[0], when="not_a_field > 0"),) + cls.params[1:])
    broken = replace(era, classes={**era.classes, "Eagle3LlamaForCausalLM": typo})
    from conftest import STORY

    with pytest.raises(RowError, match="not_a_field"):
        simulate(open_view(STORY), broken, "0.32.0")
    simulate(open_view(STORY), era, "0.32.0")  # the table as written evaluates
