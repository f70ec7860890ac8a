"""Find the era of an engine version. Adding a release means adding or extending an Era row."""

from __future__ import annotations

from . import sglang, trtllm, vllm
from .spec import Era, parse_version

ENGINES: dict[str, tuple[Era, ...]] = {"sglang": sglang.ERAS, "vllm": vllm.ERAS, "trtllm": trtllm.ERAS}
ALIASES = {"tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm", "trt-llm": "trtllm", "trt": "trtllm"}


class EngineSpecError(ValueError):
    pass


def newest_version(era: Era) -> str:
    return max(era.versions_read, key=lambda v: parse_version(v.split(" ")[0]))


def resolve(spec: str) -> list[tuple[Era, str]]:
    """'sglang' (newest), 'sglang==0.5.11', 'vllm' or 'all' -> [(era, version label)]."""
    spec = spec.strip().lower()
    if spec == "all":
        return [(era, newest_version(era)) for eras in ENGINES.values() for era in eras]
    name, _, version = spec.partition("==")
    name = ALIASES.get(name, name)
    if name not in ENGINES:
        raise EngineSpecError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    eras = ENGINES[name]
    if not version:
        return [(eras[-1], newest_version(eras[-1]))]
    try:
        want = parse_version(version)
    except ValueError:
        raise EngineSpecError(f"cannot read version {version!r}") from None
    for era in eras:
        lo = parse_version(era.min_version)
        hi = parse_version(era.max_version) if era.max_version else None
        # an upper bound given without a patch number covers every patch of it
        if hi is not None and era.max_version.count(".") < 2:
            hi = (hi[0], hi[1], 10**9, 10**9)
        elif hi is not None and "post" not in era.max_version:
            hi = (*hi[:3], 10**9)
        if want >= lo and (hi is None or want <= hi):
            return [(era, version)]
    first = eras[0].min_version
    raise EngineSpecError(f"{name} {version} is older than the first release with EAGLE-3 support we model ({first})")
