"""Hub ids (`org/name[@rev]`) through huggingface_hub's real client, against a local Hub stand-in
(tests/hubserver.py, set through HF_ENDPOINT) that counts every request and byte it serves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SPEC_TRAIN, TINY_TARGET
from hubserver import FakeHub, make_repo

pytest.importorskip("huggingface_hub")

ROOT = Path(__file__).resolve().parent.parent


def cli(hub: FakeHub, cache: Path, *args, offline: bool = False, token: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=hub.url, HF_HUB_CACHE=str(cache), HF_HUB_DISABLE_TELEMETRY="1", HF_TOKEN=token)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "specbridge.cli.entry", *map(str, args)], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def local(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specbridge.cli.entry", *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def same_report(a: str, a_path: str, b: str, b_path: str) -> tuple[dict, dict]:
    """Two JSON reports with the checkpoint's own name (path or Hub id) and the Hub's `source` set aside."""
    ja, jb = json.loads(a.replace(a_path, "CKPT")), json.loads(b.replace(b_path, "CKPT"))
    for j in (ja, jb):
        j.pop("source", None)
        j.pop("target_source", None)
    return ja, jb


def sparse_kimi(root: Path) -> Path:
    """benchmarks/bench_check.py's 4.3 GB Kimi-K2.5 drafter shape: a real header, the data a sparse hole."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_check import build
    finally:
        sys.path.pop(0)
    return build(root, 1)


@pytest.fixture
def spec_hub(tmp_path):
    repo = make_repo(SPEC_TRAIN)
    with FakeHub({"org/spec": repo, "org/tiny-target": make_repo(TINY_TARGET)}) as hub:
        yield hub, repo, tmp_path / "hf-cache"


def test_check_over_the_hub_is_the_local_report_with_the_commit(spec_hub):
    hub, repo, cache = spec_hub
    r = cli(hub, cache, "check", "org/spec", "--engine", "vllm", "--json")
    want = local("check", SPEC_TRAIN, "--engine", "vllm", "--json")
    assert r.returncode == want.returncode, r.stderr
    got, exp = same_report(r.stdout, "org/spec", want.stdout, str(SPEC_TRAIN))
    assert got == exp
    src = json.loads(r.stdout)["source"]
    assert src == {"hub": "org/spec", "revision": "main", "commit": repo.commit, "endpoint": hub.url}
    # weights: only ranges, never the file
    assert all(rng for m, p, rng in hub.stats.requests if p.endswith(".safetensors") and m == "GET")
    human = cli(hub, cache, "check", "org/spec", "--engine", "vllm")
    assert repo.commit in human.stdout


def test_inspect_over_the_hub(spec_hub):
    hub, repo, cache = spec_hub
    r = cli(hub, cache, "inspect", "org/spec", "--json")
    want = local("inspect", SPEC_TRAIN, "--json")
    assert r.returncode == 0, r.stderr
    got, exp = json.loads(r.stdout), json.loads(want.stdout)
    assert got["source"]["commit"] == repo.commit and got["path"] == f"org/spec@{repo.commit}"
    for k in ("layout", "evidence", "geometry", "tensors", "totals", "metadata", "storage"):
        assert got[k] == exp[k], k
    assert repo.commit in cli(hub, cache, "inspect", "org/spec").stdout


def test_check_of_a_4gb_checkpoint_transfers_under_1mb(tmp_path):
    d = sparse_kimi(tmp_path / "src")
    size = (d / "model.safetensors").stat().st_size
    assert size > 4 * 10**9
    with FakeHub({"moonshot/kimi-eagle3": make_repo(d)}) as hub:
        r = cli(hub, tmp_path / "cache", "check", "moonshot/kimi-eagle3", "--engine", "vllm", "--json")
        served, n = hub.stats.body_bytes, len(hub.stats.requests)
    want = local("check", d, "--engine", "vllm", "--json")
    assert r.returncode == want.returncode, r.stderr
    got, exp = same_report(r.stdout, "moonshot/kimi-eagle3", want.stdout, str(d))
    assert got == exp
    print(f"\ncheck of a {size / 1e9:.2f} GB checkpoint over the Hub: {served} bytes served in {n} requests")
    assert served < 1_000_000


