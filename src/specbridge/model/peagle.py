"""P-EAGLE's parallel draft step over the EAGLE-3 drafter, as vLLM 0.32.0 runs it (speculative_config.parallel_drafting).

From a verified prefix ending at position e, one forward pass drafts all k tokens (llm_base_proposer.py: one forward
pass when parallel drafting; utils.py copy_and_expand_eagle_inputs_kernel builds its inputs):

    slot 0       token s[e+1], hidden fc(aux h[e])      at position e       (the usual EAGLE-3 input pair)
    slot i ≥ 1   token pard (mask_token_id / pard_token / ptd_token_id), hidden fc(mask_hidden), position e + i

causal over the drafter's cache (the prefix pairs of positions < e) and the slots; slot i's logits draft s[e+2+i].
mask_hidden is as wide as fc's input (the aux states) and goes through fc like them (combine_hidden_states).

`parallel_rows` drafts every row at once: slot i at row t attends to the step-0 keys of positions ≤ t plus its row's
slots 1..i (the same shape as a cached chain, with fixed inputs instead of the previous step's output).
"""

from __future__ import annotations

import math

import torch

from .drafter import Eagle3Drafter, prefix_and_own_attention


@torch.no_grad()
def parallel_rows(
    d: Eagle3Drafter, aux: torch.Tensor, ids: torch.Tensor, k: int, pard_id: int, mask_hidden: torch.Tensor, skip_fc: bool = False
) -> list[torch.Tensor]:
    """aux [1, T, n·Ht] (the target's aux states), ids [1, T] (the token after each position), mask_hidden [n·Ht].
    Returns k logits [T, Vd]: slot j of row t drafts the token at position t + 2 + j."""
    T = ids.shape[1]
    dev = ids.device
    layer = d.layers[0]
    attn = layer.self_attn
    scale = 1.0 / math.sqrt(d.cfg.head_dim)
    rows = torch.arange(T, device=dev)
    causal = rows[None, :] <= rows[:, None]
    g = aux if skip_fc else d.fuse(aux)
    m = mask_hidden.to(aux.dtype).reshape(1, 1, -1)
    gm = (m if skip_fc else d.fuse(m)).expand(1, T, -1)
    pard = torch.full_like(ids, pard_id)
    k0 = v0 = None
    slot_k: list[torch.Tensor] = []
    slot_v: list[torch.Tensor] = []
    out = []
    for slot in range(k):
        tokens, hidden = (ids, g) if slot == 0 else (pard, gm)
        x, residual = layer.attn_inputs(d.embed_tokens(tokens).to(hidden.dtype), hidden)
        cos, sin = d._rope((rows + slot)[None], x.dtype)
        q, kk, vv = attn.project(x, cos, sin)
        if slot == 0:
            k0, v0 = kk, vv
        else:
            slot_k.append(kk)
            slot_v.append(vv)
        o = prefix_and_own_attention(q, k0, v0, slot_k, slot_v, causal, scale)
        out.append(d.head(layer.finish(residual, o))[0])
    return out
