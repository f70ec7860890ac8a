"""The EAGLE-3 draft model in plain PyTorch, with speculators / vLLM semantics.

One module for training and evaluation. Tensor names match the speculators layout exactly
(`fc`, `layers.0.*`, `norm`, `lm_head`, `embed_tokens`, buffers `d2t`/`t2d`), so a state dict
goes to `model.safetensors` without renaming.

Data flow for one draft position t (input-of-layer aux convention, as vLLM/speculators):

    g      = fc(cat(h_a1[t], h_a2[t], h_a3[t]))           # only before the first draft step
    x      = cat(input_layernorm(embed(tok)), hidden_norm(g))   -> q, k, v   (2H wide)
    r      = hidden_norm(g) if norm_before_residual else g
    g'     = r + o_proj(attn(x));  g' = g' + mlp(post_attention_layernorm(g'))
    logits = lm_head(norm(g'))                              # draft vocab Vd
    target token id = argmax + d2t[argmax]

Step 0 sees tok = x[t+1] (the token the target just produced) and h[t]; step j>0 sees the
drafter's own previous output g' and its own previous token, at position t+j.

Two entry points:
- `forward(input_ids, hidden, position_ids, kv_cache)`: plain causal decoding with a KV cache
  (what eval / serving does: a chain of draft steps, crop the cache after verification).
- `ttt_forward(...)`: the training-time-test unroll over k steps with the EAGLE-3 mask: step j
  attends to the step-0 keys of the true prefix (causal) plus the keys its own position
  produced at steps 1..j (the diagonal), which is exactly what a cached chain sees at inference.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class DrafterConfig:
    hidden_size: int  # H (= target hidden size; speculators requires equality)
    intermediate_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int  # target vocab V
    draft_vocab_size: int  # Vd
    aux_layer_ids: list[int] = field(default_factory=list)  # input-of-layer ids (HF hidden_states[i])
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    max_position_embeddings: int = 2048
    norm_before_residual: bool = True
    target_hidden_size: int | None = None  # None -> hidden_size

    @property
    def aux_width(self) -> int:
        return len(self.aux_layer_ids) * (self.target_hidden_size or self.hidden_size)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_target(cls, geometry: dict, draft_vocab_size: int, aux_layer_ids: list[int], **kw) -> DrafterConfig:
        keys = (
            "hidden_size",
            "intermediate_size",
            "num_heads",
            "num_kv_heads",
            "head_dim",
            "vocab_size",
            "rms_norm_eps",
            "rope_theta",
            "max_position_embeddings",
        )
        return cls(**{k: geometry[k] for k in keys}, draft_vocab_size=draft_vocab_size, aux_layer_ids=list(aux_layer_ids), **kw)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope_cos_sin(position_ids: torch.Tensor, head_dim: int, theta: float, dtype: torch.dtype):
    """Llama default RoPE tables for [B, T] positions -> cos, sin of shape [B, 1, T, head_dim]."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim))
    freqs = position_ids.float()[..., None] * inv_freq  # [B, T, hd/2]
    emb = torch.cat([freqs, freqs], dim=-1)[:, None]
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    """Llama attention (RoPE, GQA). q/k/v read `in_width` (EAGLE-3's 2H = cat(normed embeds, normed hidden), the
    default; EAGLE-1/2's H); `bias` on all four projections (cfg: num_heads, num_kv_heads, head_dim, hidden_size)."""

    def __init__(self, cfg: DrafterConfig, in_width: int | None = None, bias: bool = False):
        super().__init__()
        self.cfg = cfg
        h, nh, nkv, hd = cfg.hidden_size, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        w = 2 * h if in_width is None else in_width
        self.q_proj = nn.Linear(w, nh * hd, bias=bias)
        self.k_proj = nn.Linear(w, nkv * hd, bias=bias)
        self.v_proj = nn.Linear(w, nkv * hd, bias=bias)
        self.o_proj = nn.Linear(nh * hd, h, bias=bias)

    def project(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        """x [B, T, in_width] -> q [B, nh, T, hd], k/v [B, nh, T, hd] (KV heads repeated for GQA)."""
        b, t, _ = x.shape
        c = self.cfg
        q = self.q_proj(x).view(b, t, c.num_heads, c.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, c.num_kv_heads, c.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, c.num_kv_heads, c.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        rep = c.num_heads // c.num_kv_heads
        if rep > 1:
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        return q, k, v

    def out(self, o: torch.Tensor) -> torch.Tensor:
        b, _, t, _ = o.shape
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1))


