"""Real-loader harness for SGLang: SGLang's own drafter class, built and loaded on CPU.

Runs INSIDE the SGLang conformance environment (scripts/setup_sglang_conformance.sh), which holds
torch (CPU) + transformers + a few pure-Python packages, with each SGLang wheel unpacked into its own
folder (`--sglang-dir`, put first on sys.path). specbridge itself is found through PYTHONPATH=src:

    PYTHONPATH=src ~/.cache/specbridge/sglang-conformance/venv/bin/python \\
        -m specbridge.conformance.sglang_loader --sglang-dir ~/.cache/specbridge/sglang-conformance/wheels/0.5.11 CKPT

What runs is SGLang's code, not ours:
  * the drafter class is looked up in SGLang's model module by `architectures[0]` (its `EntryClass`),
  * it is CONSTRUCTED by SGLang's own __init__ (real VocabParallelEmbedding, QKVParallelLinear,
    MergedColumnParallelLinear, RMSNorm, ParallelLMHead …) inside a real torch.distributed "gloo"
    world of size 1 and SGLang's own tensor/pipeline-parallel groups (parallel_state), with SGLang's
    ServerArgs published the way its scheduler does (device="cpu"),
  * its own `load_weights` is called with the checkpoint's tensors, read from the safetensors files
    the way SGLang's DefaultModelLoader iterates them.
The parameter NAMES and SHAPES therefore come from SGLang's class, not from our tables.
SGLANG_USE_CPU_ENGINE stays unset, so the weight loaders take the branch SGLang takes on a GPU (not the CPU
engine's narrow_padded_param_and_loaded_weight).

Stubbed (a MagicMock meta-path finder), none of them on the weight-loading path:
  * `torchvision`: PyPI's build needs CUDA torch; sglang.srt.configs imports it unconditionally,
  * `vllm`: RotaryEmbedding binds `vllm._custom_ops.rotary_embedding` as a fallback kernel off CUDA (never
    called here); on 0.5.2 and older, layernorm.py / activation.py re-import RMSNorm / SiluAndMul from vLLM off
    CUDA: those two modules hand back SGLang's OWN classes (see SELF_ALIASES), i.e. what SGLang builds on a GPU,
  * `sgl_kernel`: compiled CUDA kernels some releases import at module level (0.5.2).
A guard fails the run ("harness_failed") if any stub ends up inside the built model (other than the bound
rotary kernel function). torch 2.13 moved `torch._C._cpu._is_amx_tile_supported` (read by 0.4.x at import
time) to `torch.cpu`; it is aliased back. triton 3.8 dropped `triton.runtime.cache.default_{cache,dump,override}_dir`
(imported by 0.4.6-0.4.8's utils.py, never called while loading); stand-ins returning ~/.triton/<kind> are put there. Parameters are float32 (torch's default), not the config dtype, unless `--param-dtype config` (what `specbridge verify` passes: a bf16 drafter in half the memory).
Dispatch is read from SGLang's sources (the sglang/srt/models module whose EntryClass exports
architectures[0]), not by importing SGLang's ModelRegistry (which imports every model).

NEXTN (`--nextn`, each CKPT a TARGET): the draft SGLang builds for --speculative-algorithm NEXTN without a draft path,
i.e. its own ModelConfig(is_draft_model=True) over the target's config.json (_config_draft_model renames
architectures[0]: DeepseekV3ForCausalLM -> DeepseekV3ForCausalLMNextN, Glm4MoeForCausalLM -> Glm4MoeForCausalLMNextN
from 0.4.9.post6), built from that hf_config, its load_weights fed ALL the target's tensors (it skips the others itself).
What ModelRunner sets up first and the GLM / DeepSeek decoder layers read at construction is set up too (see
_draft_runner_state); 0.4.6-0.4.8's YaRN rotary class defaults its cache to device "cuda": that default becomes "cpu".
DeepSeek's loaders (0.4.9+) copy weights from a ThreadPoolExecutor: it runs inline here (_InlineExecutor) so each copy
is attributed to the name being read; each loader call is attributed by the storage of the tensor it is handed (0.5.8
reads every name first), and a tensor the loader concatenates itself (fused_qkv_a_proj_with_mqa) to both its sources
(_sources). Log warnings raised during load_weights are returned ("warnings").

How "filled" is measured (as in vllm_loader): just before `load_weights` every parameter is set to NaN;
afterwards the elements still NaN were never written. Which checkpoint name wrote which parameter
(and which shard of a fused one) is recorded by wrapping each parameter's `weight_loader` and the
module's `default_weight_loader`; `hot_token_id` is watched after every name.

Prints one JSON object per CKPT (a JSON list when several are given):
  sglang_version, class, module, config_view, assumptions,
  dispatched        whether SGLang can resolve architectures[0] at all (else dispatch_error says why and the
                    fallback LlamaForCausalLMEagle3 is built over the flattened config, as check simulates)
  errors            what SGLang raised (construction or loading), "Type: message"
  params            {name: {"shape": [...], "written": fraction 0..1}}
  filled / partial / unfilled     parameter names by that fraction (1 / between / 0)
  tensors           {checkpoint name: {"loaded_into": [[param, shard or null], ...], "hot_token_id": bool}}
  consumed / skipped              checkpoint names that did / did not reach a parameter or hot_token_id
  hot_token_id_set  bool
  warnings          log records at WARNING or above during load_weights (SGLang warns on names it skips)
  seconds           wall time of the case (the first of a process includes SGLang's import)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import re
import sys
import tempfile
import time
import traceback
import types
import weakref
from pathlib import Path

FALLBACK = "LlamaForCausalLMEagle3"  # what our simulation falls back to when SGLang cannot dispatch
STUBBED = ("torchvision", "vllm", "sgl_kernel")
# stubbed packages' modules that are reported missing instead: SGLang 0.4.6-0.4.8 import vLLM's quantization
# methods inside try/except ImportError and monkey-patch them when present (layers/quantization/__init__.py);
# a mock there breaks the import, while "absent" is what SGLang sees on a machine without vLLM
ABSENT = ("vllm.model_executor.layers.quantization",)


# Off CUDA/HIP/NPU/XPU and without AMX, SGLang 0.5.2 (and older) ends layernorm.py / activation.py with
# `from vllm.model_executor.layers.layernorm import GemmaRMSNorm, RMSNorm` (… SiluAndMul), replacing its own
# classes by vLLM's. A MagicMock there would silently drop every norm weight; this stub hands back SGLang's own
# classes from the module being imported instead, i.e. what SGLang builds on the GPUs our tables describe.
SELF_ALIASES = {
    "vllm.model_executor.layers.layernorm": "sglang.srt.layers.layernorm",
    "vllm.model_executor.layers.activation": "sglang.srt.layers.activation",
}
# kernel FUNCTIONS bound from stubs (never called here); any other mock inside the model is an error
KERNEL_ATTRS = {"fallback_rotary_embedding", "vllm_rotary_embedding"}


class _SelfAlias(types.ModuleType):
    def __init__(self, name: str, target: str):
        super().__init__(name)
        self.__path__ = []
        self._target = target

    def __getattr__(self, attr):
        mod = sys.modules.get(object.__getattribute__(self, "_target"))
        if mod is not None and attr in vars(mod):
            return vars(mod)[attr]
        raise AttributeError(attr)


class _Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Any module under the given top-level names becomes a MagicMock package."""

    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, name, path, target=None):
        if name.startswith(ABSENT):
            return None  # not found: the importer's `except ImportError` branch runs, as on a machine without vLLM
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        from unittest import mock

        if spec.name in SELF_ALIASES:
            return _SelfAlias(spec.name, SELF_ALIASES[spec.name])
        m = mock.MagicMock(name=spec.name)
        m.__path__, m.__spec__, m.__name__, m.__version__ = [], spec, spec.name, "0.0.0+stub"
        m.__file__ = None
        return m

    def exec_module(self, module):
        pass


