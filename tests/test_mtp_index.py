"""A large target index over the Hub is searched by range reads, not downloaded (issue #24 item 1: a DeepSeek-V3
target in under 2 MB): the weight_map entries under the MTP head's prefixes, found by binary search in the sorted
index transformers writes; the same head as a full read; the whole index read, and said, when it is not sorted,
not laid out one entry a line, or the config does not announce MTP."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from specbridge.checkpoint.errors import CheckpointError
from specbridge.checkpoint.index import PARTIAL_FROM_BYTES
from specbridge.checkpoint.index_search import IndexSearchError, search_index
from specbridge.checkpoint.source import LocalSource

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_mtp_index import build, layer_tensors, write_shard  # noqa: E402

sys.path.pop(0)

LAYERS = 10  # decoder layers 0..9 with 256 experts: ~15 k entries, a 1.6 MB index; layer 10 is the MTP layer
INDEX = "model.safetensors.index.json"


def sb(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specbridge", *map(str, args)], capture_output=True, text=True, timeout=300, env=env, check=False
    )


def deepseek(root: Path, **over) -> Path:
    """DeepSeek-V3's layout: the MTP layer carries copies of the embedding and head."""
    d = build(root, layers=LAYERS, experts=256, dense=1, shards=20)
    if over:
        cfg = json.loads((d / "config.json").read_text()) | over
        (d / "config.json").write_text(json.dumps(cfg, indent=2))
    return d


def deepseek_like(big: Path, root: Path, **over) -> Path:
    """deepseek(root, **over) from the module's `big` one: the same shards (hard links: they are only read), its own
    config and index. Where hard links cannot be made, deepseek(root, **over) itself (the shards are sparse: a copy
    would write their ~120 GB)."""
    root.mkdir(parents=True)
    try:
        for f in big.iterdir():
            if f.suffix == ".safetensors":
                os.link(f, root / f.name)
            else:
                shutil.copyfile(f, root / f.name)
    except OSError:
        shutil.rmtree(root)
        return deepseek(root, **over)
    if over:
        cfg = json.loads((root / "config.json").read_text()) | over
        (root / "config.json").write_text(json.dumps(cfg, indent=2))
    return root


