"""`--target` as people give it, resolved the same way by every command: a model directory, its
config.json, a HF cache directory, a Hub id, or a known alias (`smollm2-135m`)."""

from __future__ import annotations

from pathlib import Path

from ..checkpoint.aliases import KNOWN_TARGETS, alias_config_dir, is_alias, materialized_dir
from ..checkpoint.hubref import hub_ref_or_none
from .contract import CliError


def open_target_arg(spec: str | Path):
    """The target's facts for the header-only rules (config.json; weights only where present)."""
    from ..checkpoint.target import open_target
    from .guards import refuse_drafter_as_target

    info = open_target(alias_config_dir(str(spec)) if is_alias(spec) else spec)
    refuse_drafter_as_target(info)
    return info


def loadable_target(spec: str) -> str:
    """What eval and train load with transformers, resolved as every other command resolves --target
    (open_target_arg: a model directory, its config.json, a HF cache directory, an alias; a drafter
    refused), before anything is loaded: the alias, or the directory holding the config. A Hub id is
    refused (exit 2): these commands run the weights, and downloading a whole model is not done unasked."""
    from ..checkpoint.errors import CheckpointError

    try:
        info = open_target_arg(spec)
    except CheckpointError as e:
        raise CliError(str(e)) from None
    if is_alias(spec):
        return str(spec)
    if info.hub is not None:
        raise CliError(
            f"--target {spec}: the target's weights are needed and are not on disk here: "
            f"download them (hf download {info.hub.repo_id}) and pass that directory"
        )
    return str(info.path)


def servable_target(spec: str | Path):
    """(what to hand the engine, the target's facts or None): an absolute model directory, or a Hub id
    the engine downloads itself. Anything else would print a command that cannot start: refused (exit 1)."""
    from ..checkpoint.errors import CheckpointError

    text = str(spec).strip()
    if is_alias(text):
        full = materialized_dir(text.lower())
        if not (full / "config.json").is_file():
            raise CliError(
                f"target {text!r} is a specbridge alias with no model on disk yet: run `specbridge eval … --target {text}` "
                f"once (it materializes {full}), or pass a model directory",
                1,
            )
        return str(full), open_target_arg(full)
    p = Path(text)
    if p.exists():
        try:
            info = open_target_arg(p)
        except CheckpointError as e:
            raise CliError(f"target {text!r} is not a model directory ({e})", 1) from None
        return str(info.path.absolute()), info
    if hub_ref_or_none(text) is not None:
        try:
            return text, open_target_arg(text)
        except CheckpointError:
            return text, None  # the engine resolves Hub ids itself; said in a note
    known = ", ".join(KNOWN_TARGETS)
    raise CliError(f"target {text!r} is not a model directory, a Hub id (org/name) or a known alias ({known})", 1)
