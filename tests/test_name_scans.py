"""Detection and the MTP finder read ~100 k target names as one text (families/names.py) instead of a Python call
per name (issue #24: a DeepSeek-V3 target inspected well under a second). The text scans must say exactly what the
per-name reading said: structure_votes is compared with the per-name reading it replaced, on the published layouts
and on random names; the layer-number regex with every number; names that hold a newline cannot pose as two."""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from specbridge.families.detect import MEDIUM, MEDUSA_WORDS, _shape, structure_votes
from specbridge.families.medusa import heads as medusa_heads
from specbridge.families.mtp import find_mtp_head
from specbridge.families.names import at_least, lines_with, name_lines

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_mtp_head import deepseek_names, glm_names, mimo_names, qwen3_next_names  # noqa: E402

sys.path.pop(0)

# --- the per-name reading structure_votes had before (the reference) -------------------------------------------

LAYER = re.compile(r"^(?:model\.)?(?:layers\.(\d+)|midlayer)\.")
LAYER_HIDDEN_NORM = re.compile(r"^(layers\.\d+|midlayer)\.hidden_norm\.weight$")


def per_name_votes(shapes: Mapping[str, Sequence[int]]) -> list[tuple[str, int, str]]:
    names = [n[6:] if n.startswith("model.") else n for n in shapes]
    votes: list[tuple[str, int, str]] = []
    fc = _shape(shapes, "fc.weight")
    q0 = _shape(shapes, "layers.0.self_attn.q_proj.weight", "midlayer.self_attn.q_proj.weight")
    name_set = set(names)
    layer_hidden_norm = any(n.endswith(".hidden_norm.weight") and LAYER_HIDDEN_NORM.match(n) for n in names)
    top_hidden_norm = "hidden_norm.weight" in name_set
    layers = {m.group(1) or "0" for n in shapes if (m := LAYER.match(n))}
    h = fc[0] if fc and len(fc) == 2 else None
    q_in = q0[1] if q0 and len(q0) == 2 else None
    if any(n.startswith("candidate_selector.") or ".kernel_projection." in n for n in names):
        votes.append(("dflash2", MEDIUM, "candidate_selector / grouped-conv tensors (DFlash2's selector head)"))
    if fc and top_hidden_norm and h and q_in == h:
        votes.append(
            ("dflash", MEDIUM, f"model-level hidden_norm and fc [{h}, {fc[1]}] over target states, layer-0 q_proj takes {q_in} (not 2×)")
        )
    if fc and h and (layer_hidden_norm or q_in == 2 * h or "midlayer" in layers):
        why = "per-layer hidden_norm" if layer_hidden_norm else ("midlayer.*" if "midlayer" in layers else f"layer-0 q_proj takes 2×{h}")
        votes.append(("eagle3", MEDIUM, f"fc [{h}, {fc[1]}] fusing target states and {why}"))
    if fc and h and fc[1] == 2 * h and not layer_hidden_norm and not top_hidden_norm and q_in in (None, h):
        bias = " with fc.bias" if "fc.bias" in names else ""
        votes.append(("eagle", MEDIUM, f"fc [{h}, {2 * h}] over (embedding, feature){bias} and no hidden_norm"))
    medusa = medusa_heads(shapes)  # name by name: a head number with both a residual block and a vocabulary head
    if medusa:
        what = "each a residual block and a vocabulary head"
        votes.append(("medusa", MEDIUM, f"{len(medusa[1])} Medusa head(s), {what} ({MEDUSA_WORDS[medusa[0]]})"))
    if all(any(re.fullmatch(rf"{part}\.\d+\.weight", n) for n in names) for part in ("emb", "proj", "head")):
        votes.append(("mlp_speculator", MEDIUM, "emb.N / proj.N / head.N tensors"))
    mtp = [n for n in names if n.endswith((".eh_proj.weight", ".enorm.weight", ".hnorm.weight")) or n.startswith(("mtp.", "mtp_"))]
    if mtp and len(layers) >= 2:
        votes.append(("mtp", MEDIUM, f"{len(mtp)} MTP tensor(s) beside {len(layers)} decoder layers (e.g. {mtp[0]})"))
    drafter_parts = fc is not None or "d2t" in name_set or "t2d" in name_set or "midlayer" in layers
    if not drafter_parts and not mtp and len(layers) >= 2 and "embed_tokens.weight" in name_set:
        votes.append(("causal_lm", MEDIUM, f"{len(layers)} decoder layers with an embedding and no fc fusion, vocab map or MTP tensors"))
    return votes


# --- name sets ---------------------------------------------------------------------------------------------

H = 64
EAGLE3 = {"fc.weight": (H, 3 * H), "midlayer.self_attn.q_proj.weight": (H, 2 * H), "midlayer.hidden_norm.weight": (H,), "d2t": (8,)}
EAGLE3_LAYERS = {"fc.weight": (H, 3 * H), "layers.0.self_attn.q_proj.weight": (H, 2 * H), "layers.0.hidden_norm.weight": (H,)}
EAGLE = {"fc.weight": (H, 2 * H), "fc.bias": (H,), "layers.0.self_attn.q_proj.weight": (H, H), "embed_tokens.weight": (9, H)}
DFLASH = {"fc.weight": (H, 3 * H), "hidden_norm.weight": (H,), "layers.0.self_attn.q_proj.weight": (H, H), "layers.1.mlp.x": (1,)}
DFLASH2 = DFLASH | {"candidate_selector.proj.weight": (4, H), "model.layers.0.kernel_projection.w": (2,)}
MEDUSA_NAMES = {"medusa_head.0.0.linear.weight": (H, H), "medusa_head.0.1.weight": (9, H), "medusa_head.1.1.weight": (9, H)}
MEDUSA_VLLM = {"model.blocks.0.layers.0.weight": (H, H), "lm_heads.0.weight": (9, H), "blocks.1.layers.0.weight": (H, H)}
BLOCKS = {"model.blocks.0.linear.weight": (H, H), "blocks.1.attn.qkv.weight": (3 * H, H), "head.weight": (9, H)}  # a ViT's
MLP_SPEC = {f"{p}.{i}.weight": (H,) for p in ("emb", "proj", "head", "ln") for i in range(2)}
CAUSAL = {f"model.layers.{i}.self_attn.q_proj.weight": (H, H) for i in range(3)} | {"model.embed_tokens.weight": (9, H)}
ODD = {
    "model.eh_proj.weight": (1,),  # ends as an MTP part does, but no layer: the per-name reading did not count it
    "model.model.layers.4.x": (1,),
    "layers.5.enorm.weight\nlayers.6.x": (1,),  # a newline inside a name: one name, not two
    "mtp_proj.weight": (1,),
    "x.mtp.y": (1,),
}


