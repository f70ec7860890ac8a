"""Engine rows cannot fail quietly: every expression in every row of every engine table (EAGLE-3 eras and the family
ranges) parses in the expression grammar and reads only names its class defines, and an expression that does not
(a typo in a row) raises RowError naming it instead of turning into False or None."""

from __future__ import annotations

import ast

import pytest

from specbridge.engines.expr import RowError, _parse, names, value_or
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
    from specbridge.engines import vllm
    from specbridge.record import replace

    era = vllm.ERAS[-1]
    cls = era.classes["Eagle3LlamaForCausalLM"]
    typo = replace(cls, params=(replace(cls.params[0], when="not_a_field > 0"),) + cls.params[1:])
    broken = replace(era, classes={**era.classes, "Eagle3LlamaForCausalLM": typo})
    from conftest import STORY

    with pytest.raises(RowError, match="not_a_field"):
        simulate(open_view(STORY), broken, "0.32.0")
    simulate(open_view(STORY), era, "0.32.0")  # the table as written evaluates


# --- a row that raises is a row error, reported; a config that gives no value is no value -------------------------

# what the launch-check rules put beside the class's namespace (rules/load.py, rules/dflash.py, rules/mtp.py)
LAUNCH_NAMES = {
    "method": "EAGLE3",
    "parallel": False,
    "runner": "V1",
    "steps": 3,
    "topk": 1,
    "draft_tokens": 4,
    "block_flag": 8,
    "gamma_flag": 8,
    "window": 8,
    "block": 8,
    "full": 7,
}


def _representative(cls: DraftClass, flag: bool, index: int) -> dict:
    """A config namespace as the class builds it from a well-formed checkpoint: every field its default, or a
    sane size where the default is none; the checkpoint facts all `flag`; layer and aux index `index`."""
    ns = {"Vt": 32000, "Nt": 8, "Et": 8, "i": index, "j": index}
    ns |= {name: flag for name in ROW_NAMES if name.startswith("has_")}
    for f in cls.fields:
        if f.kind == "int":
            ns[f.name] = f.default if type(f.default) is int else 8
        elif f.kind == "bool":
            ns[f.name] = f.default if isinstance(f.default, bool) else flag
        else:
            ns[f.name] = f.default
    for d in cls.derive:
        ns[d.name] = value_or(d.expr, ns, None)
    return ns | LAUNCH_NAMES


@pytest.mark.parametrize("where, cls", CLASSES, ids=[f"{w} {c.name}" for w, c in CLASSES])
def test_every_row_expression_evaluates_over_a_representative_config(where, cls):
    """No row is broken today: each expression, launch checks included, gives a value or "no value" over a
    well-formed config (both settings of the checkpoint facts, the first and a later layer), never a RowError."""
    rows = _expressions(cls) + [(f"launch check {k.code}", k.when) for k in cls.launch_checks]
    valued = 0
    for flag, index in ((False, 0), (True, 1)):
        ns = _representative(cls, flag, index)
        for at, src in rows:
            try:
                got = value_or(src, ns, None)
            except RowError as e:
                pytest.fail(f"{where} {cls.name} {at}: {e}")
            valued += got is not None
    assert valued >= len(rows)  # the namespace is representative: most rows give a value, not "no value"


@pytest.mark.parametrize(
    "src, ns",
    [
        ("2 * H", {"H": None}),  # the config lacks the key
        ("2 * H", {"H": "4096"}),  # a string where a number is expected
        ("H // n", {"H": 8, "n": 0}),  # the config's zero
        ("H > 0", {"H": None}),
        ("H > 0", {"H": "big"}),
        ("len(ids) > 1", {"ids": 3}),  # a number where a list is expected
        ("types[i] == 'mlp'", {"types": None, "i": 0}),
        ("-H", {"H": "x"}),
        ("min(a, b)", {"a": None, "b": 3}),
    ],
)
def test_a_config_value_missing_or_ill_typed_is_no_value(src, ns):
    """No value: the caller's default, or None carried through the arithmetic (2 * a missing size)."""
    assert value_or(src, ns, "default") in ("default", None)


@pytest.mark.parametrize(
    "src, ns, said",
    [
        ("H + not_a_key", {"H": 8}, "unknown name 'not_a_key'"),  # a name no config key holds
        ("H +* 2", {"H": 8}, "syntax error"),
        ("min()", {}, "min() takes 1 or more"),
        ("len(ids, 2)", {"ids": (1,)}, "len() takes 1"),
        ("H * 'x'", {"H": 8}, "non-integer operand"),  # the row's own operand
        ("H // 0", {"H": 8}, "division by zero"),
        ("'a' < 3", {}, "cannot compare"),
        ("(1, 2)[5]", {}, "no entry 5"),
        ("H ** 2", {"H": 8}, "unsupported expression"),
    ],
)
def test_an_error_in_the_row_itself_is_a_row_error(src, ns, said):
    with pytest.raises(RowError) as raised:
        value_or(src, ns, None)
    assert said in str(raised.value)


def _broken_raise(monkeypatch, when: str):
    """The latest vLLM EAGLE-3 class with one more Raise row, whose expression is `when`."""
    from specbridge.engines import vllm
    from specbridge.engines.spec import Raise
    from specbridge.record import replace

    era = vllm.ERAS[-1]
    cls = era.classes["Eagle3LlamaForCausalLM"]
    broken = replace(cls, raises=(*cls.raises, Raise(when, "never raised by the engine", "a test row")))
    monkeypatch.setitem(era.classes, "Eagle3LlamaForCausalLM", broken)
    return era


def test_a_raise_row_that_raises_is_a_row_error_naming_its_table_and_row(monkeypatch):
    """A Raise row whose function is misused used to read as "does not raise" (a TypeError taken for no value)."""
    from conftest import STORY

    era = _broken_raise(monkeypatch, "len(Ht_key, 1) > 0")
    with pytest.raises(RowError) as raised:
        simulate(open_view(STORY), era, "0.32.0")
    said = str(raised.value)
    assert "specbridge/engines/vllm/eagle3.py" in said and "Eagle3LlamaForCausalLM" in said and "len(Ht_key, 1) > 0" in said


def test_check_reports_a_broken_row_as_an_internal_error(monkeypatch, capsys):
    """`check` fails with exit 3 (a bug of ours), one line naming the row and its table file."""
    from conftest import STORY

    from specbridge.cli import entry

    _broken_raise(monkeypatch, "Ht_key * 'x'")
    monkeypatch.delenv("SPECBRIDGE_DEBUG", raising=False)
    monkeypatch.setattr("sys.argv", ["specbridge", "check", str(STORY), "--engine", "vllm==0.32.0"])
    with pytest.raises(SystemExit) as exited:
        entry.main()
    assert exited.value.code == 3
    err = capsys.readouterr().err
    assert "internal error: RowError" in err and "specbridge/engines/vllm/eagle3.py" in err and "Ht_key * 'x'" in err