def test_offline_uses_the_cache_without_a_request(spec_hub):
    from huggingface_hub import hf_hub_download

    hub, repo, cache = spec_hub
    for name in repo.files:  # as `hf download org/spec` leaves it: blobs, snapshot, refs/main
        hf_hub_download("org/spec", name, cache_dir=str(cache), endpoint=hub.url)
    hub.stats.reset()
    r = cli(hub, cache, "check", "org/spec", "--engine", "vllm", "--json", offline=True)
    want = local("check", SPEC_TRAIN, "--engine", "vllm", "--json")
    assert r.returncode == want.returncode, r.stderr
    got, exp = same_report(r.stdout, "org/spec", want.stdout, str(SPEC_TRAIN))
    assert got == exp and json.loads(r.stdout)["source"]["commit"] == repo.commit
    # online, pinned to the cached commit: no request either
    r2 = cli(hub, cache, "check", f"org/spec@{repo.commit}", "--engine", "vllm", "--json")
    assert r2.returncode == want.returncode, r2.stderr
    assert hub.stats.requests == []


def test_offline_and_not_cached_is_one_line_exit_2(spec_hub):
    hub, _, cache = spec_hub
    r = cli(hub, cache, "check", "org/spec", "--engine", "vllm", offline=True)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "org/spec" in r.stderr and "not in the HF cache" in r.stderr
    assert "Traceback" not in r.stderr and hub.stats.requests == []


def test_unknown_repo_and_revision_are_one_line_exit_2(spec_hub):
    hub, _, cache = spec_hub
    for ident, needle in (("org/nope", "no such repository"), ("org/spec@v9", "no revision 'v9'")):
        r = cli(hub, cache, "inspect", ident)
        assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_hub_target_reads_only_its_config(spec_hub):
    hub, _, cache = spec_hub
    r = cli(hub, cache, "check", SPEC_TRAIN, "--engine", "vllm", "--target", "org/tiny-target", "--json")
    want = local("check", SPEC_TRAIN, "--engine", "vllm", "--target", TINY_TARGET, "--json")
    assert r.returncode == want.returncode, r.stderr
    got, exp = same_report(r.stdout, "org/tiny-target", want.stdout, str(TINY_TARGET))
    assert got == exp
    assert json.loads(r.stdout)["target_source"]["hub"] == "org/tiny-target"
    fetched = {p.rsplit("/", 1)[-1] for m, p, _ in hub.stats.requests if "/resolve/" in p}
    assert fetched == {"config.json"}


def test_convert_streams_from_the_hub(spec_hub, tmp_path):
    hub, repo, cache = spec_hub
    r = cli(hub, cache, "convert", "org/spec", "--to", "sglang", "-o", tmp_path / "from-hub")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "verified: 16/16" in r.stdout and repo.commit in r.stdout
    want = local("convert", SPEC_TRAIN, "--to", "sglang", "-o", tmp_path / "from-local")
    assert want.returncode == 0
    assert (tmp_path / "from-hub" / "model.safetensors").read_bytes() == (tmp_path / "from-local" / "model.safetensors").read_bytes()
    # streamed by range into the writer: no whole-file GET, nothing of the weights in the HF cache
    assert all(rng for m, p, rng in hub.stats.requests if p.endswith(".safetensors") and m == "GET")
    assert not list(cache.rglob("*.safetensors"))