def _install_stubs() -> list[str]:
    roots = []
    for r in STUBBED:
        if r == "torchvision" or importlib.util.find_spec(r) is None:
            roots.append(r)
    sys.meta_path.insert(0, _Stub(roots))
    return roots


def _sglang_version() -> str:
    try:
        from importlib.metadata import version

        import sglang

        v = getattr(sglang, "__version__", None)
        if v:
            return v
        return version("sglang")
    except Exception:  # noqa: BLE001
        return "unknown"


def _publish_server_args(model_dir: str) -> tuple[str, object]:
    """Publish a CPU ServerArgs the way the scheduler does; returns which mechanism the version has, and the args.

    `model_dir` holds a config.json: some releases (0.5.2) read the model config in ServerArgs itself."""
    from sglang.srt.server_args import ServerArgs

    try:  # 0.5.2x: the runtime context owns it
        from sglang.srt.runtime_context import SpawnRanks, publish
    except ImportError:
        publish = None
    if publish is not None:
        sa = ServerArgs(model_path=model_dir, device="cpu")
        if hasattr(sa, "resolve_once"):
            sa.resolve_once()
        publish(sa, role="test", ranks=SpawnRanks(world_rank=0))
        return "runtime_context.publish", sa
    import sglang.srt.server_args as sam

    sa = ServerArgs(model_path=model_dir, device="cpu")
    if hasattr(sam, "set_global_server_args_for_scheduler"):  # 0.5.4 … 0.5.1x
        sam.set_global_server_args_for_scheduler(sa)
        return "set_global_server_args_for_scheduler", sa
    try:  # older: a dict in schedule_batch
        from sglang.srt.managers import schedule_batch

        schedule_batch.global_server_args_dict.update({k: getattr(sa, k) for k in schedule_batch.global_server_args_dict if hasattr(sa, k)})
        return "schedule_batch.global_server_args_dict", sa
    except (ImportError, AttributeError):
        return "none", sa


