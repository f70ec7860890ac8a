"""`specbridge train` end to end on a tiny Llama target built here, plus its parts.

The target is a random 4-layer Llama (H=64, V=512) whose head is rolled against its embedding,
so its greedy continuation counts upwards (x, x+1, x+2, ...). A drafter can only predict two
tokens ahead (x[t+2]) if it learns to use its token input, so accuracy far above chance
(1/Vd) shows real learning, and the untrained drafter starts near zero.
"""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

from specbridge.train import capture as cap  # noqa: E402
from specbridge.train.trainer import TrainArgs, train  # noqa: E402
from specbridge.train.vocab import build_vocab_map, coverage  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests/fixtures/producers/speculators-0.9.0/train-save"
VD = 448


def make_counting_target(path: Path, seed: int = 0, num_layers: int = 4):
    """A tiny Llama whose greedy next token of x is x+1 (confidently), saved with train/val prompt files."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=512,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=256,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.mul_(0.05)
            layer.mlp.down_proj.weight.mul_(0.05)
        # head row v = 100 * embed[v-1]: greedy next token of x is x+1, with a confident target
        model.lm_head.weight.copy_(torch.roll(model.model.embed_tokens.weight, 1, 0) * 100)
    model.save_pretrained(path)
    rng = random.Random(seed)
    for name, n in (("train", 96), ("val", 24)):
        rows = [{"prompt_ids": [rng.randrange(3, 400) for _ in range(4)]} for _ in range(n)]
        (path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return model


@pytest.fixture(scope="module")
def tiny_target(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-target")
    make_counting_target(path)
    return path


def tiny_args(target: Path, out: Path, **kw) -> TrainArgs:
    base = dict(
        target=str(target),
        out=str(out),
        train_prompts=str(target / "train.jsonl"),
        val_prompts=str(target / "val.jsonl"),
        max_new_tokens=24,
        draft_vocab_size=VD,
        aux_layers=[1, 2, 3],
        steps=120,
        batch_size=8,
        lr=1e-2,
        warmup_steps=5,
        data_dir=str(out.parent / "data"),
        progress=False,
        gen_workers=1,
    )
    base.update(kw)
    return TrainArgs(**base)


@pytest.fixture(scope="module")
def trained(tiny_target, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "drafter"
    report = train(tiny_args(tiny_target, out, save_every=60), log=lambda *a: None)
    return out, report


def test_tiny_run_learns_far_above_chance(trained):
    out, report = trained
    start, final = report["history"][0]["val"], report["final_val"]
    chance = 1.0 / VD
    assert start["acc_0"] < 0.05  # the untrained drafter cannot do it...
    assert final["acc_0"] > 0.6 > 100 * chance  # ...the trained one does, far above chance
    assert final["acc_1"] > 0.3 and final["full_acc_1"] <= final["acc_1"]
    assert report["steps"] == 120 and report["data"]["train"]["seqs"] == 96
    assert report["data"]["val"]["loss_tokens"] == 24 * 24


def test_saved_drafter_is_the_exact_speculators_layout(trained):
    from safetensors import safe_open

    out, report = trained
    with safe_open(str(out / "model.safetensors"), "pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    names = {f"layers.0.self_attn.{p}_proj.weight" for p in "qkvo"} | {f"layers.0.mlp.{p}_proj.weight" for p in ("gate", "up", "down")}
    names |= {f"layers.0.{n}.weight" for n in ("input_layernorm", "hidden_norm", "post_attention_layernorm")}
    names |= {"fc.weight", "norm.weight", "lm_head.weight", "d2t", "t2d"}
    assert set(tensors) == names
    H, V = 64, 512
    expect = {
        "fc.weight": (H, 3 * H),
        "layers.0.self_attn.q_proj.weight": (64, 2 * H),
        "layers.0.self_attn.k_proj.weight": (64, 2 * H),
        "layers.0.self_attn.o_proj.weight": (H, 64),
        "layers.0.mlp.gate_proj.weight": (128, H),
        "layers.0.mlp.down_proj.weight": (H, 128),
        "lm_head.weight": (VD, H),
        "norm.weight": (H,),
        "d2t": (VD,),
        "t2d": (V,),
    }
    for name, shape in expect.items():
        assert tuple(tensors[name].shape) == shape, name
    for name, t in tensors.items():
        want = {"d2t": torch.int64, "t2d": torch.bool}.get(name, torch.bfloat16)
        assert t.dtype == want, name
    d2t, t2d = tensors["d2t"], tensors["t2d"]
    assert int(t2d.sum()) == VD and bool(t2d[torch.arange(VD) + d2t].all())
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["eagle_aux_hidden_state_layer_ids"] == [1, 2, 3]
    assert cfg["speculators_config"]["proposal_methods"][0]["speculative_tokens"] == 3
    assert cfg["speculators_config"]["verifier"]["name_or_path"] == report["args"]["target"]
    assert cfg["transformer_layer_config"]["vocab_size"] == V and cfg["draft_vocab_size"] == VD
    if FIXTURE.exists():
        ref = json.loads((FIXTURE / "config.json").read_text())
        assert set(cfg) == set(ref)
        assert set(cfg["transformer_layer_config"]) == set(ref["transformer_layer_config"])


def test_saved_drafter_reloads_to_the_trained_accuracy(trained, tiny_target):
    """Training preconditions fc's input; the saved file must hold the folded, plain EAGLE-3 fc
    and still score what training measured."""
    from transformers import AutoModelForCausalLM

    from specbridge.train.save import load_drafter
    from specbridge.train.trainer import TTTObjective, evaluate, latest_checkpoint

    out, report = trained
    state = torch.load(latest_checkpoint(out) / "state.pt", map_location="cpu", weights_only=True)["drafter"]
    assert not torch.allclose(state["fc_input_scale"], torch.ones_like(state["fc_input_scale"]))  # it did precondition
    target = AutoModelForCausalLM.from_pretrained(tiny_target).eval()
    drafter = load_drafter(out, target_model=target)
    assert torch.equal(drafter.fc_input_scale, torch.ones_like(drafter.fc_input_scale))
    head_rows = target.get_output_embeddings().weight.detach()[drafter.t2d]
    m = evaluate(TTTObjective(drafter, head_rows, 3, 0.8), Path(report["data"]["val"]["capture_dir"]), 8, torch.device("cpu"))
    for j in range(3):
        assert abs(m[f"acc_{j}"] - report["final_val"][f"acc_{j}"]) < 0.03, (j, m, report["final_val"])


def test_resume_loads_the_vocab_map_and_never_rebuilds_it(trained, tiny_target, monkeypatch, tmp_path):
    import shutil

    from safetensors.torch import load_file

    import specbridge.train.trainer as trainer_mod

    out, _ = trained
    resumed = tmp_path / "drafter"
    shutil.copytree(out / "checkpoints", resumed / "checkpoints")
    shutil.rmtree(resumed / "checkpoints" / "step-0000120")  # continue from the step-60 checkpoint

    def refuse(*a, **k):
        raise AssertionError("vocab map rebuilt on resume")

    monkeypatch.setattr(trainer_mod, "build_vocab_map", refuse)
    report = train(tiny_args(tiny_target, resumed, data_dir=str(out.parent / "data"), steps=70, resume=True), log=lambda *a: None)
    assert report["resumed_from_step"] == 60 and report["steps"] == 70
    first, second = load_file(str(out / "model.safetensors")), load_file(str(resumed / "model.safetensors"))
    assert torch.equal(first["d2t"], second["d2t"]) and torch.equal(first["t2d"], second["t2d"])


def test_warm_start_keeps_the_saved_drafters_function_and_vocab_map(trained, tiny_target, monkeypatch, tmp_path):
    """--init-from trains a saved (folded) drafter further: before its first step it must score what the saved
    drafter scored (the preconditioning scale is taken back out of fc exactly), with its own vocab map."""
    from safetensors.torch import load_file

    import specbridge.train.trainer as trainer_mod

    out, first = trained

    def refuse(*a, **k):
        raise AssertionError("vocab map rebuilt on a warm start")

    monkeypatch.setattr(trainer_mod, "build_vocab_map", refuse)
    report = train(tiny_args(tiny_target, tmp_path / "warm", steps=2, init_from=str(out)), log=lambda *a: None)
    start = report["history"][0]
    assert start["step"] == 0
    for j in range(3):
        assert abs(start["val"][f"acc_{j}"] - first["final_val"][f"acc_{j}"]) < 0.03, (j, start, first["final_val"])
    from transformers import AutoModelForCausalLM

    from specbridge.train.save import load_drafter

    target = AutoModelForCausalLM.from_pretrained(tiny_target).eval()
    warm = trainer_mod.warm_started_drafter(
        tiny_args(tiny_target, tmp_path / "w2", init_from=str(out)), first["data"], [1, 2, 3], target, lambda *a: None
    )
    saved = load_drafter(out, target_model=target)
    assert not torch.allclose(warm.fc_input_scale, torch.ones_like(warm.fc_input_scale))
    aux = torch.randn(4, 3 * 64)
    with torch.no_grad():
        assert torch.allclose(warm.fuse(aux), saved.fuse(aux), atol=1e-5)
    a, b = load_file(str(out / "model.safetensors")), load_file(str(tmp_path / "warm" / "model.safetensors"))
    assert torch.equal(a["d2t"], b["d2t"]) and torch.equal(a["t2d"], b["t2d"])
    with pytest.raises(ValueError, match="aux layers"):
        train(tiny_args(tiny_target, tmp_path / "bad", steps=1, init_from=str(out), aux_layers=[0, 1, 2]), log=lambda *a: None)


def test_resume_without_checkpoint_fails_clearly(tiny_target, tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        train(tiny_args(tiny_target, tmp_path / "empty", resume=True), log=lambda *a: None)


def test_two_process_torchrun(tiny_target, trained, tmp_path):
    import socket

    out = tmp_path / "ddp"
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data_dir = trained[0].parent / "data"  # captures cached by the single-process run
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(port),
        "-m",
        "specbridge.train",
        "--target",
        str(tiny_target),
        "--out",
        str(out),
        "--train-prompts",
        str(tiny_target / "train.jsonl"),
        "--val-prompts",
        str(tiny_target / "val.jsonl"),
        "--max-new-tokens",
        "24",
        "--draft-vocab-size",
        str(VD),
        "--aux-layers",
        "1,2,3",
        "--train-steps",
        "60",
        "--lr",
        "1e-2",
        "--data-dir",
        str(data_dir),
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "training_report.json").read_text())
    assert report["world_size"] == 2 and report["steps"] == 60
    assert report["final_val"]["acc_0"] > 0.3  # 60 steps x 2 ranks x 8 seqs, far above 1/448
    assert (out / "model.safetensors").exists()


def test_capture_uses_input_of_layer_convention(tiny_target):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_target).eval()
    seqs = [[5, 6, 7, 8, 9, 10], [11, 12, 13]]
    got = cap.capture_batch(model, seqs, [0, 2, 4])
    with torch.no_grad():
        ref = model(torch.tensor([seqs[0]]), output_hidden_states=True)
    hs = ref.hidden_states
    aux = got[0]["aux_hidden"].float()
    torch.testing.assert_close(aux[:, :64], hs[0][0], rtol=1e-2, atol=1e-2)  # id 0 = embeddings
    torch.testing.assert_close(aux[:, 64:128], hs[2][0], rtol=1e-2, atol=1e-2)  # id 2 = entering layer 2
    final_pre_norm = aux[:, 128:]  # id 4 = N = final state before the norm
    torch.testing.assert_close(model.model.norm(final_pre_norm), got[0]["final_hidden"].float(), rtol=2e-2, atol=2e-2)
    assert torch.equal(got[0]["target_next"].long(), ref.logits[0].argmax(-1))
    assert got[1]["aux_hidden"].shape == (3, 192)  # padding stripped
    with pytest.raises(ValueError):
        cap.capture_batch(model, seqs, [5])


def _tiny_prompts(target: Path, n: int) -> list[list[int]]:
    from specbridge.prompts import read_prompts

    return read_prompts(target / "train.jsonl")[:n]


def test_one_pass_capture_equals_generate_then_capture(tiny_target):
    """The fused loop must give the two-pass result: same greedy answers, same aux states
    (up to bf16 rounding of cached vs full attention), the same target tokens on every
    trained position, and zeros only on the never-fed last token."""
    from transformers import AutoModelForCausalLM

    from specbridge.train import selfdistill
    from specbridge.train.data import generate_greedy

    model = AutoModelForCausalLM.from_pretrained(tiny_target).eval()
    prompts = [p + [7] * (i % 3) for i, p in enumerate(_tiny_prompts(tiny_target, 6))]  # ragged: left padding
    rows = selfdistill.generate_capture_batch(model, prompts, [1, 2, 4], 12, eos_ids={2}, pad_id=0)
    ref_resp = generate_greedy(model, prompts, 12, {2}, 0, batch_size=6)
    assert [r["response_ids"] for r in rows] == ref_resp
    ref = cap.capture_batch(model, [p + r for p, r in zip(prompts, ref_resp)], [1, 2, 4])
    for p, row, want in zip(prompts, rows, ref):
        L = len(p) + len(row["response_ids"])
        assert row["input_ids"].tolist() == p + row["response_ids"]
        m = row["loss_mask"]
        assert m.tolist() == [len(p) - 1 <= i < L - 1 for i in range(L)]
        torch.testing.assert_close(row["aux_hidden"][: L - 1].float(), want["aux_hidden"][: L - 1].float(), rtol=2e-2, atol=2e-2)
        torch.testing.assert_close(row["final_hidden"][m].float(), want["final_hidden"][m].float(), rtol=2e-2, atol=2e-2)
        assert torch.equal(row["target_next"][m], want["target_next"][m])
        assert not row["aux_hidden"][L - 1].any()


def test_generation_workers_split_and_merge_to_the_same_capture(tiny_target, tmp_path):
    """Two worker processes (1 thread each) must produce the capture one process does."""
    from specbridge.train import selfdistill

    prompts = _tiny_prompts(tiny_target, 10)
    base = {"target": "tiny", "aux_layer_ids": [1, 2, 3]}
    got = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(tiny_target).eval()
        manifest = selfdistill.build_capture(
            str(tiny_target), model, None, prompts, prompts, out, [1, 2, 3], 8, 4, workers, base, log=lambda *a: None
        )
        assert not list(tmp_path.glob(f"w{workers}.part*")) and manifest["num_seqs"] == 10
        rows = selfdistill.load_rows(out)
        seqs = {}
        for _, shard in cap.iter_shards(out):
            for seq in shard:
                seqs[tuple(seq["input_ids"].tolist())] = seq
        got[workers] = (sorted((r["prompt_ids"], r["response_ids"]) for r in rows), seqs, manifest)
    assert got[1][0] == got[2][0]
    assert got[1][1].keys() == got[2][1].keys()
    for key, seq in got[1][1].items():
        torch.testing.assert_close(seq["aux_hidden"].float(), got[2][1][key]["aux_hidden"].float(), rtol=2e-2, atol=2e-2)
        assert torch.equal(seq["target_next"], got[2][1][key]["target_next"])
    assert got[1][2]["num_tokens"] == got[2][2]["num_tokens"] and got[1][2]["num_loss_tokens"] == got[2][2]["num_loss_tokens"]


def test_several_prompt_files_are_read_in_order(tiny_target, tmp_path):
    from specbridge.train.trainer import prompt_files

    assert prompt_files(f"{tiny_target / 'train.jsonl'}, {tiny_target / 'val.jsonl'}") == [
        str(tiny_target / "train.jsonl"),
        str(tiny_target / "val.jsonl"),
    ]
    out = tmp_path / "two-files"
    report = train(
        tiny_args(
            tiny_target,
            out,
            steps=2,
            prepare_only=True,
            train_prompts=f"{tiny_target / 'train.jsonl'},{tiny_target / 'val.jsonl'}",
            data_dir=str(tmp_path / "data"),
        ),
        log=lambda *a: None,
    )
    assert report["data"]["train"]["seqs"] == 96 + 24 and report["data"]["val"]["seqs"] == 24
    assert not (out / "model.safetensors").exists()  # --prepare-only stops after the data


def test_default_aux_ids_follow_the_eagle3_rule():
    assert cap.default_aux_layer_ids(30) == [2, 15, 27]
    assert cap.default_aux_layer_ids(32) == [2, 16, 29]
    with pytest.raises(ValueError):
        cap.check_aux_layer_ids([2, 2, 3], 4)


def test_vocab_map_most_frequent_sorted_with_offsets():
    counts = torch.zeros(20, dtype=torch.long)
    counts[[15, 3, 9, 11]] = torch.tensor([50, 40, 40, 1])
    d2t, t2d = build_vocab_map(counts, 3)
    # 15 (50), then the tie 3 vs 9 at 40 (both fit); 11 is dropped
    assert torch.equal(torch.arange(3) + d2t, torch.tensor([3, 9, 15]))
    assert t2d.dtype == torch.bool and t2d.sum() == 3 and d2t.dtype == torch.int64
    d2t, t2d = build_vocab_map(counts, 6)  # only 4 seen: padded with the lowest unseen ids
    assert torch.equal(torch.nonzero(t2d).flatten(), torch.tensor([0, 1, 3, 9, 11, 15]))
    assert abs(coverage(counts, t2d) - 1.0) < 1e-9
    d2t, t2d = build_vocab_map(counts, 2)  # tie at the cut: the lower id wins
    assert torch.equal(torch.nonzero(t2d).flatten(), torch.tensor([3, 15]))


def test_cli_registers_train_and_rejects_other_layouts(tiny_target, tmp_path):
    import typer
    from typer.testing import CliRunner

    from specbridge.cli.train_cmd import register

    app = typer.Typer()
    register(app)

    @app.command("noop")
    def noop():  # a second command keeps typer in multi-command mode
        pass

    # every layout convert knows is accepted (written through convert); anything else is refused up front
    result = CliRunner().invoke(app, ["train", "--target", str(tiny_target), "--out", str(tmp_path / "x"), "--layout", "onnx"])
    assert result.exit_code != 0 and "sglang" in result.output and "speculators" in result.output
    help_text = CliRunner().invoke(app, ["train", "--help"]).output
    for flag in ("--draft-vocab-size", "--aux-layers", "--ttt-steps", "--resume", "--num-prompts", "--train-steps"):
        assert flag in help_text


def test_train_writes_other_layouts_through_convert(tiny_target, tmp_path):
    out = tmp_path / "sgl"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "specbridge.train",
            "--target",
            str(tiny_target),
            "--out",
            str(out),
            "--layout",
            "sglang",
            "--train-steps",
            "2",
            "--draft-vocab-size",
            str(VD),
            "--aux-layers",
            "1,2,3",
            "--max-new-tokens",
            "16",
            "--batch-size",
            "4",
            "--train-prompts",
            str(tiny_target / "train.jsonl"),
            "--val-prompts",
            str(tiny_target / "val.jsonl"),
            "--data-dir",
            str(tmp_path / "data"),
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    from specbridge.checkpoint.reader import open_checkpoint
    from specbridge.layouts.canonical import describe

    d = describe(open_checkpoint(out))
    assert d.layout == "sglang" and any(n.startswith("midlayer.") for n in d.source_names.values())
    assert json.loads((out / "config.json").read_text())["architectures"] == ["LlamaForCausalLMEagle3"]
    assert (out / "training_report.json").exists()  # the run's other files stay beside the checkpoint
