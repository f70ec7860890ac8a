"""The EAGLE-1/2 draft model in plain PyTorch, as yuhuili/EAGLE's cnets.py and vLLM's llama_eagle.py run it.

One draft position t (the target's last hidden state h[t], after its final norm, and the token after it):

    x      = fc(cat(embed(tok), h[t]))                 # fc [H, 2H], a bias where the model builds one
    per Llama decoder layer i (RoPE, GQA):
        x  = x + o_proj(attn(input_layernorm_i(x)))     # layer 0 has no input_layernorm (an identity)
        x  = x + mlp(post_attention_layernorm_i(x))
    logits = lm_head(x)                                 # no final norm; the target's head unless one is shipped

Step 0 reads tok = s[t+1] and the target's h[t] at position t; step j > 0 reads the drafter's own previous output x
and its own previous token, at position t + j (vLLM's EagleProposer feeds the returned hidden state back).

`forward` is the plain cached decode (one KV cache per layer); `chain_rows` drafts the k-step chain of every row at
once: step j at row t attends to the step-0 keys of positions ≤ t plus its own keys of steps 1..j, which is exactly
what a cached chain from row t sees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .drafter import MLP, Attention, KVCache, RMSNorm, prefix_and_own_attention, rope_cos_sin


@dataclass
class Eagle1Config:
    hidden_size: int
    intermediate_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    num_layers: int
    vocab_size: int  # embedding rows
    head_vocab: int  # lm_head rows (the target's vocab when the target's head is used)
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    fc_bias: bool = True
    attention_bias: bool = False


class Eagle1Layer(nn.Module):
    def __init__(self, c: Eagle1Config, i: int):
        super().__init__()
        self.self_attn = Attention(c, in_width=c.hidden_size, bias=c.attention_bias)
        self.mlp = MLP(c)
        # EAGLE's cnets.py and vLLM's llama_eagle.py (disable_input_layernorm for i == 0): layer 0 reads fc's output as is
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps) if i > 0 else nn.Identity()
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class Eagle1Drafter(nn.Module):
    """Parameter names are the research layout's (`model.` stripped): fc, layers.N.*, embed_tokens, lm_head."""

    def __init__(self, c: Eagle1Config):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.fc = nn.Linear(2 * c.hidden_size, c.hidden_size, bias=c.fc_bias)
        self.layers = nn.ModuleList(Eagle1Layer(c, i) for i in range(c.num_layers))
        self.lm_head = nn.Linear(c.hidden_size, c.head_vocab, bias=False)

    def draft_to_target(self, ids: torch.Tensor) -> torch.Tensor:
        """No vocabulary map: a draft id is a target id."""
        return ids

    def fuse(self, ids: torch.Tensor, feature: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.cat([self.embed_tokens(ids).to(feature.dtype), feature], -1))

    def _rope(self, position_ids: torch.Tensor, dtype: torch.dtype):
        return rope_cos_sin(position_ids, self.c.head_dim, self.c.rope_theta, dtype)

    @torch.no_grad()
    def forward(self, input_ids: torch.Tensor, feature: torch.Tensor, position_ids: torch.Tensor, caches: list[KVCache]):
        """One cached draft pass: input_ids, position_ids [B, T]; feature [B, T, H] (the target's last hidden states,
        or the previous pass's returned hidden); caches: one KVCache per layer. The T queries attend causally to what
        is cached plus themselves. Returns (logits [B, T, Vh], hidden [B, T, H])."""
        x = self.fuse(input_ids, feature)
        cos, sin = self._rope(position_ids, x.dtype)
        for layer, cache in zip(self.layers, caches):
            past = cache.length
            q, k, v = layer.self_attn.project(layer.input_layernorm(x), cos, sin)
            k, v = cache.append(k, v)
            t, s = q.shape[2], k.shape[2]
            mask = torch.ones(t, s, dtype=torch.bool, device=q.device).tril(diagonal=past)
            x = x + layer.self_attn.out(F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.lm_head(x), x

    @torch.no_grad()
    def chain_rows(self, feature: torch.Tensor, ids: torch.Tensor, k: int) -> list[torch.Tensor]:
        """The k-step greedy chain from every row at once: feature [T, H] (h[0..T-1]), ids [T] (the token after each
        position). Returns k logits tensors [T, Vh]; row t of step j drafts the token at position t + 2 + j."""
        T = ids.shape[0]
        dev = ids.device
        rows = torch.arange(T, device=dev)
        causal = rows[None, :] <= rows[:, None]  # [T queries, T prefix keys]
        scale = 1.0 / math.sqrt(self.c.head_dim)
        prefix: list[tuple[torch.Tensor, torch.Tensor]] = []  # per layer: step-0 keys/values [1, nh, T, hd]
        diag: list[list[tuple[torch.Tensor, torch.Tensor]]] = [[] for _ in self.layers]
        hidden, tokens, out = feature[None], ids[None], []
        for step in range(k):
            x = self.fuse(tokens, hidden)
            cos, sin = self._rope((rows + step)[None], x.dtype)
            for i, layer in enumerate(self.layers):
                q, kk, vv = layer.self_attn.project(layer.input_layernorm(x), cos, sin)
                if step == 0:
                    prefix.append((kk, vv))
                else:
                    diag[i].append((kk, vv))
                k0, v0 = prefix[i]
                own_k, own_v = [dk for dk, _ in diag[i]], [dv for _, dv in diag[i]]  # row t's own keys of steps 1..j
                x = x + layer.self_attn.out(prefix_and_own_attention(q, k0, v0, own_k, own_v, causal, scale))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            logits = self.lm_head(x)[0]
            out.append(logits)
            hidden, tokens = x, logits.nan_to_num(nan=0.0).argmax(-1)[None]
        return out
