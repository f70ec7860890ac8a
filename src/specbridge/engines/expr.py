"""A tiny, safe expression language for engine tables ("2*H if i == 0 else H").

Shapes and conditions in the tables stay one readable line of data; this evaluates them without
`eval`, over a namespace of config-derived numbers and flags.

Two failures, told apart here and nowhere else: a value the namespace holds that cannot take part (a config key
the checkpoint lacks is None; a string where a number is expected) is ExprError, "no value", and `value_or`
turns it into the caller's default; an error in the row itself (an unknown name, syntax outside the grammar, a
function given the wrong number of arguments, an operation that fails on the row's own literals) is RowError,
which no caller turns into False or None: it propagates, and `row_context` names the table file it came from.
"""

from __future__ import annotations

import _ast as ast  # the node classes (C): ast.py itself, its visitors and unparser, is a millisecond of every check
import contextlib
import functools
import operator
from collections.abc import Callable, Iterator

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
# lower: a config string as an engine compares it after `str(value).lower()` (SGLang's and TensorRT-LLM's DSpark
# markov_head_type)
_FUNCS = {"len": len, "min": min, "max": max, "bool": bool, "lower": lambda v: str(v).lower()}
# how many arguments each function takes (least, most): a call outside them is the row's misuse
_ARITY = {"len": (1, 1), "min": (1, None), "max": (1, None), "bool": (1, 1), "lower": (1, 1)}


class ExprError(ValueError):
    """The expression cannot be evaluated over these values (a config value of the wrong kind): a data problem."""