def glm(root: Path) -> Path:
    """GLM-4.5's layout: the MTP layer without embedding or head copies."""
    p = f"model.layers.{LAYERS}."
    d = build(root, layers=LAYERS, experts=256, dense=1, shards=20, drop=(p + "embed_tokens.", p + "shared_head.head."))
    cfg = json.loads((d / "config.json").read_text()) | {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe"}
    (d / "config.json").write_text(json.dumps(cfg, indent=2))
    return d


def qwen3_next(root: Path) -> Path:
    """Qwen3-Next's layout: mtp.layers.0.* and the module's mtp.fc / pre_fc_norm_* / norm beside the decoder."""

    def bf16(names):  # small BF16 weights (no FP8 block scales)
        return [(n, "BF16", [8]) for n, _, _ in names if not n.endswith("_scale_inv")]

    tensors = [("model.embed_tokens.weight", "BF16", [64, 8])]
    for i in range(2 * LAYERS):  # without block scales: twice the layers for an index over 1 MB
        tensors += bf16(layer_tensors(i, 256, 0))
    tensors += [("model.norm.weight", "BF16", [8]), ("lm_head.weight", "BF16", [64, 8])]
    tensors += [(f"mtp.{n}.weight", "BF16", [8]) for n in ("fc", "pre_fc_norm_embedding", "pre_fc_norm_hidden", "norm")]
    tensors += [(n.replace("model.layers.0.", "mtp.layers.0."), dt, shape) for n, dt, shape in bf16(layer_tensors(0, 8, 0))]
    cfg = {
        "architectures": ["Qwen3NextForCausalLM"],
        "model_type": "qwen3_next",
        "hidden_size": 8,
        "num_hidden_layers": 2 * LAYERS,
        "num_nextn_predict_layers": 1,
        "vocab_size": 64,
    }
    return write_target(root, cfg, tensors, shards=20)


def write_target(root: Path, config: dict, tensors: list, shards: int, sort_keys: bool = True, indent: int | None = 2) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    per = -(-len(tensors) // shards)
    wmap = {}
    for k in range(shards):
        part = tensors[k * per : (k + 1) * per]
        name = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        write_shard(root / name, part)
        wmap |= dict.fromkeys((t[0] for t in part), name)
    (root / "config.json").write_text(json.dumps(config, indent=2))
    (root / INDEX).write_text(json.dumps({"metadata": {"total_size": 1}, "weight_map": wmap}, indent=indent, sort_keys=sort_keys))
    return root


def rewrite_index(d: Path, shard_order: bool = False, **dumps) -> None:
    """The index written again; `shard_order`: its names in the order the shards hold them (DeepSeek's own index
    is written so), not sorted."""
    index = json.loads((d / INDEX).read_text())
    if shard_order:
        wmap = index["weight_map"]
        index["weight_map"] = {n: f for f in sorted(set(wmap.values())) for n in json.loads(header_text(d / f)) if n in wmap}
    (d / INDEX).write_text(json.dumps(index, **dumps))


def header_text(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(struct.unpack("<Q", f.read(8))[0])


def over_hub(d: Path, tmp_path: Path, *args) -> tuple[subprocess.CompletedProcess, int]:
    """`specbridge ARGS` with the target served as org/t by the Hub stand-in (cold cache); (result, bytes served)."""
    pytest.importorskip("huggingface_hub")
    from hubserver import FakeHub, make_repo

    with FakeHub({"org/t": make_repo(d)}) as hub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
        env |= {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}
        r = sb(*args, env=env)
        return r, hub.stats.body_bytes


def head_json(j: dict) -> dict:
    """The MTP section without what depends on how it was read."""
    return {k: v for k, v in j["mtp"].items() if k not in ("evidence", "bytes_read", "headers_read")}


# --- the search itself, on a file --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    return deepseek(tmp_path_factory.mktemp("big") / "ds")


def test_search_finds_exactly_the_entries_under_each_prefix(big):
    full = json.loads((big / INDEX).read_text())["weight_map"]
    names = sorted(full)
    prefixes = ("model.layers.10.", "model.layers.3.mlp.experts.17.", "mtp.", "model.layers.1.self_attn.", names[0], names[-1][:-3])
    exact = ("lm_head.weight", "model.embed_tokens.weight", "model.layers.99.enorm.weight", names[-1], names[0])
    got = search_index(LocalSource.of(big / INDEX), prefixes, exact)
    want = {n: f for n, f in full.items() if n.startswith(prefixes) or n in exact}
    assert got.weight_map == want
    assert len(want["model.layers.10.enorm.weight"]) and not any(n.startswith("mtp.") for n in got.weight_map)
    assert got.metadata == json.loads((big / INDEX).read_text())["metadata"]
    size = (big / INDEX).stat().st_size
    assert size > PARTIAL_FROM_BYTES and got.size == size
    assert got.bytes_read < size // 3, (got.bytes_read, size)  # a binary search, not a scan


def test_an_unsorted_or_compact_index_is_refused_by_the_search(big, tmp_path):
    d = deepseek_like(big, tmp_path / "ds")
    rewrite_index(d, shard_order=True, indent=2)  # transformers' layout, but names in the order the shards hold them
    with pytest.raises(IndexSearchError, match="out of order"):
        search_index(LocalSource.of(d / INDEX), ("model.layers.10.",), ())
    rewrite_index(d, sort_keys=True)  # one line: no line breaks to search by
    with pytest.raises(IndexSearchError, match="line break"):
        search_index(LocalSource.of(d / INDEX), ("model.layers.10.",), ())


SMALL = {f"model.layers.{i}.x{j}": f"s{i % 7}" for i in range(300) for j in range(40)}
LAYOUT_CASES = {
    "sorted, indent 2": (json.dumps({"metadata": {"a": 1}, "weight_map": SMALL}, indent=2, sort_keys=True), None),
    "tabs and CRLF": (json.dumps({"metadata": {}, "weight_map": SMALL}, indent="\t", sort_keys=True).replace("\n", "\r\n"), None),
    "no metadata": (json.dumps({"weight_map": dict(sorted(SMALL.items()))}, indent=2), None),
    "metadata after": (json.dumps({"weight_map": dict(sorted(SMALL.items())), "metadata": {"f": "pt"}}, indent=2), "trailing comma"),
    "another key after": (json.dumps({"metadata": {}, "weight_map": dict(sorted(SMALL.items())), "x": 1}, indent=2), "does not end"),
    "one line": (json.dumps({"metadata": {}, "weight_map": SMALL}, sort_keys=True), "line break"),
}


@pytest.mark.parametrize("case", sorted(LAYOUT_CASES))
def test_index_layouts_are_searched_or_refused(case, tmp_path):
    text, refusal = LAYOUT_CASES[case]
    (tmp_path / INDEX).write_text(text)
    src = LocalSource.of(tmp_path / INDEX)
    if refusal:
        with pytest.raises(IndexSearchError, match=refusal):
            search_index(src, ("model.layers.61.", "zzz."), ("lm_head.weight",))
        return
    got = search_index(src, ("model.layers.61.", "zzz."), ("lm_head.weight",))
    assert got.weight_map == {k: v for k, v in SMALL.items() if k.startswith("model.layers.61.")}


class FailingSource:
    """A file whose range reads fail after the first few (a connection that drops mid-search)."""

    def __init__(self, path: Path, ok: int):
        self.inner, self.ok = LocalSource.of(path), ok
        self.path, self.size = self.inner.path, self.inner.size

    def pread(self, offset: int, n: int) -> bytes:
        self.ok -= 1
        if self.ok < 0:
            raise CheckpointError(self.path, "connection reset")
        return self.inner.pread(offset, n)


@pytest.mark.parametrize("ok", [0, 1, 3, 9])
def test_a_failed_range_read_fails_the_search_without_hanging(big, ok):
    with pytest.raises(CheckpointError, match="connection reset"):
        search_index(FailingSource(big / INDEX, ok), ("model.layers.10.", "mtp.", "model.mtp."), ("lm_head.weight",))


# --- through inspect over the Hub stand-in ----------------------------------------------------------------


@pytest.mark.parametrize("make, style", [(deepseek, "layers-after-decoder"), (glm, "layers-after-decoder"), (qwen3_next, "mtp-module")])
def test_the_hub_search_gives_the_head_a_full_read_gives(make, style, tmp_path):
    d = make(tmp_path / "t")
    size = (d / INDEX).stat().st_size
    assert size > PARTIAL_FROM_BYTES
    local = run_cli("inspect", d, "--json")
    assert local.returncode == 0, local.stderr
    r, served = over_hub(d, tmp_path, "inspect", "org/t", "--json")
    assert r.returncode == 0, r.stderr
    got, want = json.loads(r.stdout), json.loads(local.stdout)
    assert got["mtp"]["style"] == style and got["mtp"]["found"] == 1
    assert head_json(got) == head_json(want)  # same layers, parts, names, dtypes and shapes
    assert got["family"]["name"] == want["family"]["name"] == "mtp"
    assert got["target"]["index_partial"] is True and got["target"]["tensors"] is None
    assert not want["target"]["index_partial"] and want["target"]["tensors"] > 10_000
    assert any("read in part" in e for e in got["mtp"]["evidence"])
    assert got["mtp"]["bytes_read"] < served < size // 2, (served, size)  # a fraction of the index alone


def test_check_over_the_hub_reads_the_index_in_part_with_the_same_findings(big, tmp_path):
    local = run_cli("check", big, "--engine", "vllm==0.20.0", "--json")
    r, served = over_hub(big, tmp_path, "check", "org/t", "--engine", "vllm==0.20.0", "--json")
    assert r.returncode == local.returncode, (r.stderr, local.stderr)
    got, want = json.loads(r.stdout), json.loads(local.stdout)
    assert got["layout"] == want["layout"] == "mtp"
    assert (got["load"], got["findings"]) == (want["load"], want["findings"])
    assert any("read in part" in e for e in got["mtp"]["evidence"]), got.keys()
    assert served < (big / INDEX).stat().st_size // 2


def test_the_human_output_says_the_index_was_read_in_part(big, tmp_path):
    r, _ = over_hub(big, tmp_path, "inspect", "org/t")
    assert r.returncode == 0, r.stderr
    assert "index read in part:" in r.stdout and f"{INDEX} read in part:" in r.stdout
    assert "shard header(s) of the" in r.stdout and "the entries read name" in r.stdout
    r, _ = over_hub(big, tmp_path, "check", "org/t", "--engine", "vllm==0.20.0")
    assert r.returncode == 0, r.stderr
    assert f"{INDEX} read in part:" in r.stdout


def test_an_unsorted_index_is_read_whole_and_says_so(big, tmp_path):
    d = deepseek_like(big, tmp_path / "ds")
    rewrite_index(d, shard_order=True, indent=2)
    r, served = over_hub(d, tmp_path, "inspect", "org/t", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["target"]["index_partial"] is False and j["mtp"]["found"] == 1
    assert any("read whole: the range search gave up" in e and "out of order" in e for e in j["mtp"]["evidence"])
    assert served > (d / INDEX).stat().st_size


def test_without_an_announcement_the_whole_index_is_read(big, tmp_path):
    d = deepseek_like(big, tmp_path / "ds", num_nextn_predict_layers=0)
    r, served = over_hub(d, tmp_path, "inspect", "org/t", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["target"]["index_partial"] is False and j["mtp"]["found"] == 1  # found from the MTP-only parts
    assert any("read whole: the config announces no MTP layers" in e for e in j["mtp"]["evidence"])
    assert served > (d / INDEX).stat().st_size


def test_a_layer_past_those_announced_means_the_whole_index(big, tmp_path):
    d = deepseek_like(big, tmp_path / "ds", num_hidden_layers=LAYERS - 1)  # one MTP layer announced at 9; layer 10 is past it
    r, _ = over_hub(d, tmp_path, "inspect", "org/t", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["target"]["index_partial"] is False and j["mtp"]["extra_layers"] == [LAYERS]
    assert any(f"entries under model.layers.{LAYERS}., past what the config announces" in e for e in j["mtp"]["evidence"])
