"""Real-loader harness for vLLM (tier b of the engine conformance tests).

Runs INSIDE the vLLM venv (scripts/setup_vllm_cpu.sh), with only stdlib + torch + transformers + vllm:

    python -m specbridge.conformance.vllm_loader make-target OUT --config TARGET/config.json [--zero-norm]
    python -m specbridge.conformance.vllm_loader load --target T DRAFTER [DRAFTER ...] [--k 3] [--generate 8]
        [--method dflash] [--v1-guard skip [--keep-guard DRAFTER ...]]
    python -m specbridge.conformance.vllm_loader accept --target T --prompts IDS.json DRAFTER [...] [--k 3] [--max-new 16]

`--v1-guard skip` turns VllmConfig's refusal of Model Runner V1 into a no-op for every drafter not named by
`--keep-guard`: a DFlash2 drafter, which vLLM 0.29+ refuses on V1 (and V1 is all vllm-cpu has: Triton has no CPU
backend), is then built, loaded and run by V1 as vLLM 0.28.0 runs it with VLLM_USE_V2_MODEL_RUNNER=0. Everything
after the refusal is vLLM's own code.

`make-target` builds the tiny random Llama target of the producer fixtures (config
tests/fixtures/producers/tiny-target-llama-4l/config.json, given with --config; torch seed 0) plus a byte-level BPE
tokenizer trained offline to exactly the model's vocab (512).

`load` starts a real vLLM engine (in-process: VLLM_ENABLE_V1_MULTIPROCESSING=0) with each drafter as an
EAGLE-3 speculative model, and reports for each, as one JSON object per drafter on stdout (a JSON list):

  raised     the exception vLLM raised while building/loading the drafter (type + message), or null
  params     every draft-model parameter after the drafter's own `load_weights`:
               filled   fraction of its elements written from the checkpoint (0, partial, 1)
               sha256   of the values as loaded (float32/int64 bytes, C order), when filled == 1
             and after engine start-up:
               final    "own" or "shared-from-target" (the same storage as the target's parameter)
  missing    parameters never filled from the checkpoint and not shared from the target
  landed     checkpoint names whose tensor (or a view of it) was copied into the draft model by `load_weights`
  dropped    checkpoint names `load_weights` was given and copied nowhere (skipped, or consumed on purpose)
  generate   greedy tokens from a short prompt and the spec-decode counters (drafts, accepted)

How "filled" is measured: the draft model's `load_weights` is wrapped; just before it runs every parameter
is set to a sentinel (NaN for floats, an impossible integer for ints), afterwards the elements still equal
to the sentinel were never written by the loader. They are then restored to their initial values, so the
engine runs exactly as it would have. This needs no knowledge of vLLM's name mapping or fused shards.

How "dropped" is measured: the names and tensors `load_weights` is given are recorded, and while it runs
`torch.Tensor.copy_` / `__setitem__` note every source whose storage is one of those tensors' (a narrowed or
reshaped view shares it). A name none of whose storage was copied anywhere was dropped. A loader that converts
a tensor into new storage before copying it would show as dropped: the test then disagrees, and says so.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import sys
import time
import traceback

INT_SENTINEL = -(2**62) + 977


# ------------------------------------------------------------------------------------------------------
# make-target

CORPUS_WORDS = (
    "the of and to in is was that for on with as by at from it an be this are which or his her they not have "
    "had one were all we when there can been has more if will would who so what out up into no time some them "
    "other than then its only new two may first any like now my such make over our even most me state after "
    "also made many did must before back see through way where get much go well your know should down work "
    "year because come people just say each those take day good how long little use man great old think "
    "speculative decoding draft model target token accept length engine vllm sglang eagle layer hidden state "
    "python function return value list dict string number water cycle planet sun moon capital france paris"
).split()


def _corpus(n_lines: int = 4000, seed: int = 0) -> list[str]:
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n_lines):
        k = rng.randint(4, 16)
        words = [rng.choice(CORPUS_WORDS) for _ in range(k)]
        if rng.random() < 0.3:
            words.append(str(rng.randint(0, 9999)))
        out.append(" ".join(words).capitalize() + rng.choice([".", "?", "!", ","]))
    return out


def make_tokenizer(out: str, vocab_size: int) -> None:
    """Byte-level BPE with exactly `vocab_size` ids: 0 '<zero>' (a plain token), 1 '<s>', 2 '</s>'."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<zero>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer)
    n = tok.get_vocab_size()
    if n < vocab_size:  # pad with plain tokens so every id the model can emit decodes
        tok.add_tokens([AddedToken(f"<extra_{i}>", special=False) for i in range(vocab_size - n)])
    assert tok.get_vocab_size() == vocab_size, tok.get_vocab_size()
    # id 0 is an ordinary token (so text streams are never empty when a model emits it)
    data = json.loads(tok.to_str())
    for t in data.get("added_tokens", []):
        if t["content"] == "<zero>":
            t["special"] = False
    tok = Tokenizer.from_str(json.dumps(data))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.save_pretrained(out)