def test_convert_from_the_hub_copies_the_other_files_the_hf_cache_holds(tmp_path):
    """A Hub source's other files come from the HF cache at the commit converted (nothing more is downloaded):
    a cached tokenizer.json is copied byte for byte, an uncached README.md is not, and the note says how to fetch it."""
    from huggingface_hub import hf_hub_download

    src = tmp_path / "src"
    shutil.copytree(SPEC_TRAIN, src)
    (src / "tokenizer.json").write_bytes(b'{"vocab": {}}\r\n')
    (src / "README.md").write_text("# a drafter")
    repo = make_repo(src)
    cache = tmp_path / "hf-cache"
    with FakeHub({"org/side": repo}) as hub:
        hf_hub_download("org/side", "tokenizer.json", cache_dir=str(cache), endpoint=hub.url)
        r = cli(hub, cache, "convert", "org/side", "--to", "sglang", "-o", tmp_path / "out", "--json")
        served = [p for m, p, _ in hub.stats.requests if "/resolve/" in p and m == "GET"]
    assert r.returncode == 0, r.stderr + r.stdout
    out = json.loads(r.stdout)
    assert out["copied"] == ["tokenizer.json"] and (tmp_path / "out" / "tokenizer.json").read_bytes() == b'{"vocab": {}}\r\n'
    assert not (tmp_path / "out" / "README.md").exists() and not any(p.endswith("README.md") for p in served)
    assert any("hf download org/side" in n and repo.commit in n for n in out["notes"])


def test_launch_hands_the_engine_the_repo_id(spec_hub):
    hub, repo, cache = spec_hub
    r = cli(hub, cache, "launch", "org/spec", "--engine", "vllm", "--target", "org/tiny-target", "--json")
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    assert out["source"]["commit"] == repo.commit and out["target_source"]["hub"] == "org/tiny-target"
    if out["command"]:
        assert '"model":"org/spec"' in out["command"] and "org/tiny-target" in out["command"]
    pinned = cli(hub, cache, "launch", f"org/spec@{repo.commit}", "--engine", "vllm", "--target", "org/tiny-target")
    assert pinned.returncode == 2 and "cannot pin revision" in pinned.stderr


def test_sharded_repo_and_token(tmp_path):
    """A sharded safetensors repo: the index through the cache, each shard's header by range; the
    user's token (HF_TOKEN) goes with every request to the Hub."""
    from conftest import raw_tensors, write_raw

    tensors = raw_tensors(SPEC_TRAIN)
    names = list(tensors)
    d = tmp_path / "sharded"
    d.mkdir()
    shards = {"model-00001-of-00002.safetensors": names[:7], "model-00002-of-00002.safetensors": names[7:]}
    for fname, part in shards.items():
        write_raw(d / fname, {n: tensors[n] for n in part})
    wmap = {n: f for f, part in shards.items() for n in part}
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wmap}))
    (d / "config.json").write_text((SPEC_TRAIN / "config.json").read_text())
    with FakeHub({"org/sharded": make_repo(d)}) as hub:
        r = cli(hub, tmp_path / "cache", "inspect", "org/sharded", "--json", token="hf_secret")
        auth = set(hub.stats.authorization)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["storage"] == "safetensors-sharded" and {t["name"] for t in got["tensors"]} == set(names)
    assert auth == {"Bearer hf_secret"}


def _sharded_copy(d: Path, wmap_edit, shard_edit=None) -> Path:
    """SPEC_TRAIN as two shards with an index, the index (and optionally the second shard) then spoiled."""
    from conftest import raw_tensors, write_raw

    tensors = raw_tensors(SPEC_TRAIN)
    names = list(tensors)
    d.mkdir()
    shards = {"model-00001-of-00002.safetensors": names[:7], "model-00002-of-00002.safetensors": names[7:]}
    for fname, part in shards.items():
        held = {n: tensors[n] for n in part}
        write_raw(d / fname, shard_edit(fname, held, tensors) if shard_edit else held)
    wmap = wmap_edit({n: f for f, part in shards.items() for n in part}, names)
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wmap}))
    (d / "config.json").write_text((SPEC_TRAIN / "config.json").read_text())
    return d


def _moved(wmap: dict, names: list[str]) -> dict:
    return {**wmap, names[0]: "model-00002-of-00002.safetensors"}  # the index puts a shard-1 tensor in shard 2


def _unlisted(wmap: dict, names: list[str]) -> dict:
    return {n: f for n, f in wmap.items() if n != names[-1]}  # shard 2 holds a tensor the index leaves out