class RowError(Exception):
    """The expression itself is wrong (a name no field or derive defines, syntax outside the grammar, a function
    misused, an operation its own literals cannot take): a bug in a table row, never turned into False or None by
    its callers. Not a ValueError: no handler of unusable input (exit 2) takes it; it reaches the CLI's internal
    error (exit 3). `where`: the table file (and row) it came from, once a caller knows it."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.message, self.where = message, where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


@functools.lru_cache(maxsize=1024)
def _parse(src: str) -> ast.expr:
    try:
        return compile(src, "<row>", "eval", ast.PyCF_ONLY_AST).body  # ast.parse(src, mode="eval")
    except SyntaxError as e:
        raise RowError(f"syntax error in {src!r}: {e.msg}") from None


def evaluate(src: str, ns: dict):
    """Evaluate `src` over `ns`. Raises ExprError when a value of `ns` cannot take part (no value), RowError when
    the row is wrong; never a bare TypeError or ZeroDivisionError."""
    return _eval(_parse(src), ns, src)


def value_or(src: str, ns: dict, default):
    """`src`'s value over `ns`, or `default` when the namespace's values give none (a config key absent, a value
    of the wrong kind). The one place "no value" is decided: a RowError (the row is wrong) propagates."""
    try:
        return evaluate(src, ns)
    except ExprError:  # a RowError is no ExprError: it propagates
        return default


@contextlib.contextmanager
def row_context(where: str | Callable[[], str]) -> Iterator[None]:
    """Name where a RowError raised inside comes from: the outer context (the table file and class) before the
    inner one (the row: `derive Vd`, `launch check '...'`). `where` may be a function that finds it, called only
    when a RowError is raised (finding a class's table file searches the loaded tables)."""
    try:
        yield
    except RowError as e:
        if callable(where):
            where = where()
        e.where = f"{where}: {e.where}" if e.where else where
        raise


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node`, itself included (ast.walk's nodes, in another order)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for name in n._fields:
            v = getattr(n, name, None)
            if isinstance(v, ast.AST):
                todo.append(v)
            elif isinstance(v, list):
                todo.extend(x for x in v if isinstance(x, ast.AST))


def _source(node: ast.AST, src: str) -> str:
    """The part of the row a node was parsed from (its one line; rows are single expressions)."""
    start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    return src[start:end] if start is not None and end is not None else src


def _reads_names(node: ast.expr) -> bool:
    """Whether the subexpression reads the namespace (a config value) or is the row's own literals alone."""
    return any(isinstance(n, ast.Name) for n in _walk(node) if not _is_func_name(node, n))


def _is_func_name(root: ast.expr, name: ast.AST) -> bool:
    return any(isinstance(c, ast.Call) and c.func is name for c in _walk(root))


def _blame(nodes: list[ast.expr], src: str, what: str) -> ExprError:
    """A failed operation is the config's (no value) when an operand reads the namespace, else the row's."""
    if any(_reads_names(n) for n in nodes):
        return ExprError(f"{what} in {src!r}")
    return RowError(f"{what} in {src!r}")


def _eval(node: ast.expr, ns: dict, src: str):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in ns:
            raise RowError(f"unknown name {node.id!r} in {src!r}")
        return ns[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        a, b = _eval(node.left, ns, src), _eval(node.right, ns, src)
        bad = [n for n, v in ((node.left, a), (node.right, b)) if type(v) is not int]
        if any(not _reads_names(n) for n in bad):  # the row's own operand, whatever the config holds
            raise RowError(f"non-integer operand in {src!r}")
        if a is None or b is None:  # a size the config does not give: no value
            return None
        if bad:  # config values are untrusted: no str * int, no floats
            raise ExprError(f"non-integer operand in {src!r}")
        if b == 0 and type(node.op) in (ast.FloorDiv, ast.Mod):
            raise _blame([node.right], src, "division by zero")
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, ns, src)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _eval(node.operand, ns, src)
        if v is None:
            return None
        if type(v) is not int:
            raise _blame([node.operand], src, "non-integer operand")
        return -v
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, ns, src) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, ns, src)
        left_node = node.left
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, ns, src)
            if type(op) not in _CMP:
                raise RowError(f"unsupported comparison {type(op).__name__} in {src!r}")
            try:
                holds = _CMP[type(op)](left, right)
            except TypeError:  # None < 3, 'a' < 3, 3 in 4
                raise _blame([left_node, comp], src, f"cannot compare {left!r} and {right!r}") from None
            if not holds:
                return False
            left, left_node = right, comp
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, ns, src) if _eval(node.test, ns, src) else _eval(node.orelse, ns, src)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _call(node, ns, src)
    if isinstance(node, ast.Subscript):  # a config list's entry (`mlp_layer_types[i]`); no slices
        seq, idx = _eval(node.value, ns, src), _eval(node.slice, ns, src)
        if not isinstance(seq, (list, tuple)) or type(idx) is not int or not 0 <= idx < len(seq):
            raise _blame([node.value, node.slice], src, f"no entry {idx!r}")
        return seq[idx]
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_eval(e, ns, src) for e in node.elts)
    raise RowError(f"unsupported expression {type(node).__name__} {_source(node, src)!r} in {src!r}")


def _call(node: ast.Call, ns: dict, src: str):
    """One of the few functions: the wrong number of arguments is the row's misuse; a failure on the values the
    arguments hold (len of a number, min of an empty list) is blamed like any operation."""
    name = node.func.id
    least, most = _ARITY[name]
    if any(isinstance(a, ast.Starred) for a in node.args) or len(node.args) < least or (most is not None and len(node.args) > most):
        raise RowError(f"{name}() takes {least}{'' if most == least else ' or more'} argument(s) in {src!r}")
    args = [_eval(a, ns, src) for a in node.args]
    try:
        return _FUNCS[name](*args)
    except (TypeError, ValueError):
        raise _blame(node.args, src, f"{name}() of {', '.join(repr(a)[:40] for a in args)}") from None


def names(src: str) -> set[str]:
    """Every name an expression reads (to check a table's rows against the namespace their class builds)."""
    return {n.id for n in _walk(_parse(src)) if isinstance(n, ast.Name)} - set(_FUNCS)
