"""The DFlash (block-diffusion) draft model in plain PyTorch, as vLLM's qwen3_dflash.py and z-lab's dflash/model.py run it.

One draft step from a verified prefix s[0..r] (the target's hidden states known at positions 0..r) and the token the
target just produced, s[r+1]:

    ctx      = hidden_norm(fc(cat(h_b1[0..r], h_b2[0..r], …)))      # target states at the engine's boundaries
    block    = [s[r+1], mask, mask, …, mask]                         # k + 1 tokens at positions r+1 … r+1+k
    x        = embed(block)                                           # the mask row: mask_embedding when shipped
    per layer (Qwen3, q/k RMSNorm per head, RoPE):
        q        = q_norm(q_proj(input_layernorm(x)))                 # block queries only
        k, v     = [k_norm(k_proj(ctx)), k_norm(k_proj(ln(x)))], [v_proj(ctx), v_proj(ln(x))]
        x        = x + o_proj(attn(q, k, v))                          # the whole context + the block, not causal
        x        = x + mlp(post_attention_layernorm(x))                # within the block (per-layer config may say so)
    draft j  = argmax lm_head(norm(x))[slot j+1]  (+ d2t)             # slot j+1 predicts s[r+2+j]

The context's keys and values come from the projected target features directly (the layer's k_proj/v_proj over
hidden_norm(fc(·)), never through the draft layers), exactly vLLM's precompute_and_store_context_kv and z-lab's
Qwen3DFlashAttention (k_ctx = k_proj(target_hidden)). Optional per-head attention sinks (MiMo: an extra logit per head
in the softmax denominator, vLLM's `sinks`), sliding windows and causal layers follow the config as vLLM resolves
them (_resolve_layer_attention).

`draft_rows` drafts many rows at once: row r's block attends to context positions ≤ r only, so one pass over the
target's hidden states drafts every position a decode could visit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from .drafter import RMSNorm, apply_rope, rope_cos_sin


@dataclass
class DFlashConfig:
    hidden_size: int  # H of the draft layers
    intermediate_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    num_layers: int
    vocab_size: int  # target vocab V (embedding rows)
    draft_vocab_size: int  # Vd (head rows)
    fc_in: int  # target hidden size × number of target states
    mask_token_id: int
    block_size: int = 16
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1000000.0
    attention_bias: bool = False
    use_aux: bool = True  # False: no fc, the target's last state goes in directly
    sink: bool = False  # per-head attention sink bias
    causal: list[bool] = field(default_factory=list)  # per layer; empty = all non-causal
    sliding_window: list[int | None] = field(default_factory=list)  # per layer; empty = none
    v_scale: float | None = None  # dflash_config.attention_value_scale

    def layer_causal(self, i: int) -> bool:
        return bool(self.causal[i]) if self.causal else False

    def layer_window(self, i: int) -> int | None:
        return self.sliding_window[i] if self.sliding_window else None

    @classmethod
    def from_hf(cls, cfg: dict, fc_in: int, vocab_size: int, draft_vocab_size: int) -> DFlashConfig:
        """From a DFlash config.json, resolving causality and windows per layer as vLLM 0.32.0 does."""
        dc = cfg.get("dflash_config") or {}
        H, nh = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
        L = int(cfg["num_hidden_layers"])
        rope = cfg.get("rope_parameters") or {}
        causal, windows = _layer_attention(cfg, L)
        mask = dc.get("mask_token_id", cfg.get("mask_token_id"))
        return cls(
            hidden_size=H,
            intermediate_size=int(cfg["intermediate_size"]),
            num_heads=nh,
            num_kv_heads=int(cfg.get("num_key_value_heads") or nh),
            head_dim=int(cfg.get("head_dim") or H // nh),
            num_layers=L,
            vocab_size=vocab_size,
            draft_vocab_size=draft_vocab_size,
            fc_in=fc_in,
            mask_token_id=int(mask) if mask is not None else -1,
            block_size=int(dc.get("block_size", cfg.get("block_size", 16))),
            rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=float(rope.get("rope_theta") or cfg.get("rope_theta") or 1000000.0),
            attention_bias=bool(cfg.get("attention_bias", False)),
            use_aux=bool(dc.get("use_aux_hidden_state", cfg.get("use_aux_hidden_state", True))),
            sink=bool(dc.get("attention_sink_bias", cfg.get("add_swa_attention_sink_bias", False))),
            causal=causal,
            sliding_window=windows,
            v_scale=dc.get("attention_value_scale"),
        )


def _layer_attention(cfg: dict, L: int) -> tuple[list[bool], list[int | None]]:
    """(causal, sliding window) per layer: vllm/model_executor/models/qwen3_dflash.py @ 0.32.0 _resolve_layer_attention
    and _dflash_layer_causal (is_causal, else dflash_config.causal, else sliding layers are causal)."""
    dc = cfg.get("dflash_config") or {}
    types = cfg.get("layer_types")
    use_swa = bool(dc.get("use_swa", False))
    any_sliding = bool(types) and any(t == "sliding_attention" for t in types)
    causal, windows = [], []
    for i in range(L):
        if cfg.get("is_causal") is not None:
            c = bool(cfg["is_causal"])
        elif dc.get("causal") is not None:
            c = bool(dc["causal"])
        else:
            c = bool(types) and types[i] == "sliding_attention"
        sliding = use_swa if (types is None or (use_swa and not any_sliding)) else types[i] == "sliding_attention"
        causal.append(c)
        windows.append(dc.get("swa_window_size", cfg.get("sliding_window")) if sliding else None)
    return causal, windows


class DFlashAttention(nn.Module):
    def __init__(self, c: DFlashConfig, i: int):
        super().__init__()
        self.c, self.causal, self.window = c, c.layer_causal(i), c.layer_window(i)
        H, nh, nkv, hd = c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim
        self.q_proj = nn.Linear(H, nh * hd, bias=c.attention_bias)
        self.k_proj = nn.Linear(H, nkv * hd, bias=c.attention_bias)
        self.v_proj = nn.Linear(H, nkv * hd, bias=c.attention_bias)
        self.o_proj = nn.Linear(nh * hd, H, bias=c.attention_bias)
        self.q_norm = RMSNorm(hd, c.rms_norm_eps)
        self.k_norm = RMSNorm(hd, c.rms_norm_eps)
        if c.sink:
            self.attention_sink_bias = nn.Parameter(torch.zeros(nh))

    def kv(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x [..., T, H] → k (normed, rotated), v: [..., nkv, T, hd]."""
        c = self.c
        k = self.k_norm(self.k_proj(x).unflatten(-1, (c.num_kv_heads, c.head_dim))).transpose(-2, -3)
        v = self.v_proj(x).unflatten(-1, (c.num_kv_heads, c.head_dim)).transpose(-2, -3)
        if c.v_scale is not None:
            v = v * c.v_scale
        return apply_rope(k, cos, sin), v

    def forward(self, x, ctx_kv, q_pos, ctx_pos, rows, rope_q):
        """x [R, B, H] (normed block inputs); ctx_kv: k, v [nkv, T, hd]; q_pos [R, B]; ctx_pos [T]; rows [R]."""
        c = self.c
        R, B, _ = x.shape
        cos, sin = rope_q
        q = self.q_norm(self.q_proj(x).unflatten(-1, (c.num_heads, c.head_dim))).transpose(1, 2)  # [R, nh, B, hd]
        q = apply_rope(q, cos, sin)
        kb, vb = self.kv(x, cos, sin)  # [R, nkv, B, hd]
        kc, vc = ctx_kv
        g = c.num_heads // c.num_kv_heads
        kc, vc = kc.repeat_interleave(g, 0), vc.repeat_interleave(g, 0)  # [nh, T, hd]
        kb, vb = kb.repeat_interleave(g, 1), vb.repeat_interleave(g, 1)
        scale = 1.0 / math.sqrt(c.head_dim)
        s_ctx = torch.einsum("rhbd,htd->rhbt", q, kc) * scale  # [R, nh, B, T]
        s_blk = (q @ kb.transpose(-1, -2)) * scale  # [R, nh, B, B]
        # row r sees context positions ≤ r; the block sees itself (causal only where the layer is)
        vis_ctx = (ctx_pos[None, None, :] <= rows[:, None, None]).expand(R, B, -1)
        vis_blk = torch.ones(B, B, dtype=torch.bool, device=x.device)
        if self.causal:
            vis_blk = torch.tril(vis_blk)
        if self.window is not None:
            w = self.window
            vis_ctx = vis_ctx & (q_pos[:, :, None] - ctx_pos[None, None, :] < w)
            d = torch.arange(B, device=x.device)
            near = (d[:, None] - d[None, :]) < w
            vis_blk = vis_blk & near & (near.T if not self.causal else True)
        vis_blk = vis_blk[None].expand(R, B, B)
        scores = torch.cat([s_ctx, s_blk], -1).float()
        scores = scores.masked_fill(~torch.cat([vis_ctx, vis_blk], -1)[:, None], float("-inf"))
        if c.sink:
            sink = self.attention_sink_bias.float()[None, :, None, None].expand(R, -1, B, 1)
            probs = torch.softmax(torch.cat([scores, sink], -1), -1)[..., :-1]
        else:
            probs = torch.softmax(scores, -1)
        probs = probs.to(q.dtype)
        T = kc.shape[1]
        out = torch.einsum("rhbt,htd->rhbd", probs[..., :T], vc) + probs[..., T:] @ vb
        return self.o_proj(out.transpose(1, 2).flatten(-2))