def _extra_tensor(fname: str, held: dict, tensors: dict) -> dict:
    return {**held, "stray.weight": next(iter(tensors.values()))} if fname == "model-00002-of-00002.safetensors" else held


@pytest.mark.parametrize(
    "wmap_edit,shard_edit,needle",
    [(_moved, None, "but it is in"), (_unlisted, None, "does not list"), (lambda w, n: w, _extra_tensor, "does not list")],
    ids=["wrong-shard", "unlisted-tensor", "tensor-only-in-a-shard"],
)
def test_a_malformed_sharded_checkpoint_fails_alike_on_disk_and_on_the_hub(tmp_path, wmap_edit, shard_edit, needle):
    """One assembly path (checkpoint/assemble.py) for a directory and a Hub repo: the same spoiled shards
    give the same one-line error, the checkpoint's own name aside, both ways."""
    d = _sharded_copy(tmp_path / "bad", wmap_edit, shard_edit)
    on_disk = local("inspect", d)
    with FakeHub({"org/bad": make_repo(d)}) as hub:
        on_hub = cli(hub, tmp_path / "cache", "inspect", "org/bad")
    assert on_disk.returncode == on_hub.returncode == 2, (on_disk.stderr, on_hub.stderr)
    assert needle in on_disk.stderr and len(on_disk.stderr.strip().splitlines()) == 1, on_disk.stderr
    assert on_hub.stderr.replace("org/bad", "CKPT") == on_disk.stderr.replace(str(d), "CKPT")


