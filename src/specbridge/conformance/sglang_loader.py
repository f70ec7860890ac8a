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
(imported by 0.4.6-0.4.8's utils.py, never called while loading); stand-ins returning ~/.triton/<kind> are put there. Parameters are float32 (torch's default), not the config dtype.
Dispatch is read from SGLang's sources (the sglang/srt/models module whose EntryClass exports
architectures[0]), not by importing SGLang's ModelRegistry (which imports every model).

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
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import sys
import tempfile
import traceback
import types
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


def _publish_server_args(model_dir: str) -> str:
    """Publish a CPU ServerArgs the way the scheduler does; returns which mechanism the version has.

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
        return "runtime_context.publish"
    import sglang.srt.server_args as sam

    sa = ServerArgs(model_path=model_dir, device="cpu")
    if hasattr(sam, "set_global_server_args_for_scheduler"):  # 0.5.4 … 0.5.1x
        sam.set_global_server_args_for_scheduler(sa)
        return "set_global_server_args_for_scheduler"
    try:  # older: a dict in schedule_batch
        from sglang.srt.managers import schedule_batch

        schedule_batch.global_server_args_dict.update({k: getattr(sa, k) for k in schedule_batch.global_server_args_dict if hasattr(sa, k)})
        return "schedule_batch.global_server_args_dict"
    except (ImportError, AttributeError):
        return "none"


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


def _weights(root: Path):
    """(name, tensor) in the order SGLang's DefaultModelLoader yields them: files sorted, keys per file."""
    from safetensors import safe_open

    index = root / "model.safetensors.index.json"
    if index.is_file():
        files = sorted({root / f for f in json.loads(index.read_text())["weight_map"].values()})
    else:
        files = sorted(root.glob("*.safetensors"))
    for f in files:
        with safe_open(str(f), framework="pt") as fh:
            for name in fh.keys():
                yield name, fh.get_tensor(name)


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
            server_args=_publish_server_args(str(model_dir)),
        )
        _init_distributed(tmp)
    return _READY


def run(root: Path, config_json: str | None = None) -> dict:
    """Build SGLang's drafter class for ROOT's config and run its load_weights over ROOT's tensors."""
    view, notes, orig_arch = _config_view(root, config_json)
    env = setup(view)
    import torch

    out: dict = {
        "checkpoint": str(root),
        "sglang_version": env["sglang_version"],
        "server_args": env["server_args"],
        "errors": [],
        "assumptions": [f"stubbed modules: {env['stubs']}", "parameters in float32 (torch default), not the config dtype"],
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

    cfg_dir = tempfile.mkdtemp(dir=env["tmp"])
    hf_config = _load_config(view, cfg_dir)
    torch.manual_seed(0)
    try:
        model = cls(hf_config, quant_config=None)
    except Exception as e:  # noqa: BLE001  SGLang refusing the config is a result, not a harness failure
        out["errors"].append(f"{type(e).__name__}: {e}")
        out["construct_traceback"] = traceback.format_exc(limit=-3)
        return out

    leaks = _stub_leaks(model)
    if leaks:  # a stub replaced a real layer: the parameter list would be wrong, so say so and stop
        out["errors"].append(f"HarnessError: stubbed objects inside the model: {leaks}")
        out["harness_failed"] = True
        return out

    named = dict(model.named_parameters())
    by_id = {id(p): n for n, p in named.items()}
    current: list = [None]
    record: dict[str, dict] = {}

    def wrap(fn):
        def loader(param, loaded_weight, *args, **kwargs):
            shard = args[0] if args else kwargs.get("loaded_shard_id", kwargs.get("shard_id"))
            record[current[0]]["loaded_into"].append([by_id.get(id(param), "?"), None if shard is None else str(shard)])
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
        for name, tensor in _weights(root):
            current[0] = name
            record[name] = {"loaded_into": [], "hot_token_id": False}
            before = getattr(model, "hot_token_id", None)
            yield name, tensor
            record[name]["hot_token_id"] = getattr(model, "hot_token_id", None) is not before

    try:
        model.load_weights(stream())
    except Exception as e:  # noqa: BLE001
        out["errors"].append(f"{type(e).__name__}: {e}")
        out["load_failed_at"] = current[0]
        out["load_traceback"] = traceback.format_exc(limit=-3)
    finally:
        if saved_default is not None:
            mod.default_weight_loader = saved_default
        for m, fn in saved_defaults.items():
            m.default_weight_loader = fn

    params = {}
    for n, p in named.items():
        nan = torch.isnan(p.data.float()).sum().item()
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
    ap.add_argument("ckpt", type=Path, nargs="+", help="drafter folder(s); several share one SGLang import")
    a = ap.parse_args(argv)
    if a.config and len(a.ckpt) > 1:
        ap.error("--config takes one CKPT")
    if a.sglang_dir:
        sys.path.insert(0, os.path.abspath(a.sglang_dir))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):  # SGLang's own prints must not corrupt the JSON
        outs = [run(c, a.config) for c in a.ckpt]
    out = outs[0] if len(outs) == 1 else outs
    real_stdout.write(json.dumps(out, default=str) + "\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