def _init_distributed(tmp: str) -> None:
    """A real gloo world of size 1, then SGLang's own TP/PP groups (all of width 1)."""
    from sglang.srt.distributed import parallel_state as ps

    ps.init_distributed_environment(world_size=1, rank=0, local_rank=0, distributed_init_method=f"file://{tmp}/dist-init", backend="gloo")
    ps.initialize_model_parallel(backend="gloo")


def _load_config(config: dict, tmp: str):
    """The config object SGLang builds from config.json (its own get_config where it has one)."""
    d = Path(tmp)
    (d / "config.json").write_text(json.dumps(config))
    for modname in (
        "sglang.srt.utils.hf_transformers.config",
        "sglang.srt.utils.hf_transformers_utils",
        "sglang.srt.hf_transformers_utils",
    ):
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        if hasattr(mod, "get_config"):
            return mod.get_config(str(d), trust_remote_code=False)
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(str(d))


def _count_nan(t) -> int:
    """NaN elements of a parameter, counted a block at a time in its own dtype: a bool mask summed whole is widened to
    int64 (8 bytes per element: 9 GB for a 163840 x 7168 embedding)."""
    import torch

    flat = t.reshape(-1)
    step = 1 << 24
    return sum(int(torch.count_nonzero(torch.isnan(flat[i : i + step]))) for i in range(0, flat.numel(), step))


def _files(root: Path) -> list[Path]:
    index = root / "model.safetensors.index.json"
    if index.is_file():
        return sorted({root / f for f in json.loads(index.read_text())["weight_map"].values()})
    return sorted(root.glob("*.safetensors"))