def make_target(out: str, config_path: str, seed: int = 0, zero_norm: bool = False, arch: str = "llama") -> dict:
    """`arch` llama: the producer fixtures' Llama target; qwen3: the same geometry as a Qwen3 model (DFlash's); cohere2:
    the same geometry as a Cohere2 model with full attention on every layer (its layer_types are what vLLM's Cohere
    EAGLE class prepends to the draft's; LayerNorm, not RMSNorm)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM

    with open(config_path) as f:
        cfg = json.load(f)
    for k in ("architectures", "transformers_version", "model_type"):
        cfg.pop(k, None)
    torch.manual_seed(seed)
    config_cls, model_cls = (Qwen3Config, Qwen3ForCausalLM) if arch == "qwen3" else (LlamaConfig, LlamaForCausalLM)
    if arch == "cohere2":
        from transformers import Cohere2Config, Cohere2ForCausalLM

        config_cls, model_cls = Cohere2Config, Cohere2ForCausalLM
        cfg.pop("rms_norm_eps", None)
        cfg["layer_types"] = ["full_attention"] * cfg["num_hidden_layers"]
        cfg["tie_word_embeddings"] = True  # vLLM's CohereForCausalLM asserts it (commandr.py @ 0.27.0)
    model = model_cls(config_cls(**cfg))
    if zero_norm:  # every logit 0 -> greedy output is always token 0 (a deterministic acceptance fixture)
        with torch.no_grad():
            model.model.norm.weight.zero_()
    model.config.architectures = [model_cls.__name__]
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out)
    make_tokenizer(out, cfg["vocab_size"])
    return {"target": out, "vocab_size": cfg["vocab_size"], "zero_norm": zero_norm, "seed": seed}


# ------------------------------------------------------------------------------------------------------
# load


class Probe:
    """Wraps the draft model's load_weights (sentinel fill -> load -> measure -> restore)."""

    def __init__(self, keep_init: bool = True):
        # keep_init: a copy of every parameter's initial values, put back where load_weights wrote nothing (the engine
        # then generates as it would have); without it those elements become 0 and the drafter is held once, not twice
        self.keep_init = keep_init
        self.draft = None
        self.target = None
        self.params: dict[str, dict] = {}
        self.inner_error: str | None = None
        self.load_s: float | None = None
        self.given: list[str] = []  # checkpoint names load_weights was handed, in order
        self.landed: set[str] = set()  # of those, the ones whose storage was copied somewhere
        # failures of the tracing itself: any one makes the case's verdict an error (never "dropped", "not shared")
        self.harness_errors: list[str] = []

    def harness_failed(self, where: str) -> None:
        """Record the exception being handled as a failure of the harness's own tracing at `where`."""
        self.harness_errors.append(f"{where}: {traceback.format_exc(limit=-4).strip()}")

    @staticmethod
    def is_draft(model) -> bool:
        name = type(model).__name__
        return "Eagle" in name or "eagle" in type(model).__module__ or "DFlash" in name or "MTP" in name or name == "Medusa"

    def wrap(self, model) -> None:
        import torch

        orig = model.load_weights
        probe = self

        def load_weights(weights, *a, **kw):
            named = list(model.named_parameters())
            init = {}
            with torch.no_grad():
                for n, p in named:
                    if probe.keep_init:
                        init[n] = p.detach().clone()
                    p.fill_(float("nan") if p.is_floating_point() else INT_SENTINEL)
            t0 = time.perf_counter()
            by_ptr: dict[int, str] = {}
            restore = probe.watch_copies(by_ptr)

            def given(ws):
                for name, t in ws:
                    probe.given.append(name)
                    try:
                        ptr = _storage_ptr(t)
                    except Exception:
                        probe.harness_failed(f"reading the storage of checkpoint tensor {name!r}")
                        raise
                    if ptr:  # an empty tensor has no storage to follow (and can land nowhere)
                        by_ptr[ptr] = name
                    yield name, t

            try:
                return orig(given(weights), *a, **kw)
            except BaseException as e:
                probe.inner_error = f"{type(e).__name__}: {e}"
                raise
            finally:
                restore()
                probe.load_s = time.perf_counter() - t0
                try:
                    probe.measure(model, named, init)
                except Exception:  # recorded, not raised: vLLM's own exception (if any) stays the one that propagates
                    probe.harness_failed("measuring the parameters after load_weights")

        model.load_weights = load_weights

    def measure(self, model, named, init) -> None:
        """Per parameter: the fraction written (elements no longer the sentinel), its bytes' sha256 when whole, which
        parts stayed unfilled; unfilled elements get their initial values back."""
        import torch

        with torch.no_grad():
            for n, p in named:
                unfilled = torch.isnan(p) if p.is_floating_point() else (p == INT_SENTINEL)
                k = int(torch.count_nonzero(unfilled))  # not unfilled.sum(): that widens the mask to int64 first
                filled = 1.0 - k / max(1, p.numel())
                rec = {"shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""), "filled": filled}
                if k == 0:
                    rec["sha256"] = _sha256_f32(p)
                if k:
                    rec["unfilled"] = _unfilled_parts(model, n, unfilled)
                    p[unfilled] = init[n][unfilled] if n in init else 0
                self.params[n] = rec

    def watch_copies(self, by_ptr: dict[int, str]):
        """Note every checkpoint tensor copied anywhere while load_weights runs; returns the undo."""
        import torch

        probe, copy_, setitem = self, torch.Tensor.copy_, torch.Tensor.__setitem__

        def note(src) -> None:
            if not isinstance(src, torch.Tensor):
                return
            try:
                ptr = _storage_ptr(src)
            except Exception:
                probe.harness_failed("reading the storage of a tensor copied by load_weights")
                raise
            name = by_ptr.get(ptr) if ptr else None
            if name is not None:
                probe.landed.add(name)

        def watched_copy(dst, src, *a, **kw):
            note(src)
            return copy_(dst, src, *a, **kw)

        def watched_setitem(dst, idx, value):
            note(value)
            return setitem(dst, idx, value)

        torch.Tensor.copy_, torch.Tensor.__setitem__ = watched_copy, watched_setitem

        def restore() -> None:
            torch.Tensor.copy_, torch.Tensor.__setitem__ = copy_, setitem

        return restore


def _storage_ptr(t) -> int:
    """The address of a tensor's storage (shared by its views). A tensor without one raises: the harness cannot
    say where it went, and says so (Probe.harness_errors) instead of calling it dropped."""
    return t.untyped_storage().data_ptr()


def _sha256_f32(p) -> str:
    """sha256 of a parameter's values as float32 (int64 for integers), C order, converted a block of rows at a time
    (a multi-GB embedding is never copied whole)."""
    h = hashlib.sha256()
    t = p.detach().to("cpu")
    if t.numel() == 0:
        return h.hexdigest()
    rows = t.reshape(t.shape[0], -1) if t.dim() > 1 else t.reshape(-1, 1) if t.dim() == 1 else t.reshape(1, 1)
    step = max(1, (1 << 22) // max(1, rows.shape[1]))
    for at in range(0, rows.shape[0], step):
        block = rows[at : at + step].contiguous()
        if block.is_floating_point():
            block = block.float()
        h.update(block.numpy().tobytes())
    return h.hexdigest()


def _unfilled_parts(model, name: str, unfilled) -> list[str]:
    """Which parts of a parameter were never written: ["*"] (all), or fused shards in check's naming
    ("q"/"k"/"v" for QKV, "0"/"1"/... for merged linears), or row ranges "rows a:b"."""
    if bool(unfilled.all()):
        return ["*"]
    rows = unfilled.reshape(unfilled.shape[0], -1) if unfilled.dim() > 1 else unfilled.reshape(-1, 1)
    row_all, row_any = rows.all(dim=1), rows.any(dim=1)
    mod = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
    sizes = list(getattr(mod, "output_sizes", None) or [])
    parts = []
    if sizes and sum(sizes) == rows.shape[0]:
        labels = ["q", "k", "v"] if "QKV" in type(mod).__name__ and len(sizes) == 3 else [str(i) for i in range(len(sizes))]
        start = 0
        for lab, sz in zip(labels, sizes):
            seg_all, seg_any = bool(row_all[start : start + sz].all()), bool(row_any[start : start + sz].any())
            if seg_all:
                parts.append(lab)
            elif seg_any:
                parts.append(f"{lab} (partly)")
            start += sz
        return parts
    idx = row_any.nonzero().flatten().tolist()
    return [f"rows {idx[0]}:{idx[-1] + 1}"] if idx else ["scattered"]


def _install(probe: Probe) -> None:
    from vllm.model_executor.model_loader import default_loader

    cls = default_loader.DefaultModelLoader
    if getattr(cls, "_specbridge_probe", None) is not None:
        cls._specbridge_probe = probe
        return
    orig = cls.load_weights

    def load_weights(self, model, model_config, *a, **kw):
        pr = cls._specbridge_probe
        if pr is not None:
            if Probe.is_draft(model):
                pr.draft = model
                pr.wrap(model)
            elif pr.target is None:
                pr.target = model
        return orig(self, model, model_config, *a, **kw)

    cls.load_weights = load_weights
    cls._specbridge_probe = probe


def _final_status(probe: Probe) -> dict[str, str]:
    """own / shared-from-target for each draft parameter after engine start-up (the proposer may swap
    embed_tokens / lm_head modules for the target's)."""
    out = {}
    if probe.draft is None:
        return out
    tgt = list(probe.target.named_parameters(remove_duplicate=False)) if probe.target is not None else []
    # identity, or the same non-empty storage (CPU linear layers may swap `weight` for an empty
    # placeholder after packing it, and empty tensors share data_ptr 0: never count those)
    ids = {id(p) for _, p in tgt}
    ptrs = {(p.data_ptr(), tuple(p.shape)) for _, p in tgt if p.numel() and p.data_ptr()}
    for n, p in probe.draft.named_parameters(remove_duplicate=False):
        shared = id(p) in ids or (p.numel() > 0 and p.data_ptr() != 0 and (p.data_ptr(), tuple(p.shape)) in ptrs)
        out[n] = "shared-from-target" if shared else "own"
    # parameters whose module was replaced no longer appear under their old object; named_parameters
    # walks the current modules, so a shared embed shows the target's storage under the draft's name.
    return out


def _cleanup(llm) -> list[str]:
    """Shut the engine down so the next drafter starts its own; returns what failed on the way (said in the result's
    `cleanup_errors` and on stderr: a later case of the same process may then be affected)."""
    failed = []
    if llm is not None:
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            try:
                core.shutdown()
            except Exception as e:  # noqa: BLE001  reported below
                failed.append(f"engine_core.shutdown: {type(e).__name__}: {e}")
    try:
        from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel

        destroy_model_parallel()
        destroy_distributed_environment()
    except Exception as e:  # noqa: BLE001  reported below
        failed.append(f"destroy the parallel state: {type(e).__name__}: {e}")
    for line in failed:
        sys.stderr.write(f"[vllm_loader] cleanup: {line}\n")
    gc.collect()
    return failed


def load_one(
    target: str,
    drafter: str,
    k: int,
    generate: int,
    max_model_len: int,
    method: str = "eagle3",
    parallel: bool = False,
    keep_init: bool = True,
) -> dict:
    from vllm import LLM, SamplingParams

    probe = Probe(keep_init)
    _install(probe)
    res = {"drafter": drafter, "raised": None, "inner_error": None, "params": {}, "missing": [], "generate": None}
    llm = None
    t0 = time.perf_counter()
    try:
        llm = LLM(
            model=target,
            tokenizer=target,
            dtype="float32",
            max_model_len=max_model_len,
            max_num_seqs=2,
            enforce_eager=True,
            disable_log_stats=False,
            seed=0,
            speculative_config={
                "method": method,
                "model": drafter,
                "num_speculative_tokens": k,
                **({"parallel_drafting": True} if parallel else {}),
            },
        )
    except BaseException as e:  # noqa: BLE001 — the point is to record what vLLM raises
        if isinstance(e, KeyboardInterrupt):
            raise
        res["raised"] = f"{type(e).__name__}: {e}"
        res["raised_type"] = type(e).__name__
        res["traceback_tail"] = traceback.format_exc().splitlines()[-6:]
    res["start_s"] = round(time.perf_counter() - t0, 2)
    res["inner_error"] = probe.inner_error
    res["vllm_version"] = _vllm_version()
    res["draft_class"] = type(probe.draft).__name__ if probe.draft is not None else None
    if res["raised"] is None and probe.draft is None:
        probe.harness_errors.append("vLLM started without any drafter load_weights seen by the probe (Probe.is_draft knows no such class)")
    final = {}
    if res["raised"] is None and probe.draft is not None:
        try:
            final = _final_status(probe)
        except Exception:
            probe.harness_failed("comparing draft and target parameter storage")
    for n, rec in probe.params.items():
        rec = dict(rec)
        if final:
            rec["final"] = final.get(n, "own")
        res["params"][n] = rec
    # check's naming: a wholly unfilled parameter by name, an unfilled shard of a fused one as NAME[shard]
    missing = []
    for n, r in res["params"].items():
        if r["filled"] >= 1.0 or r.get("final") == "shared-from-target":
            continue
        parts = r.get("unfilled", ["*"])
        missing += [n] if parts == ["*"] else [f"{n}[{p}]" for p in parts]
    res["missing"] = sorted(missing)
    res["partial"] = sorted(n for n, r in res["params"].items() if 0.0 < r["filled"] < 1.0)
    res["landed"] = sorted(set(probe.given) & probe.landed)
    res["dropped"] = sorted(set(probe.given) - probe.landed)
    if llm is not None and generate:
        try:
            outs = llm.generate(["The capital of France is"], SamplingParams(max_tokens=generate, temperature=0.0, ignore_eos=True))
            toks = list(outs[0].outputs[0].token_ids)
            counters = {}
            for m in llm.get_metrics():
                if m.name.startswith("vllm:spec_decode"):
                    if hasattr(m, "values"):
                        counters[m.name] = list(m.values)
                    else:
                        counters[m.name] = getattr(m, "value", None)
            res["generate"] = {"tokens": toks, "spec": counters}
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            res["generate"] = {"error": f"{type(e).__name__}: {e}"}
    res["cleanup_errors"] = _cleanup(llm)
    res["harness_errors"] = probe.harness_errors
    del llm
    gc.collect()
    return res


def _vllm_version() -> str:
    import vllm

    return str(getattr(vllm, "__version__", "unknown"))


def accept(target: str, drafter: str, prompts: list[list[int]], k: int, max_new: int, method: str, max_model_len: int) -> dict:
    """Greedy generation of `max_new` tokens for each prompt (token ids; the target needs no tokenizer), one prompt at
    a time, with the spec-decode counters each prompt added (drafts, draft tokens, accepted, accepted per position):
    what eval's offline walk must reproduce."""
    from vllm import LLM, SamplingParams

    llm = LLM(
        model=target,
        skip_tokenizer_init=True,
        dtype="float32",
        max_model_len=max_model_len,
        max_num_seqs=1,
        enforce_eager=True,
        disable_log_stats=False,
        seed=0,
        speculative_config={"method": method, "model": drafter, "num_speculative_tokens": k},
    )

    def counters() -> dict:
        out = {}
        for m in llm.get_metrics():
            if m.name.startswith("vllm:spec_decode"):
                out[m.name] = list(m.values) if hasattr(m, "values") else getattr(m, "value", None)
        return out

    rows, before = [], counters()
    for p in prompts:
        o = llm.generate([{"prompt_token_ids": p}], SamplingParams(max_tokens=max_new, temperature=0.0, ignore_eos=True, detokenize=False))
        now = counters()
        delta = {}
        for n, v in now.items():
            b = before.get(n)
            delta[n] = [x - y for x, y in zip(v, b or [0] * len(v))] if isinstance(v, list) else v - (b or 0)
        rows.append({"tokens": list(o[0].outputs[0].token_ids), "spec": delta})
        before = now
    _cleanup(llm)
    return {"drafter": drafter, "prompts": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m specbridge.conformance.vllm_loader")
    sub = ap.add_subparsers(dest="cmd", required=True)
    mt = sub.add_parser("make-target")
    mt.add_argument("out")
    mt.add_argument("--config", required=True, help="target config.json (the tests pass tests/fixtures/producers/tiny-target-llama-4l)")
    mt.add_argument("--seed", type=int, default=0)
    mt.add_argument("--zero-norm", action="store_true")
    mt.add_argument("--arch", choices=("llama", "qwen3", "cohere2"), default="llama")
    ld = sub.add_parser("load")
    ld.add_argument("drafters", nargs="+")
    ld.add_argument("--target", required=True)
    ld.add_argument("--k", type=int, default=3)
    ld.add_argument("--generate", type=int, default=8)
    ld.add_argument("--max-model-len", type=int, default=128)
    ld.add_argument("--method", default="eagle3", help="vLLM's speculative method (eagle3, dflash)")
    ac = sub.add_parser("accept", help="spec-decode counters per prompt (prompts: a JSON file of token-id lists)")
    ac.add_argument("drafters", nargs="+")
    ac.add_argument("--target", required=True)
    ac.add_argument("--prompts", required=True)
    ac.add_argument("--k", type=int, default=3)
    ac.add_argument("--max-new", type=int, default=16)
    ac.add_argument("--max-model-len", type=int, default=128)
    ac.add_argument("--method", default="dflash")
    ld.add_argument(
        "--v1-guard",
        choices=("keep", "skip"),
        default="keep",
        help="skip: VllmConfig._validate_v1_model_runner does nothing, so a drafter V1 refuses (DFlash2, 0.29+) is "
        "built and loaded by V1 as vLLM 0.28.0 does (its loader, sharing and proposer are vLLM's own)",
    )
    ld.add_argument("--keep-guard", action="append", default=[], help="a drafter loaded with V1's refusal in place (repeatable)")
    ld.add_argument("--parallel-drafting", action="store_true", help="speculative_config parallel_drafting (P-EAGLE)")
    ld.add_argument(
        "--restore",
        choices=("init", "zeros"),
        default="init",
        help="what unfilled parameter elements get after the measurement: their initial values (a copy of every parameter "
        "is kept: generation runs as it would have) or zeros (specbridge verify with --generate 0: the drafter held once)",
    )
    args = ap.parse_args(argv)

    if args.cmd == "make-target":
        print(json.dumps(make_target(args.out, args.config, args.seed, args.zero_norm, args.arch)))
        return 0

    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    guard = None
    if getattr(args, "v1_guard", "keep") == "skip":
        from vllm.config import vllm as vllm_config

        guard = getattr(vllm_config.VllmConfig, "_validate_v1_model_runner", None)
    # results go to fd 3 if given, else stdout; vLLM's logs stay on stderr
    results = []
    if args.cmd == "accept":
        with open(args.prompts) as f:
            prompts = json.load(f)
        for d in args.drafters:
            results.append(accept(args.target, d, prompts, args.k, args.max_new, args.method, args.max_model_len))
        sys.stdout.write("\n@@SPECBRIDGE-RESULT@@" + json.dumps(results) + "\n")
        sys.stdout.flush()
        return 0
    for d in args.drafters:
        if guard is not None:  # vLLM's own check for the drafters in --keep-guard, none for the others
            vllm_config.VllmConfig._validate_v1_model_runner = guard if d in args.keep_guard else (lambda self: None)
        keep_init = args.restore == "init"
        results.append(load_one(args.target, d, args.k, args.generate, args.max_model_len, args.method, args.parallel_drafting, keep_init))
        sys.stderr.write(f"[vllm_loader] {d}: {'raised ' + results[-1]['raised'][:200] if results[-1]['raised'] else 'loaded'}\n")
    sys.stdout.write("\n@@SPECBRIDGE-RESULT@@" + json.dumps(results) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
