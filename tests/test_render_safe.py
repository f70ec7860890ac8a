"""Human reports print untrusted text as written: a tensor name, a config value, an architecture or a
target string holding rich markup (`[/]` closes nothing: MarkupError, exit 3 before) or mathtext."""

from __future__ import annotations

import io

import pytest
from conftest import SF_SGLANG, SPEC_TRAIN, TINY_TARGET, mutate, run_cli
from rich.console import Console

from specbridge.display import markup_safe, plot_safe

HOSTILE = ["[/]", "a[/red]b", "[bold]x[/bold]", "x\\", "\\[/]", ":x:", "[link=http://x]y"]


def hostile_drafter(tmp_path, src=SPEC_TRAIN):
    """Every place a user's checkpoint puts text: a tensor name, a config value, the architecture."""

    def rename(t):
        t["fc.weight[/]"] = t.pop("fc.weight")
        return t

    def config(c):
        c["architectures"] = ["Eagle3DraftModel[/]"]
        c["model_type"] = "[bold]llama[/red]"

    return mutate(src, tmp_path / "d[/]", tensors=rename, config=config)


@pytest.mark.parametrize("text", HOSTILE)
def test_markup_safe_prints_the_text_as_written(text):
    c = Console(file=io.StringIO(), width=400, color_system=None, emoji=False)
    c.print(f"[bold]{markup_safe(text)}[/] and more")
    assert c.file.getvalue() == f"{text} and more\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect"],
        ["check"],
        ["check", "--engine", "sglang==0.5.11", "-v"],
        ["check", "--engine", "vllm", "-v"],
    ],
)
def test_human_reports_print_hostile_names(tmp_path, argv):
    d = hostile_drafter(tmp_path)
    r = run_cli(argv[0], d, *argv[1:])
    assert r.returncode in (0, 1), r.stderr
    assert "internal error" not in r.stderr
    assert "d[/]" in r.stdout  # the path, as written
    if argv != ["check"]:  # the all-eras summary lists failing eras' findings, not every tensor
        assert "fc.weight[/]" in r.stdout


def test_convert_report_prints_hostile_names(tmp_path):
    refused = run_cli("convert", hostile_drafter(tmp_path, SF_SGLANG), "--to", "speculators", "-o", tmp_path / "o1")
    assert refused.returncode in (1, 2) and "(fc.weight[/])" in refused.stderr  # an unknown tensor, named as written
    d = mutate(SF_SGLANG, tmp_path / "src[/]", config=lambda c: c.update(model_type="[bold]llama[/red]"))
    r = run_cli("convert", d, "--to", "speculators", "-o", tmp_path / "out[/]", "--target", TINY_TARGET)
    assert r.returncode in (0, 1), r.stderr
    assert "internal error" not in r.stderr and "src[/]" in r.stdout and "out[/]" in r.stdout


def test_eval_summary_escapes_paths_engine_and_notes():
    from specbridge.cli.eval_common import print_summary

    c = Console(file=io.StringIO(), width=400, color_system=None, emoji=False)
    out = {
        "mean_accept_length": 1.5,
        "num_prompts": 1,
        "drafts": 2,
        "draft_acceptance_rate": 0.25,
        "per_position": [0.5, 0.0],
        "per_prompt": [1.5],
    }
    print_summary(c, out, "d[/]", "t[/red]", {"name": "[/]", "version": "0.1"}, 2, 1, ["note [bold]x[/]"])
    text = c.file.getvalue()
    assert "d[/] on t[/red] as [/] 0.1 loads it" in text and "note: note [bold]x[/]" in text


def test_plot_text_is_never_mathtext(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for text in ("$\\frac{$", "$$", "a$b$c", "$\\undefined$"):
        fig, ax = plt.subplots()
        ax.set_title(plot_safe(text))
        fig.savefig(tmp_path / "p.png")  # mathtext would raise ValueError here
        assert ax.title.get_text().replace("\\$", "$") == text
        plt.close(fig)


def test_bench_report_prints_server_text_as_written(tmp_path):
    pytest.importorskip("httpx")
    from specbridge.bench.report import plot, render
    from specbridge.bench.runner import BenchConfig, BenchReport, LevelResult, ServerRun

    cfg = BenchConfig(url="http://h[/]", prompts=["p"], prompts_source="p[/red].jsonl", concurrency=[1])
    spec = ServerRun("spec", cfg.url, model="m[/]$\\frac{$", note="n[bold]", levels=[LevelResult(1, 1, 1, 1.0, 10)])
    rep = BenchReport(cfg, [spec], error="HTTP 500: [/]")
    c = Console(file=io.StringIO(), width=400, color_system=None, emoji=False)
    render(rep, c)
    text = c.file.getvalue()
    for s in ("http://h[/]", "m[/]$\\frac{$", "p[/red].jsonl", "note: n[bold]", "FAILED: HTTP 500: [/]"):
        assert s in text
    if pytest.importorskip("matplotlib"):
        plot(rep, tmp_path / "b.png")  # the model name is a legend label: no mathtext
        assert (tmp_path / "b.png").stat().st_size > 0
