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

DFlash2 (vllm/model_executor/models/qwen3_dflash2.py @ 0.32.0, z-lab's dflash 0.1.0 DFlash2DraftModel) is this model
plus three small parts, all switched on by its `dflash_config`:

    embed      × input_embedding_scale
    per layer  a = conv_a1(attn(conv_a0(ln(x))));  m = conv_m1(mlp(conv_m0(post_ln(x + a))))
               conv(y)[j] = Σ_t (base[t] + proj(y)[j, t, group]) ⊙ y[j - t]   (causal within the block, zero before it;
                            `prepare` computes both sides' coefficients from its input, `finish` reuses side 1's)
    selector   per slot the head's top-K candidates, scored unary + <pred[prev] ⊙ P·h_j, succ[cand]>; greedy walk from
               the anchor s[r+1] (DFlash2Speculator / CandidateSampler on Model Runner V2: argmax at temperature 0)

The context's keys and values are not convolved (the convolutions wrap the block's attention input and output only).

DSpark (vllm/model_executor/models/qwen3_dspark.py and the V2 DSparkSpeculator, vllm/v1/worker/gpu/spec_decode/dspark/
speculator.py @ 0.32.0; DeepSeek's DeepSpec deepspec/modeling/dspark) is DFlash's backbone with another block and a
sequential head:

    block      [s[r+1], mask × (k-1)] at positions r+1 … r+k, slot j predicting s[r+2+j] (sample_from_anchor, the
               default; false: DFlash's 1 + k block)
    markov     prev = s[r+1]; per slot j: logits_j = lm_head(h_j) + markov_w2(markov_w1[prev]); draft_j = argmax;
               prev = d2t(draft_j)   (dspark_draft_topk K: only the head's top-K per slot get the bias, the rest -inf)
    confidence sigmoid(proj(cat(h_j, markov_w1[prev_j])))  (per slot; read by adaptive verification only, never by the
               drafted tokens)

vLLM scales base logits and bias alike (LogitsProcessor's logit_scale > 0): the greedy draft does not depend on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from .drafter import MLP, RMSNorm, apply_rope, rope_cos_sin


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
    # DFlash2 (all 0 / 1.0 for DFlash)
    conv_taps: int = 0  # dflash_config.conv_kernel_size
    conv_group: int = 0  # dflash_config.conv_group_size (channels per group)
    selector_rank: int = 0
    selector_top_k: int = 0
    embed_scale: float = 1.0  # dflash_config.input_embedding_scale
    output_multiplier: float = 1.0  # the selector's unary logits: × output_multiplier, then the softcap
    softcap: float = 0.0  # dflash_config.final_logit_softcapping (0: none)
    # DSpark (dspark False for DFlash / DFlash2)
    dspark: bool = False
    markov_rank: int = 0
    markov_topk: int | None = None  # dspark_draft_topk: the Markov bias over the head's top-K only
    sample_from_anchor: bool = False  # the block is [anchor, mask × (k-1)], every slot predicting the next token
    confidence: bool = False  # enable_confidence_head
    confidence_with_markov: bool = False

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
        # DFlash2's extras: vLLM reads input_embedding_scale, output_multiplier and the softcap in qwen3_dflash2.py only
        # (DFlash2Qwen3Model.embed_input_ids, candidate_logits_processor); its DFlash class ignores them
        df2 = any(dc.get(key) for key in ("conv_kernel_size", "selector_rank"))
        mask = dc.get("mask_token_id", cfg.get("mask_token_id"))
        # DSpark: vLLM builds a Markov head from config.markov_rank (qwen3_dspark.py Qwen3DSparkModel); the noise token
        # falls back to dspark_noise_token_id (spec_decode/utils.py get_parallel_drafting_token_id), the block size to
        # dspark_block_size, sample_from_anchor defaults to true (DSparkSpeculator.__init__)
        dspark = "markov_rank" in cfg
        if dspark and mask is None:
            mask = cfg.get("dspark_noise_token_id")
        block = dc.get("block_size", cfg.get("block_size", cfg.get("dspark_block_size", 16) if dspark else 16))
        conf = dspark and bool(cfg.get("enable_confidence_head", False))
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
            block_size=int(block),
            rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=float(rope.get("rope_theta") or cfg.get("rope_theta") or 1000000.0),
            attention_bias=bool(cfg.get("attention_bias", False)),
            use_aux=bool(dc.get("use_aux_hidden_state", cfg.get("use_aux_hidden_state", True))),
            sink=bool(dc.get("attention_sink_bias", cfg.get("add_swa_attention_sink_bias", False))),
            causal=causal,
            sliding_window=windows,
            v_scale=dc.get("attention_value_scale"),
            conv_taps=int(dc.get("conv_kernel_size") or 0),
            conv_group=int(dc.get("conv_group_size") or 0),
            selector_rank=int(dc.get("selector_rank") or 0),
            selector_top_k=int(dc.get("selector_top_k") or 0),
            embed_scale=float(dc.get("input_embedding_scale", 1.0)) if df2 else 1.0,
            output_multiplier=float(dc.get("output_multiplier", 1.0)) if df2 else 1.0,
            softcap=float(dc.get("final_logit_softcapping") or 0.0) if df2 else 0.0,
            dspark=dspark,
            markov_rank=int(cfg.get("markov_rank") or 0) if dspark else 0,
            markov_topk=int(cfg["dspark_draft_topk"]) if dspark and cfg.get("dspark_draft_topk") is not None else None,
            sample_from_anchor=dspark and bool(cfg.get("sample_from_anchor", True)),
            confidence=conf,
            confidence_with_markov=conf and bool(cfg.get("confidence_head_with_markov", False)),
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


class GroupedConv(nn.Module):
    """DFlash2's grouped dynamic convolution over the block (qwen3_dflash2.py DFlashGroupedConv, its CPU path
    _grouped_conv): per channel group, taps coefficients base[side, t] + kernel_projection(input)[side, t, group]."""

    def __init__(self, c: DFlashConfig):
        super().__init__()
        self.taps, self.grp, self.ngrp = c.conv_taps, c.conv_group, c.hidden_size // c.conv_group
        self.base_kernel = nn.Parameter(torch.zeros(2, c.conv_taps, c.hidden_size))
        self.kernel_projection = nn.Linear(c.hidden_size, 2 * c.conv_taps * self.ngrp, bias=False)

    def _convolve(self, y: torch.Tensor, delta: torch.Tensor, side: int) -> torch.Tensor:
        """y [R, B, H], delta [R, B, taps, ngrp] → [R, B, H]; tap t reads slot j - t of the same block (zero before it)."""
        blocks = y.unflatten(-1, (self.ngrp, self.grp))
        coef = self.base_kernel[side].view(1, 1, self.taps, self.ngrp, self.grp) + delta[..., None]
        out = coef[:, :, 0] * blocks
        for t in range(1, self.taps):
            out = out + coef[:, :, t] * F.pad(blocks[:, :-t], (0, 0, 0, 0, t, 0))
        return out.flatten(-2)

    def prepare(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        coef = self.kernel_projection(y).unflatten(-1, (2, self.taps, self.ngrp))
        return self._convolve(y, coef[..., 0, :, :], 0), coef[..., 1, :, :]

    def finish(self, y: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        return self._convolve(y, delta, 1)


class CandidateSelector(nn.Module):
    """DFlash2's candidate selector (qwen3_dflash2.py CandidateSelector/_score_edges and the V2 DFlash2Speculator's
    walk, CandidateSampler._selector_walk_kernel; z-lab's CandidateSelector.select): greedy, one slot after another."""

    def __init__(self, c: DFlashConfig):
        super().__init__()
        self.top_k = c.selector_top_k
        self.predecessor_codebook = nn.Parameter(torch.zeros(c.draft_vocab_size, c.selector_rank))
        self.successor_codebook = nn.Parameter(torch.zeros(c.draft_vocab_size, c.selector_rank))
        self.hidden_projection = nn.Linear(c.hidden_size, c.selector_rank, bias=False)

    def walk(self, hidden: torch.Tensor, logits: torch.Tensor, anchor: torch.Tensor) -> torch.Tensor:
        """hidden [R, k, H] (after the final norm), logits [R, k, Vd] (scaled, capped), anchor [R] → tokens [R, k]."""
        unary, cand = torch.topk(logits, self.top_k, dim=-1)
        h = self.hidden_projection(hidden)
        prev, path = anchor, []
        for j in range(hidden.shape[1]):
            pair = torch.einsum("rq,rkq->rk", self.predecessor_codebook[prev] * h[:, j], self.successor_codebook[cand[:, j]])
            pick = (unary[:, j] + pair).argmax(-1)
            prev = cand[:, j].gather(-1, pick[:, None])[:, 0]
            path.append(prev)
        return torch.stack(path, 1)


class MarkovHead(nn.Module):
    """DSpark's transition bias (qwen3_dspark.py DSparkMarkovHead): markov_w1 [V, rank] embeds the previous token
    (target vocab), markov_w2 [Vd, rank] projects it to a draft-vocab bias."""

    def __init__(self, c: DFlashConfig):
        super().__init__()
        self.markov_w1 = nn.Embedding(c.vocab_size, c.markov_rank)
        self.markov_w2 = nn.Linear(c.markov_rank, c.draft_vocab_size, bias=False)


class ConfidenceHead(nn.Module):
    """DSpark's acceptance-confidence head (DSparkConfidenceHead): one logit per slot from the slot's hidden state
    (and the Markov embedding of its previous token)."""

    def __init__(self, c: DFlashConfig):
        super().__init__()
        self.with_markov = c.confidence_with_markov
        self.proj = nn.Linear(c.hidden_size + (c.markov_rank if c.confidence_with_markov else 0), 1, bias=True)


class DFlashLayer(nn.Module):
    def __init__(self, c: DFlashConfig, i: int):
        super().__init__()
        self.self_attn = DFlashAttention(c, i)
        self.mlp = MLP(c)
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.attention_conv = GroupedConv(c) if c.conv_taps else None  # DFlash2
        self.mlp_conv = GroupedConv(c) if c.conv_taps else None

    def attn(self, x, *args):
        """The attention branch (residual excluded), wrapped in DFlash2's convolution where there is one."""
        y = self.input_layernorm(x)
        if self.attention_conv is None:
            return self.self_attn(y, *args)
        y, coef = self.attention_conv.prepare(y)
        return self.attention_conv.finish(self.self_attn(y, *args), coef)

    def ffn(self, x):
        y = self.post_attention_layernorm(x)
        if self.mlp_conv is None:
            return self.mlp(y)
        y, coef = self.mlp_conv.prepare(y)
        return self.mlp_conv.finish(self.mlp(y), coef)


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
        self.candidate_selector = CandidateSelector(c) if c.selector_rank else None  # DFlash2
        self.use_selector = self.candidate_selector is not None  # False: drafted as base DFlash (per-slot argmax)
        self.markov_head = MarkovHead(c) if c.dspark else None  # DSpark
        self.confidence_head = ConfidenceHead(c) if c.confidence else None

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.embed_tokens(ids)
        if self.mask_embedding is not None:
            e = torch.where((ids == self.c.mask_token_id)[..., None], self.mask_embedding.to(e.dtype), e)
        return e * self.c.embed_scale if self.c.embed_scale != 1.0 else e

    def context(self, aux: torch.Tensor) -> torch.Tensor:
        """[T, n·Ht] target states → [T, H] context features."""
        return self.hidden_norm(self.fc(aux) if self.fc is not None else aux)

    def draft_to_target(self, ids: torch.Tensor) -> torch.Tensor:
        return ids + self.d2t[ids]

    @torch.no_grad()
    def draft_rows(self, aux: torch.Tensor, ids: torch.Tensor, rows: torch.Tensor, k: int, chunk: int = 64) -> torch.Tensor:
        """Logits [R, k, Vd] of the k drafted slots for each row r in `rows`: context = aux[0..r], block = [ids[r+1],
        mask × k] at positions r+1 … r+1+k. aux [T, n·Ht], ids [≥ max(rows)+2]."""
        return torch.cat([self.lm_head(h) for h in self._block_hidden(aux, ids, rows, k, chunk)], 0)

    @torch.no_grad()
    def draft_tokens(self, aux: torch.Tensor, ids: torch.Tensor, rows: torch.Tensor, k: int, chunk: int = 64) -> torch.Tensor:
        """Draft-vocab tokens [R, k] each row drafts: per-slot argmax, or DFlash2's selector walk from the anchor
        ids[r+1] where it runs; -1 for a row whose logits are not finite (garbage: never accepted)."""
        out = []
        for s, h in zip(range(0, rows.shape[0], chunk), self._block_hidden(aux, ids, rows, k, chunk)):
            logits = self.lm_head(h)
            finite = torch.isfinite(logits).all(-1)
            logits = logits.nan_to_num(nan=0.0)
            if self.use_selector:
                logits = logits * self.c.output_multiplier
                if self.c.softcap > 0:
                    logits = torch.tanh(logits / self.c.softcap) * self.c.softcap
                tok = self.candidate_selector.walk(h, logits, ids[rows[s : s + chunk] + 1])
                finite = finite.long().cumprod(-1).bool()  # a garbage slot spoils the walk from it on
            elif self.markov_head is not None:
                tok, ok = self.markov_walk(logits, ids[rows[s : s + chunk] + 1])
                finite = (finite & ok).long().cumprod(-1).bool()
            else:
                tok = logits.argmax(-1)
            out.append(torch.where(finite, tok, torch.full_like(tok, -1)))
        return torch.cat(out, 0)

    def markov_walk(self, logits: torch.Tensor, anchor: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """DSpark's sequential stage at temperature 0, as DSparkSpeculator._sample_sequential(_topk) runs it: logits
        [R, k, Vd] (the head's), anchor [R] (target ids) → draft-vocab tokens [R, k] and whether each step's logits
        were finite. Dense: argmax(base + bias); with dspark_draft_topk K: the head's top-K per slot (chosen once, before
        any bias), corrected by the bias and scattered into -inf, then argmax."""
        head = self.markov_head
        if self.c.markov_topk is not None:
            values, index = logits.topk(self.c.markov_topk, dim=-1)
        prev, out, ok = anchor, [], []
        for j in range(logits.shape[1]):
            e = head.markov_w1(prev)
            if self.c.markov_topk is None:
                step = logits[:, j] + head.markov_w2(e)
                ok.append(torch.isfinite(step).all(-1))
            else:
                corrected = values[:, j] + (head.markov_w2.weight[index[:, j]] @ e[..., None])[..., 0]
                step = torch.full_like(logits[:, j], float("-inf")).scatter(1, index[:, j], corrected)
                ok.append(torch.isfinite(corrected).all(-1))
            tok = step.argmax(-1)
            out.append(tok)
            prev = self.draft_to_target(tok)
        return torch.stack(out, 1), torch.stack(ok, 1)

    @torch.no_grad()
    def confidence(self, aux: torch.Tensor, ids: torch.Tensor, rows: torch.Tensor, k: int) -> torch.Tensor:
        """DSpark's per-slot acceptance confidence [R, k] (DSparkSpeculator with a confidence head: sigmoid of the head
        over each slot's hidden state and the Markov embedding of the token before it, the walk's own tokens). It
        ranks slots for adaptive verification; the drafted tokens do not depend on it."""
        tok = self.draft_tokens(aux, ids, rows, k)
        h = torch.cat(list(self._block_hidden(aux, ids, rows, k, rows.shape[0])), 0)
        prev = torch.cat([ids[rows + 1][:, None], self.draft_to_target(tok[:, :-1].clamp(min=0))], 1)
        x = torch.cat([h, self.markov_head.markov_w1(prev)], -1) if self.confidence_head.with_markov else h
        return torch.sigmoid(self.confidence_head.proj(x.float())[..., 0])

    def _block_hidden(self, aux, ids, rows, k, chunk):
        """The final-normed hidden states [r, k, H] of the k predicting slots (DFlash: the masks after the anchor;
        DSpark sampling from the anchor: the anchor and k - 1 masks), `chunk` rows at a time."""
        ctx = self.context(aux)
        T = ctx.shape[0]
        ctx_pos = torch.arange(T, device=ctx.device)
        cos_c, sin_c = rope_cos_sin(ctx_pos[None], self.c.head_dim, self.c.rope_theta, ctx.dtype)
        ctx_kv = [layer.self_attn.kv(ctx, cos_c[0], sin_c[0]) for layer in self.layers]
        for s in range(0, rows.shape[0], chunk):
            r = rows[s : s + chunk]
            n = k if self.c.sample_from_anchor else k + 1
            block = torch.full((r.shape[0], n), self.c.mask_token_id, dtype=torch.long, device=ctx.device)
            block[:, 0] = ids[r + 1]
            q_pos = r[:, None] + 1 + torch.arange(n, device=ctx.device)
            rope_q = rope_cos_sin(q_pos, self.c.head_dim, self.c.rope_theta, ctx.dtype)
            x = self.embed(block)
            for layer, kv in zip(self.layers, ctx_kv):
                x = x + layer.attn(x, kv, q_pos, ctx_pos, r, rope_q)
                x = x + layer.ffn(x)
            yield self.norm(x if self.c.sample_from_anchor else x[:, 1:])
