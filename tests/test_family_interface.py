"""Every command reaches a family through its row (families/table.py), never by its name: no `==`, `!=`, `in` or
`not in` or `case` against a family name, no dict keyed by one, no tuple, set or list of two or more, in the code of cli/,
convert/, eval/, rules/ and conformance/ (verify). A family added as a row is then answered or refused by every command without an edit
there (tests/test_family_matrix.py runs each family × each command).

Read from the source with `ast`: nothing of the package is imported but the family table itself."""

from __future__ import annotations

import ast
from pathlib import Path

from specbridge.families.table import FAMILIES, readers

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "specbridge"
SCOPES = ("cli", "convert", "eval", "rules", "conformance")
NAMES = {f.name for f in FAMILIES}

# (file under src/specbridge, string): why that string there is not a branch on a family. Kept as short as it goes.
ALLOWED = {
    # LAYOUT_ENGINE is keyed by layout name (layouts/table.py), and two layouts are spelled like families: the EAGLE
    # repo's "eagle" layout (an EAGLE-3 layout) and z-lab's "dflash" layout
    ("convert/plan.py", "eagle"): "layout name",
    ("convert/plan.py", "dflash"): "layout name",
    # DFLASH_LAYOUTS is keyed by that layout name; _dflash_config reads a config's speculators_model_type value
    ("convert/dflash.py", "dflash"): "layout name; a config value read",
    # check's and inspect's JSON output carry the head's description under the field "mtp" (cli/contract.py schema)
    ("cli/mtp_check.py", "mtp"): "JSON field",
    ("cli/mtp_inspect.py", "mtp"): "JSON field",
    # the vLLM harness runs inside vLLM's process and knows a drafter by vLLM's module name (models/llama_eagle.py)
    ("conformance/vllm_loader.py", "eagle"): "a vLLM module name's substring",
}


def _names_in(node: ast.AST) -> list[str]:
    """The family names among a literal's string constants."""
    return [e.value for e in getattr(node, "elts", ()) if isinstance(e, ast.Constant) and e.value in NAMES]


def _rule_scopes(tree: ast.AST) -> set[int]:
    """The ids of the literals that are a rule's `families=` (rules/registry.py rule): a rule registers the families
    it reads as data, as it registers its code, severity and fix; the registry reads them, no command branches."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "rule":
            out |= {id(k.value) for k in node.keywords if k.arg == "families"}
    return out


def branches(path: Path) -> list[tuple[int, str, str]]:
    """(line, family name, what) for each comparison, dict key or literal collection of family names in `path`."""
    tree = ast.parse(path.read_text(), str(path))
    scopes, found = _rule_scopes(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for op, left, right in zip(node.ops, [node.left, *node.comparators], node.comparators):
                if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                    continue
                for side in (left, right):
                    if isinstance(side, ast.Constant) and side.value in NAMES:
                        found.append((node.lineno, side.value, "compared"))
                    if isinstance(op, (ast.In, ast.NotIn)) and side is right:
                        found += [(node.lineno, n, "compared") for n in _names_in(side)]
        elif isinstance(node, ast.MatchValue) and isinstance(node.value, ast.Constant) and node.value.value in NAMES:
            found.append((node.lineno, node.value.value, "matched"))  # `case "eagle3":` is a comparison too
        elif isinstance(node, ast.Dict):
            found += [(node.lineno, k.value, "dict key") for k in node.keys if isinstance(k, ast.Constant) and k.value in NAMES]
        elif isinstance(node, (ast.Tuple, ast.Set, ast.List)) and id(node) not in scopes and len(_names_in(node)) >= 2:
            found += [(node.lineno, n, "listed") for n in _names_in(node)]
    return sorted(set(found))


def _every_branch() -> dict[str, list[tuple[int, str, str]]]:
    out = {}
    for scope in SCOPES:
        for path in sorted((PACKAGE / scope).rglob("*.py")):
            out[path.relative_to(PACKAGE).as_posix()] = branches(path)
    return out


def test_no_command_branches_on_a_family_name():
    bad = [
        f"src/specbridge/{rel}:{line}: {what} {name!r}"
        for rel, found in _every_branch().items()
        for line, name, what in found
        if (rel, name) not in ALLOWED
    ]
    assert not bad, "branch on the family's row (families/table.py), not its name:\n" + "\n".join(bad)


def test_every_allowed_string_is_still_there():
    """An allow-list entry whose string has gone is dropped with it."""
    seen = {(rel, name) for rel, found in _every_branch().items() for _, name, _ in found}
    assert not set(ALLOWED) - seen, sorted(set(ALLOWED) - seen)


def test_the_checker_flags_each_kind_of_branch(tmp_path):
    src = tmp_path / "x.py"
    src.write_text(
        "a = fam.name == 'eagle3'\n"
        "b = fam not in ('medusa',)\n"
        "c = {'dflash': 1}\n"
        "d = ('peagle', 'dspark')\n"
        "e = 'mtp' != x\n"
        "match f:\n    case 'causal_lm':\n        pass\n"
        "ok = ('eagle3', 'tree')\n"  # one family name among other words: not a set of families
        "rule('X000', families=('eagle', 'dflash'))\n"  # a rule's registered families: data the registry reads
    )
    got = {(line, name) for line, name, _ in branches(src)}
    assert got == {(1, "eagle3"), (2, "medusa"), (3, "dflash"), (4, "peagle"), (4, "dspark"), (5, "mtp"), (7, "causal_lm")}


def test_each_command_reads_the_families_its_row_says():
    """The rows name the commands: each family a command reads has a row that says so (families/table.py reads)."""
    assert readers("convert") == ("eagle3", "dflash", "eagle")
    assert set(readers("launch")) == {"eagle3", "peagle", "dflash", "dflash2", "dspark", "eagle"}
    assert set(readers("eval")) == set(readers("launch"))
    assert set(readers("inspect")) == set(readers("check")) == set(readers("launch")) | {"medusa"}
    for f in FAMILIES:
        assert (f.eval_view != "") == ("eval" in f.reads), f.name
        assert f.checker in ("eras", "ranges", "head", "draft_model"), f.name
        if f.convert_planner:  # a planner convert reaches only for a family it reads
            assert "convert" in f.reads and callable(f.convert_plan()), f.name
