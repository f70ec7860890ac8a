"""`specbridge engines` lists every drafter family's release ranges, named as `check` names them, from the tables
`check` answers from: a family's era printed by check is one `engines` lists."""

from __future__ import annotations

import json

import dflash_fixtures as df

from specbridge.cli.engines_cmd import engines_cmd
from specbridge.engines.registry import DRAFT_MODEL, ENGINES, FAMILY_RANGES
from specbridge.families.table import BY_NAME
from specbridge.rules.check import check_family
from specbridge.view import open_view


def engines_json(capsys) -> dict:
    assert engines_cmd(as_json=True) == 0
    return json.loads(capsys.readouterr().out)


def test_every_family_range_and_draft_model_range_is_listed(capsys):
    body = engines_json(capsys)
    listed = {(r["engine"], r["family"], r["first"]) for r in body["families"]}
    tabled = {(e, r.family, r.first) for e, rows in FAMILY_RANGES.items() for r in rows}
    tabled |= {(e, "draft_model", d.first) for e, rows in DRAFT_MODEL.items() for d in rows}
    assert listed == tabled and len(body["families"]) == len(tabled)
    assert len(body["eras"]) == sum(len(e) for e in ENGINES.values()) and {r["family"] for r in body["eras"]} == {"eagle3"}
    not_modelled = [r for r in body["families"] if r["status"] != "modelled"]
    assert not_modelled and all(r["why"] for r in not_modelled)  # a range not modelled says why


def test_the_era_check_prints_for_a_family_is_the_one_engines_lists(tmp_path, capsys):
    view = open_view(df.write(tmp_path / "dflash-drafter"))
    results, _ = check_family(view, "all", BY_NAME["dflash"])
    printed = {(r.report.engine, r.report.era.name) for r in results}
    assert ("vllm", "dflash 0.31.0+") in printed
    listed = {(r["engine"], r["era"]) for r in engines_json(capsys)["families"] if r["family"] == "dflash"}
    assert printed <= listed
    assert engines_cmd(as_json=False) == 0
    text = capsys.readouterr().out
    assert all(era in text for _, era in printed) and "draft_model" in text and "mtp 0.32.0+" in text
