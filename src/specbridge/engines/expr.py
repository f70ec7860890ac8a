"""A tiny, safe expression language for engine tables ("2*H if i == 0 else H").

Shapes and conditions in the tables stay one readable line of data; this evaluates them without
`eval`, over a namespace of config-derived numbers and flags.
"""

from __future__ import annotations

import ast
import functools
import operator

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


class ExprError(ValueError):
    """The expression cannot be evaluated over these values (a config value of the wrong kind): a data problem."""


class RowError(ExprError):
    """The expression itself is wrong (a name no field or derive defines, syntax outside the grammar): a bug in a
    table row, never turned into False or None by its callers."""


@functools.lru_cache(maxsize=1024)
def _parse(src: str) -> ast.expr:
    return ast.parse(src, mode="eval").body


def evaluate(src: str, ns: dict):
    """Evaluate `src` over `ns`. Raises ExprError for anything outside the small grammar."""
    return _eval(_parse(src), ns, src)


def _eval(node: ast.expr, ns: dict, src: str):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in ns:
            raise RowError(f"unknown name {node.id!r} in {src!r}")
        return ns[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        a, b = _eval(node.left, ns, src), _eval(node.right, ns, src)
        if a is None or b is None:
            return None
        if type(a) is not int or type(b) is not int:  # config values are untrusted: no str * int, no floats
            raise ExprError(f"non-integer operand in {src!r}")
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, ns, src)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, ns, src)
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, ns, src) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, ns, src)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, ns, src)
            if type(op) not in _CMP or not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, ns, src) if _eval(node.test, ns, src) else _eval(node.orelse, ns, src)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _FUNCS[node.func.id](*(_eval(a, ns, src) for a in node.args))
    if isinstance(node, ast.Subscript):  # a config list's entry (`mlp_layer_types[i]`); no slices
        seq, idx = _eval(node.value, ns, src), _eval(node.slice, ns, src)
        if not isinstance(seq, (list, tuple)) or type(idx) is not int or not 0 <= idx < len(seq):
            raise ExprError(f"no entry {idx!r} in {src!r}")
        return seq[idx]
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_eval(e, ns, src) for e in node.elts)
    raise RowError(f"unsupported expression {ast.dump(node)[:60]} in {src!r}")


def names(src: str) -> set[str]:
    """Every name an expression reads (to check a table's rows against the namespace their class builds)."""
    return {n.id for n in ast.walk(_parse(src)) if isinstance(n, ast.Name)} - set(_FUNCS)