class DFlashMLP(nn.Module):
    def __init__(self, c: DFlashConfig):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DFlashLayer(nn.Module):
    def __init__(self, c: DFlashConfig, i: int):
        super().__init__()
        self.self_attn = DFlashAttention(c, i)
        self.mlp = DFlashMLP(c)
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class DFlashDrafter(nn.Module):
    """Parameter names are the checkpoint's (z-lab / vLLM layout, `model.` stripped), plus the target-shared
    embed_tokens and lm_head, the optional mask_embedding (mask_embedding.pt) and the d2t vocab map."""

    def __init__(self, c: DFlashConfig):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.fc = nn.Linear(c.fc_in, c.hidden_size, bias=False) if c.use_aux else None
        self.hidden_norm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.layers = nn.ModuleList(DFlashLayer(c, i) for i in range(c.num_layers))
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.lm_head = nn.Linear(c.hidden_size, c.draft_vocab_size, bias=False)
        self.mask_embedding: torch.Tensor | None = None  # set to [H] to replace the mask row (mask_embedding.pt)
        self.register_buffer("d2t", torch.zeros(c.draft_vocab_size, dtype=torch.long))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.embed_tokens(ids)
        if self.mask_embedding is not None:
            e = torch.where((ids == self.c.mask_token_id)[..., None], self.mask_embedding.to(e.dtype), e)
        return e

    def context(self, aux: torch.Tensor) -> torch.Tensor:
        """[T, n·Ht] target states → [T, H] context features."""
        return self.hidden_norm(self.fc(aux) if self.fc is not None else aux)

    def draft_to_target(self, ids: torch.Tensor) -> torch.Tensor:
        return ids + self.d2t[ids]

    @torch.no_grad()
    def draft_rows(self, aux: torch.Tensor, ids: torch.Tensor, rows: torch.Tensor, k: int, chunk: int = 64) -> torch.Tensor:
        """Logits [R, k, Vd] of the k drafted slots for each row r in `rows`: context = aux[0..r], block = [ids[r+1],
        mask × k] at positions r+1 … r+1+k. aux [T, n·Ht], ids [≥ max(rows)+2]."""
        ctx = self.context(aux)
        T = ctx.shape[0]
        ctx_pos = torch.arange(T, device=ctx.device)
        cos_c, sin_c = rope_cos_sin(ctx_pos[None], self.c.head_dim, self.c.rope_theta, ctx.dtype)
        ctx_kv = []
        for layer in self.layers:
            kc, vc = layer.self_attn.kv(ctx, cos_c[0], sin_c[0])
            ctx_kv.append((kc, vc))
        out = []
        for s in range(0, rows.shape[0], chunk):
            r = rows[s : s + chunk]
            block = torch.full((r.shape[0], k + 1), self.c.mask_token_id, dtype=torch.long, device=ctx.device)
            block[:, 0] = ids[r + 1]
            q_pos = r[:, None] + 1 + torch.arange(k + 1, device=ctx.device)
            rope_q = rope_cos_sin(q_pos, self.c.head_dim, self.c.rope_theta, ctx.dtype)
            x = self.embed(block)
            for layer, kv in zip(self.layers, ctx_kv):
                x = x + layer.self_attn(layer.input_layernorm(x), kv, q_pos, ctx_pos, r, rope_q)
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            out.append(self.lm_head(self.norm(x[:, 1:])))
        return torch.cat(out, 0)
