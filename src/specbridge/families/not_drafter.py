"""Checkpoints that are no drafter of any family, named by what their whole structure shows: a vision model, a LoRA
adapter, a state-space (Mamba) model and a reward or value head on a causal LM. Each is refused with one line that
says what was seen (exit 2, no findings), before any family vote could read one name of it as a drafter's part: a
timm ViT's `blocks.N.` is not a Medusa head, a reward model's decoder stack is not a draft model. Names only, read with
or without "model." (and a PEFT adapter's `base_model.model.`). Its patterns are compiled only for a checkpoint that
reaches them (specbridge/later.py): a drafter passes on the substring scan alone."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from ..later import Later

# a vision tower's patch embedding, class token and position table (timm: patch_embed.proj, cls_token, pos_embed;
# transformers ViT / CLIP / SigLIP: embeddings.patch_embeddings.projection, vision_model.embeddings.patch_embedding)
VISION = Later(r"(?:^|\.)(?:patch_embed\.proj\.weight|patch_embeddings?(?:\.projection)?\.weight|cls_token|pos_embed)$")
# PEFT's LoRA factors (peft/tuners/lora/layer.py: lora_A / lora_B, lora_embedding_A / _B)
LORA = Later(r"\.lora_(?:A|B|embedding_A|embedding_B)(?:\.[^.]+)?\.weight$|\.lora_(?:embedding_)?[AB]$")
# a selective state-space block (mamba_ssm / transformers MambaMixer): A_log, D, conv1d and its projections
SSM_PARTS = {"A_log": Later(r"(?:^|\.)A_log$"), "D": Later(r"(?:^|\.)D$"), "conv1d": Later(r"\.conv1d\.weight$")}
SSM_PROJ = Later(r"\.(?:x_proj|dt_proj|in_proj)\.weight$")
ATTENTION = Later(r"\.(?:self_attn|attn|attention|linear_attn)\.|\.q_proj\.weight$")
# a scalar head in place of the vocabulary head (transformers *ForSequenceClassification `score`, TRL's value head
# `v_head.summary`, OpenRLHF / DeepSpeed-Chat reward heads)
REWARD_HEAD = Later(r"^(?:score|v_head(?:\.summary)?|value_head|reward_head|rm_head)\.weight$")
REWARD_ARCH = Later(r"(?:ForSequenceClassification|ForTokenClassification|RewardModel|ForRewardModel|ValueHead)$")
MTP_WORDS = (".eh_proj.", ".enorm.", ".hnorm.", "mtp")
# substrings one of which every case above needs: most checkpoints (a target's ~100 k names) are passed by one scan
NEEDLES = ("lora_", "patch_embed", "cls_token", "pos_embed", "A_log", "score.", "v_head", "value_head", "reward_head", "rm_head")


def _bare(name: str) -> str:
    for prefix in ("base_model.model.", "model."):
        name = name.removeprefix(prefix)
    return name


def what_it_is(config: Mapping | None, shapes: Mapping[str, object] | Collection[str]) -> str | None:
    """One line naming what a checkpoint that is no drafter is, with the names that show it; None for anything a
    drafter family (or a target carrying an MTP head) could be."""
    config = config or {}
    arch = _arch(config)
    text = "\n".join(shapes)
    if not any(w in text for w in NEEDLES) and "peft_type" not in config and not (arch and REWARD_ARCH.search(arch)):
        return None
    names = [_bare(n) for n in shapes]
    lora = [n for n in names if LORA.search(n)]
    if lora or "peft_type" in config:
        return f"a LoRA adapter ({_seen(lora or ['peft_type in the config'])}): merge it into its base model; it is no drafter"
    if any(w in n for n in names for w in MTP_WORDS):  # a target's own head: read by the MTP family
        return None
    vision = [n for n in names if VISION.search(n)]
    if vision and not any(n.endswith(("embed_tokens.weight", "lm_head.weight")) for n in names):
        return f"a vision model ({_seen(vision)}{f', architectures[0] {arch!r}' if arch else ''}): no drafter family reads images alone"
    ssm = {part: [n for n in names if rx.search(n)] for part, rx in SSM_PARTS.items()}
    proj = [n for n in names if SSM_PROJ.search(n)]
    if all(ssm.values()) and proj and not any(ATTENTION.search("." + n) for n in names):
        shown = [ssm["A_log"][0], ssm["D"][0], ssm["conv1d"][0], proj[0]]
        return f"a state-space (Mamba) model ({_seen(shown)}; no attention): no drafter family is built of state-space blocks"
    heads = [n for n in names if REWARD_HEAD.match(n)]
    if heads or (arch and REWARD_ARCH.search(arch)):
        said = _seen(heads) + (f", architectures[0] {arch!r}" if arch else "") if heads else f"architectures[0] {arch!r}"
        return f"a reward / value model ({said}): a scalar head on a causal LM, not a drafter nor a draft model"
    return None


def adapter_dir_line(root, config: Mapping) -> str:
    """The refusal for a PEFT adapter directory (adapter_config.json, no config.json)."""
    base = config.get("base_model_name_or_path")
    kind = config.get("peft_type", "PEFT")
    return (
        f"a {kind} adapter (adapter_config.json{f', base model {base!r}' if base else ''}): merge it into its base model; it is no drafter"
    )


def _arch(config: Mapping) -> str | None:
    archs = config.get("architectures")
    return archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None


def _seen(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" … (+{len(names) - 3})" if len(names) > 3 else "")
