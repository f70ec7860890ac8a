"""Every drafter family × every command, through the console entry point: each pair answers (exit 0 or 1) or refuses
in one line (exit 2) naming what the command does not do for the family; none is an internal error (exit 3). The
matrix (tests/family_matrix.py REFUSE) pins which pairs refuse, so a command that stops answering a family, or starts
answering one it refused, fails here. Run with -s to see each row."""

from __future__ import annotations

import importlib.util

import family_matrix as fm
import pytest

TORCH = importlib.util.find_spec("torch") is not None


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    return {f: fm.make(f, root) for f in fm.FAMILIES}


@pytest.mark.parametrize("family", fm.FAMILIES)
def test_every_command_answers_or_refuses_in_one_line(made, tmp_path, family):
    row = {}
    for col in fm.commands(made[family], tmp_path):
        if col == "eval" and TORCH:  # a real measurement: the ml tier's (tests/test_eval*.py)
            continue
        out_dir = tmp_path / col.replace(" ", "-")
        out_dir.mkdir()
        code, out, err = fm.run_entry(fm.commands(made[family], out_dir)[col])
        row[col] = code
        assert code != 3, (family, col, err)
        refused = (family, col) in fm.REFUSE or (col == "eval" and not TORCH)
        if refused:
            lines = err.strip().splitlines()
            assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("specbridge: error: "), (family, col, code, err)
        else:
            assert code in (0, 1) and (out or err), (family, col, code, err)
    print(f"\n{family:10s} " + "  ".join(f"{c}={v}" for c, v in row.items()))


def test_a_refusal_names_the_command_or_what_it_lacks(made, tmp_path):
    """The refusals say what the command does not do for the family, not a generic "not a drafter"."""
    said = {
        ("medusa", "convert"): "convert reads",
        ("medusa", "launch"): "launch reads",
        ("peagle", "convert"): "convert reads",
        ("mtp", "convert"): "convert does not read MTP heads",
        ("mtp", "eval"): "eval does not read MTP heads",
        ("mtp", "launch"): "drop --target",
    }
    for (family, col), words in said.items():
        _, _, err = fm.run_entry(fm.commands(made[family], tmp_path / f"{family}-{col}")[col])
        assert words in err, (family, col, err)