def named(names) -> dict:
    return dict.fromkeys(names, ())


LAYOUTS = {
    "deepseek": named(deepseek_names()),
    "glm": named(glm_names()),
    "qwen3_next": named(qwen3_next_names()),
    "qwen3_5": named(qwen3_next_names("model.language_model.")),
    "mimo": named(mimo_names()),
    "eagle3": EAGLE3,
    "eagle3_layers": EAGLE3_LAYERS,
    "eagle": EAGLE,
    "dflash": DFLASH,
    "dflash2": DFLASH2,
    "medusa": MEDUSA_NAMES,
    "medusa_vllm": MEDUSA_VLLM,
    "blocks": BLOCKS,
    "mlp_speculator": MLP_SPEC,
    "causal": CAUSAL,
    "odd": ODD | CAUSAL,
    "empty": {},
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_structure_votes_read_as_the_per_name_reading_did(name):
    shapes = LAYOUTS[name]
    assert structure_votes(shapes) == per_name_votes(shapes)
    shuffled = dict(random.Random(name).sample(sorted(shapes.items()), len(shapes)))  # names need not come grouped
    assert structure_votes(shuffled) == per_name_votes(shuffled)


def test_the_layouts_do_vote_so_the_comparison_means_something():
    voted = {name: {f for f, _, _ in per_name_votes(s)} for name, s in LAYOUTS.items()}
    assert voted["deepseek"] == voted["glm"] == {"mtp"} and voted["causal"] == {"causal_lm"}
    assert {"eagle3", "eagle", "dflash", "dflash2", "medusa", "mlp_speculator"} <= set().union(*voted.values())
    assert voted["medusa"] == voted["medusa_vllm"] == {"medusa"} and voted["blocks"] == set()  # blocks.N alone: no Medusa


def test_structure_votes_on_random_names():
    rng = random.Random(24)
    words = ["model.", "layers.", "midlayer.", "mtp.", "mtp_", "blocks.", "medusa_head.", "emb.", "proj.", "head.", "ln."]
    words += ["0.", "1.", "12.", "eh_proj.", "enorm.", "hnorm.", "hidden_norm.", "weight", "fc.", "d2t", "\n", "candidate_selector."]
    words += ["embed_tokens.", "kernel_projection.", "x", ".", "lm_heads.", "layers.", "linear.", "medusa_heads."]
    for _ in range(400):
        shapes = {"".join(rng.choices(words, k=rng.randint(1, 6))): (H, 2 * H) for _ in range(rng.randint(0, 30))}
        assert structure_votes(shapes) == per_name_votes(shapes), sorted(shapes)


def test_at_least_matches_exactly_the_numbers_from_n():
    for n in [*range(0, 125), 199, 200, 909, 1000, 1234]:
        pattern = re.compile(at_least(n))
        for k in range(0, 1300):
            for text in (str(k), f"0{k}", f"00{k}"):
                assert (pattern.fullmatch(text) is not None) == (k >= n), (n, text)


def test_lines_with_and_name_lines():
    text = name_lines(["a.enorm.weight", "mtp.x", "b", "bad\nmtp.z", "model.mtp.y"])
    assert text.count("\n") == 6  # five names, five lines: the newline inside one became NUL
    assert lines_with(text, "\nmtp.", ".enorm.weight\n", "\nmodel.mtp.") == ["a.enorm.weight", "mtp.x", "model.mtp.y"]
    assert lines_with(text, "mtp") == ["mtp.x", "bad\0mtp.z", "model.mtp.y"]
    assert name_lines([]) == "\n\n" and lines_with("\n\n", "x") == []


def test_mtp_layer_numbers_past_the_decoder_however_written():
    cfg = {"num_hidden_layers": 61, "num_nextn_predict_layers": 1}
    parts = ("enorm.weight", "hnorm.weight", "eh_proj.weight", "shared_head.norm.weight", "mlp.gate.weight")
    names = [f"model.layers.{i}.mlp.gate.weight" for i in range(61)]
    names += [f"model.layers.061.{p}" for p in parts] + [f"model.layers.100.{p}" for p in parts] + ["model.layers.7.enorm.weight"]
    head = find_mtp_head(cfg, names)
    assert [(layer.index, layer.prefix) for layer in head.layers] == [(61, "model.layers.061."), (100, "model.layers.100.")]
    assert head.extra_layers() == [100] and not head.layers[0].missing
    odd = find_mtp_head(cfg, [*names, "model.layers.61.enorm.weight\nx"])  # read name by name: the name as it is
    assert "model.layers.61.enorm.weight\nx" in {n for layer in odd.layers for n in layer.tensors}
