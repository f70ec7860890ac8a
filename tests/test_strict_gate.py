"""The strict CI gate: `--fail-on warning` fails a check on any warning, so a release newer than every modelled
one (R001: a typo such as `vllm==9.9` lands there too) cannot pass a gate as a plain OK."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import STORY

from specbridge.cli.commands import check_cmd
from specbridge.cli.contract import CliError

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _check(capsys, engine: str, **gate) -> tuple[int, dict]:
    code = check_cmd(STORY, [engine], True, **gate)
    return code, json.loads(capsys.readouterr().out)


def test_a_release_newer_than_every_modelled_one_is_a_warning_that_passes_by_default(capsys):
    code, obj = _check(capsys, "vllm==9.9")  # the story loads on vLLM: only R001 is not information
    [r001] = [f for f in obj["findings"] if f["code"] == "R001"]
    assert code == 0 and obj["ok"] is True and r001["severity"] == "warning"
    assert "specbridge verify" in r001["fix"] and "typo" in r001["fix"]


def test_fail_on_warning_fails_on_it(capsys):
    code, obj = _check(capsys, "vllm==9.9", fail_on=["warning"])
    assert code == 1 and obj["ok"] is False and obj["engine_ok"] is True
    assert obj["gate"] == {"fail_on": ["warning"], "ignore": [], "failing": ["R001"]}
    code, obj = _check(capsys, "vllm==0.32.0", fail_on=["Warning"])  # a modelled release: no warning, the gate passes
    assert code == 0 and obj["ok"] is True and not [f for f in obj["findings"] if f["severity"] == "warning"]


def test_fail_on_takes_codes_and_the_severity_together(capsys):
    code, obj = _check(capsys, "vllm==9.9", fail_on=["warning,L008"])
    assert code == 1 and obj["gate"]["failing"] == ["L008", "R001"]


@pytest.mark.parametrize("gate", [{"fail_on": ["wrning"]}, {"ignore": ["warning"]}])
def test_a_misspelt_severity_and_ignore_warning_are_refused(gate):
    with pytest.raises(CliError) as e:
        check_cmd(STORY, ["vllm==9.9"], True, **gate)
    assert e.value.code == 2
    assert "unknown finding code" in str(e.value)


def test_the_documented_ci_gate_is_the_strict_one():
    text = (DOCS / "ci.md").read_text()
    workflow = text[text.index("```yaml") : text.index("```", text.index("```yaml") + 3)]
    check_step = workflow[workflow.index("specbridge check") :].split("- run:")[0]
    assert "--fail-on warning" in check_step
    assert "`--fail-on warning`" in text and "specbridge verify" in text