def test_a_server_ignoring_range_is_refused(tmp_path):
    with FakeHub({"org/spec": make_repo(SPEC_TRAIN)}, honour_range=False) as hub:
        r = cli(hub, tmp_path / "cache", "check", "org/spec", "--engine", "vllm")
    assert r.returncode == 2 and "refusing to download the whole file" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_offline_with_config_but_not_weights_cached(spec_hub):
    from huggingface_hub import hf_hub_download

    hub, repo, cache = spec_hub
    hf_hub_download("org/spec", "config.json", cache_dir=str(cache), endpoint=hub.url)
    r = cli(hub, cache, "inspect", "org/spec", offline=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "org/spec" in r.stderr and "not its weights" in r.stderr and repo.commit in r.stderr


def test_parent_from_the_hub(spec_hub):
    hub, _, cache = spec_hub
    r = cli(hub, cache, "check", SPEC_TRAIN, "--engine", "vllm", "--parent", "org/spec", "--json")
    want = local("check", SPEC_TRAIN, "--engine", "vllm", "--parent", SPEC_TRAIN, "--json")
    assert r.returncode == want.returncode, r.stderr
    assert json.loads(r.stdout) == json.loads(want.stdout)
    assert any(p.endswith("model.safetensors") for _, p, _ in hub.stats.requests)  # the parent's d2t, by range


def test_head_rows_gathered_in_few_reads():
    """convert --target with a head on the Hub gathers rows i + d2t[i]: nearby rows share one range read."""
    import random

    from specbridge.convert.run import _gathered_rows

    class Head:
        def __init__(self, data: bytes):
            self.data, self.reads = data, 0

        def read_at(self, start: int, n: int) -> bytes:
            self.reads += 1
            return self.data[start : start + n]

    row = 16
    head = Head(bytes(random.Random(0).getrandbits(8) for _ in range(5000 * row)))
    rows = sorted(random.Random(1).sample(range(5000), 800)) + [7, 7, 3]  # tail: unsorted and repeated
    got = list(_gathered_rows(head, rows, row))
    assert got == [head.data[r * row : (r + 1) * row] for r in rows]
    assert head.reads <= 4


def test_convert_with_a_hub_target_builds_the_head_by_range(tmp_path):
    """convert --target org/name where the target's weights are needed (lm_head from its rows i + d2t[i]):
    the target's header and the needed rows by range, the same output as with the local target."""
    import random

    from conftest import SF_SGLANG, mutate, write_raw

    head = bytes(random.Random(0).getrandbits(8) & 0x3F for _ in range(512 * 64 * 2))
    tgt = tmp_path / "target"
    tgt.mkdir()
    (tgt / "config.json").write_text((TINY_TARGET / "config.json").read_text())
    write_raw(
        tgt / "model.safetensors", {"lm_head.weight": ("BF16", [512, 64], head), "model.embed_tokens.weight": ("BF16", [512, 64], head)}
    )
    src = mutate(SF_SGLANG, tmp_path / "nohead", tensors=lambda t: {k: v for k, v in t.items() if k != "lm_head.weight"})
    with FakeHub({"org/target": make_repo(tgt)}) as hub:
        r = cli(hub, tmp_path / "cache", "convert", src, "--engine", "sglang", "-o", tmp_path / "hub-o", "--target", "org/target")
        ranged = all(rng for m, p, rng in hub.stats.requests if p.endswith(".safetensors") and m == "GET")
    assert r.returncode == 0, r.stdout + r.stderr
    want = local("convert", src, "--engine", "sglang", "-o", tmp_path / "local-o", "--target", tgt)
    assert want.returncode == 0
    assert (tmp_path / "hub-o" / "model.safetensors").read_bytes() == (tmp_path / "local-o" / "model.safetensors").read_bytes()
    assert ranged


def test_oversized_config_is_not_downloaded(tmp_path):
    d = tmp_path / "huge"
    d.mkdir()
    (d / "model.safetensors").write_bytes((SPEC_TRAIN / "model.safetensors").read_bytes())
    with open(d / "config.json", "wb") as f:  # a sparse 20 GB "config"
        f.truncate(20 * 10**9)
    with FakeHub({"org/huge": make_repo(d)}) as hub:
        r = cli(hub, tmp_path / "cache", "inspect", "org/huge")
        served = hub.stats.body_bytes
    assert r.returncode == 2 and "limit for a JSON file" in r.stderr and served < 100_000, r.stderr


def test_offline_hub_target_from_the_cache(spec_hub):
    from huggingface_hub import hf_hub_download

    hub, _, cache = spec_hub
    hf_hub_download("org/tiny-target", "config.json", cache_dir=str(cache), endpoint=hub.url)
    hub.stats.reset()
    r = cli(hub, cache, "check", SPEC_TRAIN, "--engine", "vllm", "--target", "org/tiny-target", "--json", offline=True)
    want = local("check", SPEC_TRAIN, "--engine", "vllm", "--target", TINY_TARGET, "--json")
    assert r.returncode == want.returncode, r.stderr
    got, exp = same_report(r.stdout, "org/tiny-target", want.stdout, str(TINY_TARGET))
    assert got == exp and hub.stats.requests == []


def test_a_local_path_is_never_sent_to_the_hub(spec_hub, tmp_path):
    """A path written as one (./, ../, /, ~) or under a local directory is a missing file (exit 2),
    not a Hub id: no request reaches the Hub, and the line says what was missing."""
    hub, _, cache = spec_hub
    (tmp_path / "examples").mkdir()
    (tmp_path / "org").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=hub.url, HF_HUB_CACHE=str(cache))
    for text in ("./examples/stroy", "../examples/stroy", "/nonexistent/stroy", "~/stroy", "examples/stroy", "org/spec"):
        for argv in (
            ["check", text],
            ["inspect", text, "--json"],
            ["check", SPEC_TRAIN, "--target", text],
            ["convert", text, "--to", "sglang", "-o", "x"],
        ):
            r = subprocess.run(
                [sys.executable, "-m", "specbridge", *map(str, argv)], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
            )
            assert r.returncode == 2, (argv, r.stderr)
            assert "no such file or directory" in r.stderr and len(r.stderr.strip().splitlines()) == 1, (argv, r.stderr)
    assert "org/ is a directory here" in r.stderr  # why a repo-shaped name was read as a path
    assert hub.stats.requests == []
    # the same repo id from a directory without org/ does go to the Hub
    r = subprocess.run(
        [sys.executable, "-m", "specbridge", "inspect", "org/spec"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path / "examples",
    )
    assert r.returncode == 0, r.stderr
    assert hub.stats.requests