def _header(f: Path) -> tuple[dict, int]:
    """A safetensors file's header and where its data section starts."""
    import struct

    with open(f, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        return json.loads(fh.read(n)), 8 + n


ST_DTYPES = {
    "F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64", "I32": "int32",
    "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
}  # fmt: skip


def _weights(root: Path, stand_in_over: int | None = None):
    """(name, tensor) in the order SGLang's DefaultModelLoader yields them: files sorted, keys per file (safetensors'
    own order). `stand_in_over` (bytes): a tensor larger than that is handed over as a constant of its exact shape and
    dtype (a broadcast zero: one element of storage), the others are read into memory of their own, freed once the
    loader lets go of them; a multi-GB drafter is then never resident beside the parameters it fills. The loader's
    names, shapes, narrowing, shard routing and fills are what the harness measures, never the values."""
    import torch
    from safetensors import safe_open

    for f in _files(root):
        with safe_open(str(f), framework="pt") as fh:
            if stand_in_over is None:
                for name in fh.keys():
                    yield name, fh.get_tensor(name)
                continue
            names = list(fh.keys())
        header, start = _header(f)
        with open(f, "rb") as raw:
            for name in names:
                t = header[name]
                a, b = t["data_offsets"]
                dtype = getattr(torch, ST_DTYPES[t["dtype"]])
                if b - a > stand_in_over:
                    yield name, torch.zeros(1, dtype=dtype).expand(t["shape"])
                elif b == a:
                    yield name, torch.empty(t["shape"], dtype=dtype)
                else:
                    raw.seek(start + a)
                    buf = bytearray(b - a)
                    raw.readinto(buf)
                    yield name, torch.frombuffer(buf, dtype=dtype).reshape(t["shape"])


def _config_view(root: Path, config_json: str | None) -> tuple[dict, list[str], str | None]:
    """The config the loader reads. A speculators-format config (which SGLang cannot dispatch) is
    flattened with specbridge's flat_config, as our simulation does, minus null-valued keys (what
    `specbridge convert` writes), and is given the fallback class's architecture.
    Returns (view, notes, the architecture SGLang would dispatch on)."""
    notes = []
    src = Path(config_json) if config_json else root / "config.json"
    if config_json:
        notes.append(f"config from {config_json}")
    cfg = json.loads(src.read_text())
    archs = cfg.get("architectures") if isinstance(cfg.get("architectures"), list) else []
    orig = archs[0] if archs and isinstance(archs[0], str) else None
    if "speculators_config" in cfg or "transformer_layer_config" in cfg:
        from specbridge.layouts.canonical import flat_config

        flat = flat_config(cfg)
        nulls = sorted(k for k, v in flat.items() if v is None)
        view = {k: v for k, v in flat.items() if v is not None}
        view["architectures"] = [FALLBACK]
        notes.append(
            "speculators config: SGLang cannot dispatch it; loaded with specbridge's flattened view "
            f"(null keys dropped: {nulls}) under architectures=[{FALLBACK!r}]"
        )
        return view, notes, orig
    return cfg, notes, orig


def _find_module(arch: str | None) -> str | None:
    """The sglang.srt.models module whose EntryClass exports `arch` (what SGLang's ModelRegistry keys
    on), found by reading the sources so that no other model module has to import."""
    if not arch:
        return None
    spec = importlib.util.find_spec("sglang.srt.models")
    for d in spec.submodule_search_locations or []:
        for f in sorted(Path(d).glob("*.py")):
            text = f.read_text(errors="replace")
            m = re.search(r"^EntryClass\s*=(.*?)(?:\n\S|\Z)", text, re.M | re.S)
            if m and re.search(rf"^class {re.escape(arch)}\(", text, re.M) and re.search(rf"\b{re.escape(arch)}\b", m.group(1)):
                return f"sglang.srt.models.{f.stem}"
    return None


def _stub_leaks(model) -> list[str]:
    """Attributes of the built model that are MagicMocks (a stubbed module's class stood in for a layer)."""
    from unittest import mock

    out = []
    for path, module in model.named_modules():
        for k, v in vars(module).items():
            if k in KERNEL_ATTRS:
                continue
            if isinstance(v, (mock.Mock, mock.MagicMock)) or (isinstance(v, type) and issubclass(v, mock.Mock)):
                out.append(f"{path or '<root>'}.{k}")
    return out


_READY: dict = {}


def setup(config: dict) -> dict:
    """Once per process: stubs, ServerArgs, the gloo world and SGLang's parallel groups.
    `config` (the first drafter's config view) stands for the served model where ServerArgs reads one."""
    if not _READY:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        stubs = _install_stubs()
        import torch

        # SGLang 0.4.x asks torch._C._cpu for AMX at import time; torch 2.13 has it only as torch.cpu.*
        if not hasattr(torch._C._cpu, "_is_amx_tile_supported") and hasattr(torch.cpu, "_is_amx_tile_supported"):
            torch._C._cpu._is_amx_tile_supported = torch.cpu._is_amx_tile_supported
        # SGLang 0.4.6-0.4.8 import triton.runtime.cache.default_{cache,dump,override}_dir (utils.py), which newer
        # triton dropped for triton.knobs; nothing on the loading path calls them
        with contextlib.suppress(ImportError):
            import triton.runtime.cache as _tc

            for _kind in ("cache", "dump", "override"):
                if not hasattr(_tc, f"default_{_kind}_dir"):
                    setattr(_tc, f"default_{_kind}_dir", lambda k=_kind: os.path.join(os.path.expanduser("~"), ".triton", k))

        tmp = tempfile.mkdtemp(prefix="sglang-conform-")
        model_dir = Path(tmp) / "server-args-model"
        model_dir.mkdir()
        (model_dir / "config.json").write_text(json.dumps(config))
        _READY.update(
            tmp=tmp,
            stubs=stubs,
            sglang_version=_sglang_version(),
        )
        _READY["server_args"], _READY["server_args_obj"] = _publish_server_args(str(model_dir))
        _init_distributed(tmp)
    return _READY


def _draft_model_config(view: dict, tmp: str):
    """The config SGLang builds a NEXTN draft from: its own ModelConfig(is_draft_model=True) over the target's
    config.json (_config_draft_model renames architectures[0], e.g. DeepseekV3ForCausalLM -> …NextN)."""
    from sglang.srt.configs.model_config import ModelConfig

    d = Path(tempfile.mkdtemp(dir=tmp))
    (d / "config.json").write_text(json.dumps(view))
    return ModelConfig(model_path=str(d), trust_remote_code=False, model_override_args="{}", is_draft_model=True)


def _draft_runner_state(server_args, model_config) -> list[str]:
    """What SGLang's ModelRunner sets up before it builds a NEXTN draft and that the decoder layers of GLM / DeepSeek
    read at construction: the global_server_args_dict keys (≤0.5.2, including speculative_algorithm, EAGLE for NEXTN)
    and the attention-TP groups (initialize_dp_attention, ≤0.5.20). Returns what was done, for the assumptions."""
    import inspect

    done = []
    with contextlib.suppress(ImportError, AttributeError):
        from sglang.srt.managers import schedule_batch as sb
        from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

        keys = getattr(sb, "GLOBAL_SERVER_ARGS_KEYS", [])
        sb.global_server_args_dict.update({k: getattr(server_args, k) for k in keys if hasattr(server_args, k)})
        sb.global_server_args_dict["speculative_algorithm"] = SpeculativeAlgorithm.from_string("EAGLE")
        done.append("global_server_args_dict: GLOBAL_SERVER_ARGS_KEYS + speculative_algorithm=EAGLE (ModelRunner.__init__)")
    with contextlib.suppress(ImportError):  # a module before 0.5.10, a package after (where "cuda" is no default)
        import sglang.srt.layers.rotary_embedding as rope

        moved = []
        for name, klass in vars(rope).items():
            init = vars(klass).get("__init__") if isinstance(klass, type) else None
            if init is not None and (init.__kwdefaults__ or {}).get("device") == "cuda":
                init.__kwdefaults__["device"] = "cpu"
                moved.append(name)
        if moved:
            done.append(f"rotary caches built on cpu, not the 'cuda' default of {moved} (no parameters)")
    from sglang.srt.layers import dp_attention

    init = getattr(dp_attention, "initialize_dp_attention", None)
    if init is not None:
        params = inspect.signature(init).parameters
        if "server_args" in params:  # 0.5.1-0.5.20 also take the model config; 0.5.21+ only the args
            init(**{k: v for k, v in (("server_args", server_args), ("model_config", model_config)) if k in params})
        else:  # ≤0.4.9: flags, as ModelRunner.init_torch_distributed passes them
            init(False, 0, 1, 1, getattr(server_args, "moe_dense_tp_size", None), 1)
        done.append("initialize_dp_attention (ModelRunner.init_torch_distributed)")
    return done


class _InlineExecutor(concurrent.futures.Executor):
    """Runs each submitted call at once, in order. DeepSeek's loaders (0.4.9+) hand weight copies to a
    ThreadPoolExecutor; inline, every copy happens while its checkpoint name is the current one, so the attribution
    of names to parameters holds. The same calls run with the same arguments: only their timing changes."""

    def submit(self, fn, /, *args, **kwargs):
        f = concurrent.futures.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001  re-raised by .result(), as from a pool
            f.set_exception(e)
        return f


@contextlib.contextmanager
def _inline_thread_pools():
    saved = concurrent.futures.ThreadPoolExecutor
    concurrent.futures.ThreadPoolExecutor = _InlineExecutor
    try:
        yield
    finally:
        concurrent.futures.ThreadPoolExecutor = saved


def _sources(loaded, seen: dict, by_storage: dict, current: str) -> list[str]:
    """The checkpoint names a weight loader was handed: the one whose storage `loaded` shares (the tensor read, or a
    view of it: 0.5.8's DeepSeek loader reads every name before it loads any); else the two whose tensors `loaded`
    concatenates (0.4.9+ DeepSeek joins q_a_proj and kv_a_proj_with_mqa into fused_qkv_a_proj_with_mqa), when exactly
    one pair does; else the name being read."""
    import torch

    held = by_storage.get(loaded.untyped_storage().data_ptr())
    if held is not None and held[1]() is not None:  # the tensor read is still alive: the address is still its
        return [held[0]]

    def block(t, at_start: bool, rows: int | None = None) -> bool:
        n = t.shape[0] if t.dim() else 0
        if not n or (rows is not None and n != rows) or t.dtype != loaded.dtype or t.shape[1:] != loaded.shape[1:] or n >= loaded.shape[0]:
            return False
        return torch.equal(loaded[:n] if at_start else loaded[-n:], t)

    alive = list(seen.items())
    pairs = [[a, b] for a, ta in alive if block(ta, True) for b, tb in alive if b != a and block(tb, False, loaded.shape[0] - ta.shape[0])]
    return pairs[0] if len(pairs) == 1 else [current]


class _Warnings(logging.Handler):
    """Log records at WARNING and above while load_weights runs (SGLang warns on names it skips from 0.4.8)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _stored_float_dtype(root: Path) -> str | None:
    """The floating dtype most of the checkpoint's bytes are stored in (from the safetensors headers), or None."""
    names = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
    by_dtype: dict[str, int] = {}
    for f in _files(root):
        header, _ = _header(f)
        for k, t in header.items():
            if k != "__metadata__" and t["dtype"] in names:
                by_dtype[names[t["dtype"]]] = by_dtype.get(names[t["dtype"]], 0) + t["data_offsets"][1] - t["data_offsets"][0]
    return max(by_dtype, key=by_dtype.get) if by_dtype else None


def _param_dtype(view: dict, choice: str, root: Path):
    """The dtype SGLang's parameters are built in: float32 (torch's default, the conformance matrices), or with
    `config` the checkpoint config's torch_dtype / dtype as SGLang's ModelConfig sets it on a GPU, else (no dtype in the
    config) the dtype the tensors are stored in: half the memory of float32 for a bf16 drafter, what lets a multi-GB
    drafter load once."""
    import torch

    if choice == "float32":
        return torch.float32
    name = view.get("torch_dtype") or view.get("dtype") or (view.get("text_config") or {}).get("torch_dtype")
    name = name or _stored_float_dtype(root) or "float32"
    dtype = getattr(torch, str(name).replace("torch.", ""), None)
    if dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise ValueError(f"config dtype {name!r} is not one SGLang builds parameters in (float32, bfloat16, float16)")
    return dtype


def run(
    root: Path, config_json: str | None = None, nextn: bool = False, param_dtype: str = "float32", stand_in_over: int | None = None
) -> dict:
    """Build SGLang's drafter class for ROOT's config and run its load_weights over ROOT's tensors. `nextn`: ROOT is a
    target and the class is the NEXTN draft SGLang builds from it (--speculative-algorithm NEXTN, no draft path)."""
    view, notes, orig_arch = _config_view(root, config_json)
    env = setup(view)
    import torch

    draft_config = None
    if nextn:
        try:
            model_config = _draft_model_config(view, env["tmp"])
        except Exception as e:  # noqa: BLE001  SGLang refusing the target's config is a result
            return {
                "checkpoint": str(root),
                "sglang_version": env["sglang_version"],
                "config_view": view,
                "errors": [f"{type(e).__name__}: {e}"],
            }
        if "runner_state" not in env:
            env["runner_state"] = _draft_runner_state(env["server_args_obj"], model_config)
        notes += env["runner_state"]
        draft_config = model_config.hf_config
        orig_arch = draft_config.architectures[0]
        view = {**view, "architectures": [orig_arch, *view["architectures"][1:]]}
        notes.append(f"NEXTN draft: ModelConfig(is_draft_model=True) over the target's config -> architectures[0]={orig_arch!r}")

    out: dict = {
        "checkpoint": str(root),
        "sglang_version": env["sglang_version"],
        "server_args": env["server_args"],
        "errors": [],
        "assumptions": [f"stubbed modules: {env['stubs']}"],
    }
    out["assumptions"] += notes
    out["config_view"] = view

    archs = view.get("architectures") or []
    arch = archs[0] if archs else None
    mod_name = _find_module(orig_arch)
    out["dispatched"] = mod_name is not None
    if mod_name is None:
        out["dispatch_error"] = (
            f"no module in sglang/srt/models defines and exports {orig_arch!r}: SGLang's ModelRegistry cannot resolve it"
        )
        mod_name = _find_module(arch) or _find_module(FALLBACK)
    mod = importlib.import_module(mod_name)
    entry = getattr(mod, "EntryClass", [])
    # SGLang's registry takes one class or a list (0.5.11's dflash.py exports a bare class)
    by_name = {c.__name__: c for c in (entry if isinstance(entry, (list, tuple)) else [entry])}
    cls = by_name.get(arch) or by_name[FALLBACK]
    out["class"] = cls.__name__
    out["module"] = mod.__name__

    if draft_config is not None:
        hf_config = draft_config
    else:
        hf_config = _load_config(view, tempfile.mkdtemp(dir=env["tmp"]))
    torch.manual_seed(0)
    dtype = _param_dtype(view, param_dtype, root)
    out["param_dtype"] = str(dtype).replace("torch.", "")
    out["assumptions"].append(
        f"parameters in {out['param_dtype']}"
        + (" (torch default), not the config dtype" if param_dtype == "float32" else " (the config's dtype)")
    )
    if stand_in_over is not None:
        out["assumptions"].append(
            f"checkpoint tensors over {stand_in_over} bytes handed to load_weights as zeros of their exact shape and dtype "
            "(one element of storage, broadcast): names, shapes, routing and fills are measured, not values"
        )
    saved_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        # by keyword, as sglang/srt/model_loader/loader.py _initialize_model does (model_class(config=…, quant_config=…)):
        # some classes take them keyword-only (mistral_large_3_eagle.py MistralLarge3ForCausalLMEagle)
        try:
            model = cls(config=hf_config, quant_config=None)
        except AssertionError as e:
            # a draft whose layers read the DP-attention state at construction (DeepseekV2DecoderLayer's
            # LayerCommunicator, 0.5.11-0.5.16): a server's ModelRunner sets it before building any model, so set it
            # up as it does (once per process) and build again
            if "dp attention not initialized" not in str(e) or "runner_state" in env:
                raise
            env["runner_state"] = _draft_runner_state(env["server_args_obj"], _draft_model_config(view, env["tmp"]))
            out["assumptions"] += env["runner_state"]
            model = cls(config=hf_config, quant_config=None)
    except Exception as e:  # noqa: BLE001  SGLang refusing the config is a result, not a harness failure
        out["errors"].append(f"{type(e).__name__}: {e}")
        out["construct_traceback"] = traceback.format_exc(limit=-3)
        return out
    finally:
        torch.set_default_dtype(saved_dtype)

    leaks = _stub_leaks(model)
    if leaks:  # a stub replaced a real layer: the parameter list would be wrong, so say so and stop
        out["errors"].append(f"HarnessError: stubbed objects inside the model: {leaks}")
        out["harness_failed"] = True
        return out

    named = dict(model.named_parameters())
    by_id = {id(p): n for n, p in named.items()}
    current: list = [None]
    record: dict[str, dict] = {}

    # checkpoint name -> tensor, for tensors the loader fuses itself; held weakly: a tensor the loader let go of can be
    # fused into nothing later, and a multi-GB drafter is never held whole by the harness
    seen = weakref.WeakValueDictionary()
    by_storage: dict = {}  # storage address -> (checkpoint name, weak reference to the tensor read there)

    def wrap(fn):
        def loader(param, loaded_weight, *args, **kwargs):
            shard = args[0] if args else kwargs.get("loaded_shard_id", kwargs.get("shard_id"))
            into = [by_id.get(id(param), "?"), None if shard is None else str(shard)]
            for n in _sources(loaded_weight, seen, by_storage, current[0]):
                record[n]["loaded_into"].append(into)
            return fn(param, loaded_weight, *args, **kwargs)

        return loader

    for p in named.values():
        if hasattr(p, "weight_loader"):
            p.weight_loader = wrap(p.weight_loader)
    # every module on the class's MRO that binds default_weight_loader: 0.4.6-0.4.8's llama_eagle3 hands each name to
    # LlamaForCausalLM.load_weights (sglang/srt/models/llama.py), which calls llama.py's own binding
    saved_defaults = {}
    for klass in type(model).__mro__:
        m = sys.modules.get(klass.__module__)
        if m is not None and m not in saved_defaults and getattr(m, "default_weight_loader", None) is not None:
            saved_defaults[m] = m.default_weight_loader
            m.default_weight_loader = wrap(m.default_weight_loader)
    saved_default = getattr(mod, "default_weight_loader", None) if mod not in saved_defaults else None
    if saved_default is not None:
        mod.default_weight_loader = wrap(saved_default)

    with torch.no_grad():
        for p in named.values():
            p.data.fill_(float("nan"))

    def stream():
        for name, tensor in _weights(root, stand_in_over):
            current[0] = name
            record[name] = {"loaded_into": [], "hot_token_id": False}
            seen[name] = tensor
            by_storage[tensor.untyped_storage().data_ptr()] = (name, weakref.ref(tensor))
            before = getattr(model, "hot_token_id", None)
            yield name, tensor
            record[name]["hot_token_id"] = getattr(model, "hot_token_id", None) is not before

    warned = _Warnings()
    logging.getLogger().addHandler(warned)
    try:
        with _inline_thread_pools():
            model.load_weights(stream())
    except Exception as e:  # noqa: BLE001
        out["errors"].append(f"{type(e).__name__}: {e}")
        out["load_failed_at"] = current[0]
        out["load_traceback"] = traceback.format_exc(limit=-3)
    finally:
        logging.getLogger().removeHandler(warned)
        out["warnings"] = warned.messages
        if saved_default is not None:
            mod.default_weight_loader = saved_default
        for m, fn in saved_defaults.items():
            m.default_weight_loader = fn

    params = {}
    for n, p in named.items():
        nan = _count_nan(p.data)
        params[n] = {"shape": list(p.shape), "written": 1.0 - nan / max(p.numel(), 1)}
    out["params"] = params
    out["filled"] = sorted(n for n, v in params.items() if v["written"] == 1.0)
    out["unfilled"] = sorted(n for n, v in params.items() if v["written"] == 0.0)
    out["partial"] = sorted(n for n, v in params.items() if 0.0 < v["written"] < 1.0)
    out["tensors"] = record
    out["consumed"] = sorted(n for n, r in record.items() if r["loaded_into"] or r["hot_token_id"])
    out["skipped"] = sorted(n for n, r in record.items() if not (r["loaded_into"] or r["hot_token_id"]))
    out["hot_token_id_set"] = getattr(model, "hot_token_id", None) is not None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sglang-dir", help="folder holding the unpacked sglang package (put first on sys.path)")
    ap.add_argument("--config", help="use this config.json instead of CKPT/config.json (one CKPT only)")
    ap.add_argument("--nextn", action="store_true", help="each CKPT is a target: build the NEXTN draft SGLang derives from it")
    ap.add_argument(
        "--param-dtype",
        choices=("float32", "config"),
        default="float32",
        help="float32 (torch's default; the conformance matrices) or the config's dtype (specbridge verify: a bf16 drafter in half the memory)",
    )
    ap.add_argument(
        "--stand-in-over-mb",
        type=float,
        default=None,
        help="hand tensors larger than this (MiB) to load_weights as broadcast zeros of their shape and dtype (specbridge verify: "
        "a multi-GB drafter is not resident twice); the others are read into memory of their own",
    )
    ap.add_argument("ckpt", type=Path, nargs="+", help="drafter folder(s); several share one SGLang import")
    a = ap.parse_args(argv)
    if a.config and len(a.ckpt) > 1:
        ap.error("--config takes one CKPT")
    if a.sglang_dir:
        sys.path.insert(0, os.path.abspath(a.sglang_dir))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):  # SGLang's own prints must not corrupt the JSON
        outs = []
        for c in a.ckpt:
            t0 = time.monotonic()
            stand_in = None if a.stand_in_over_mb is None else int(a.stand_in_over_mb * 2**20)
            outs.append(run(c, a.config, a.nextn, a.param_dtype, stand_in))
            outs[-1]["seconds"] = round(time.monotonic() - t0, 2)  # the first one includes SGLang's import
    out = outs[0] if len(outs) == 1 else outs
    real_stdout.write(json.dumps(out, default=str) + "\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