def prefix_and_own_attention(
    q: torch.Tensor, k0: torch.Tensor, v0: torch.Tensor, own_k: list, own_v: list, causal: torch.Tensor, scale: float
) -> torch.Tensor:
    """Step j's queries q [B, nh, T, hd] over the step-0 keys/values k0, v0 [B, nh, T, hd] (causal: [T, T], True where
    seen) plus each row's own keys/values of steps 1..j (own_k, own_v: lists of [B, nh, T, hd]): exactly what a cached
    chain from row t sees (the EAGLE-3 training-time-test mask). Softmax in float32. Returns [B, nh, T, hd]."""
    T = k0.shape[-2]
    scores = ((q @ k0.transpose(-1, -2)) * scale).masked_fill(~causal, float("-inf"))
    own = [(q * k).sum(-1, keepdim=True) * scale for k in own_k]
    probs = torch.softmax(torch.cat([scores, *own], -1).float(), -1).to(q.dtype)
    o = probs[..., :T] @ v0
    for j, v in enumerate(own_v):
        o = o + probs[..., T + j, None] * v
    return o


class MLP(nn.Module):
    """The SwiGLU MLP without biases (cfg: hidden_size, intermediate_size): EAGLE-3's, EAGLE-1/2's and DFlash's."""

    def __init__(self, cfg: DrafterConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    """The single EAGLE-3 layer: q/k/v read 2H = cat(normed embeds, normed hidden)."""

    def __init__(self, cfg: DrafterConfig):
        super().__init__()
        self.cfg = cfg
        self.self_attn = Attention(cfg)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.hidden_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def attn_inputs(self, embeds: torch.Tensor, hidden: torch.Tensor):
        """-> (2H attention input, residual). norm_before_residual: residual is the normed hidden."""
        normed = self.hidden_norm(hidden)
        residual = normed if self.cfg.norm_before_residual else hidden
        return torch.cat([self.input_layernorm(embeds), normed], dim=-1), residual

    def finish(self, residual: torch.Tensor, attn_out: torch.Tensor) -> torch.Tensor:
        h = residual + self.self_attn.out(attn_out)
        return h + self.mlp(self.post_attention_layernorm(h))


class KVCache:
    """Per-sequence-batch KV cache for chain drafting; `crop(n)` drops rejected draft entries."""

    def __init__(self):
        self.k: torch.Tensor | None = None
        self.v: torch.Tensor | None = None

    @property
    def length(self) -> int:
        return 0 if self.k is None else self.k.shape[2]

    def append(self, k: torch.Tensor, v: torch.Tensor):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def crop(self, length: int) -> None:
        if self.k is not None:
            self.k, self.v = self.k[:, :, :length], self.v[:, :, :length]

    def fork(self, length: int | None = None) -> "KVCache":
        """A cache holding this one's first `length` entries (all by default): tree branches share a
        prefix and grow apart (`append` concatenates into new tensors, so nothing is shared by accident)."""
        other = KVCache()
        if self.k is not None:
            other.k, other.v = self.k[:, :, :length], self.v[:, :, :length]
        return other


class Eagle3Drafter(nn.Module):
    def __init__(self, cfg: DrafterConfig):
        super().__init__()
        self.cfg = cfg
        h = cfg.hidden_size
        self.embed_tokens = nn.Embedding(cfg.vocab_size, h)
        self.embed_tokens.weight.requires_grad_(False)  # frozen copy of the target's
        self.fc = nn.Linear(cfg.aux_width, h, bias=False)
        self.layers = nn.ModuleList([DecoderLayer(cfg)])
        self.norm = RMSNorm(h, cfg.rms_norm_eps)
        self.lm_head = nn.Linear(h, cfg.draft_vocab_size, bias=False)
        # target_id = i + d2t[i]; t2d[v] is True at the Vd selected target ids.
        # Training-time preconditioning of fc's input, per aux dimension (ones = none). Target
        # residual streams carry a few "massive" dimensions (SmolLM2: ~200-350 on every token,
        # ~25k on the first, against ~10 elsewhere), so raw inputs make fc's Adam steps hundreds of
        # times larger in those directions. Training runs fc(aux * scale) with a fixed scale;
        # `folded_state_dict` multiplies it into fc.weight, so what is saved (and what engines
        # run) is the plain EAGLE-3 fc on raw states, numerically the same function.
        self.register_buffer("fc_input_scale", torch.ones(cfg.aux_width))
        self.register_buffer("d2t", torch.zeros(cfg.draft_vocab_size, dtype=torch.long))
        self.register_buffer(
            "t2d",
            torch.ones(cfg.vocab_size, dtype=torch.bool)
            if cfg.draft_vocab_size == cfg.vocab_size
            else torch.zeros(cfg.vocab_size, dtype=torch.bool),
        )

    # ---- vocab ---------------------------------------------------------------------------
    def set_vocab_map(self, d2t: torch.Tensor, t2d: torch.Tensor) -> None:
        self.d2t.copy_(d2t.to(torch.long))
        self.t2d.copy_(t2d.to(torch.bool))

    def draft_to_target(self, draft_ids: torch.Tensor) -> torch.Tensor:
        return draft_ids + self.d2t[draft_ids]

    # ---- building blocks -----------------------------------------------------------------
    def fuse(self, aux_hidden: torch.Tensor) -> torch.Tensor:
        """[.., k*Ht] concatenated aux target states -> [.., H]. Applied once, before step 0."""
        return self.fc(aux_hidden * self.fc_input_scale.to(aux_hidden.dtype))

    @torch.no_grad()
    def folded_state_dict(self) -> dict:
        """The state engines load: fc.weight @ diag(fc_input_scale), and no scale buffer."""
        state = dict(self.state_dict())
        scale = state.pop("fc_input_scale")
        state["fc.weight"] = state["fc.weight"] * scale.to(state["fc.weight"].dtype)[None, :]
        return state

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.norm(hidden))

    def _rope(self, position_ids: torch.Tensor, dtype: torch.dtype):
        return rope_cos_sin(position_ids, self.cfg.head_dim, self.cfg.rope_theta, dtype)

    # ---- inference: causal attention over a KV cache -------------------------------------
    def forward(
        self,
        input_ids: torch.Tensor,
        hidden: torch.Tensor,
        position_ids: torch.Tensor,
        kv_cache: KVCache | None = None,
        attention_mask: torch.Tensor | None = None,
    ):
        """One draft pass. input_ids [B, T] target-vocab ids; hidden [B, T, H] (fc output for the
        first pass, the previous pass's returned hidden after that); position_ids [B, T].
        With kv_cache, the T new queries attend causally to everything cached plus themselves.
        attention_mask: optional bool [B, T, S] (True = may attend) over S = cache + T keys.
        Returns (logits [B, T, Vd], hidden_out [B, T, H])."""
        layer = self.layers[0]
        x, residual = layer.attn_inputs(self.embed_tokens(input_ids).to(hidden.dtype), hidden)
        cos, sin = self._rope(position_ids, x.dtype)
        q, k, v = layer.self_attn.project(x, cos, sin)
        past = kv_cache.length if kv_cache is not None else 0
        if kv_cache is not None:
            k, v = kv_cache.append(k, v)
        t, s = q.shape[2], k.shape[2]
        if attention_mask is None:
            attention_mask = torch.ones(t, s, dtype=torch.bool, device=q.device).tril(diagonal=past)[None]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask[:, None])
        out = layer.finish(residual, o)
        return self.head(out), out

    # ---- training: train-time-test unroll -----------------------------------------------
    def ttt_forward(
        self,
        input_ids: torch.Tensor,
        aux_hidden: torch.Tensor,
        ttt_steps: int,
        position_ids: torch.Tensor | None = None,
        teacher_tokens: bool = False,
        skip_fc: bool = False,
    ) -> list[torch.Tensor]:
        """Unroll k draft steps over whole sequences; returns per-step logits [B, T, Vd].

        Row t of step j predicts target token t+2+j. input_ids [B, T] holds the token
        AFTER each aux position (x[t+1] for aux h[t]); aux_hidden [B, T, k*Ht]. Right padding is
        fine: causal attention never reaches padded keys from real queries.

        Step j >= 1 takes the drafter's own previous token (as at inference), or, with
        teacher_tokens, the sequence's real token x[t+1+j] (SpecForge's way). A chain only
        reaches step j when steps < j were right, and then both are the same token, so the
        teacher version trains exactly the conditional that acceptance needs.

        skip_fc: aux_hidden goes into the layer as it is (an engine that skips the fusion when the
        state's width already equals the hidden size, as SGLang's EAGLE path does)."""
        b, t = input_ids.shape
        if position_ids is None:
            position_ids = torch.arange(t, device=input_ids.device)[None].expand(b, t)
        layer = self.layers[0]
        attn = layer.self_attn
        scale = 1.0 / math.sqrt(self.cfg.head_dim)
        causal = torch.ones(t, t, dtype=torch.bool, device=input_ids.device).tril()
        hidden = aux_hidden if skip_fc else self.fuse(aux_hidden)
        tokens = input_ids
        k0 = v0 = None
        diag_k: list[torch.Tensor] = []
        diag_v: list[torch.Tensor] = []
        all_logits = []
        for step in range(ttt_steps):
            x, residual = layer.attn_inputs(self.embed_tokens(tokens).to(hidden.dtype), hidden)
            cos, sin = self._rope(position_ids + step, x.dtype)
            q, k, v = attn.project(x, cos, sin)
            if step == 0:
                k0, v0 = k, v
            else:
                diag_k.append(k)
                diag_v.append(v)
            # scores over the step-0 prefix (causal) + this position's own keys from steps 1..j
            o = prefix_and_own_attention(q, k0, v0, diag_k, diag_v, causal, scale)
            hidden = layer.finish(residual, o)
            logits = self.head(hidden)
            all_logits.append(logits)
            with torch.no_grad():
                if teacher_tokens:
                    tokens = torch.cat([input_ids[:, step + 1 :], input_ids.new_zeros(b, step + 1)], dim=1)
                else:
                    tokens = self.draft_to_target(logits.argmax(-1))
        return all_logits

    # ---- init from the target -----------------------------------------------------------
    @torch.no_grad()
    def init_from_target(self, target_model) -> None:
        """Copy the frozen embedding, the final norm and the head rows at the draft ids, so the
        drafter starts with the target's output geometry; fc and the layer start random."""
        self.embed_tokens.weight.copy_(target_model.get_input_embeddings().weight)
        head = target_model.get_output_embeddings().weight  # [V, H] (tied to the embedding in SmolLM2)
        self.lm_head.weight.copy_(head[torch.nonzero(self.t2d, as_tuple=True)[0]])
        final_norm = getattr(getattr(target_model, "model", target_model), "norm", None)
        if final_norm is not None and getattr(final_norm, "weight", None) is not None:
            self.norm.weight.copy_(final_norm.weight)


def count_trainable(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
