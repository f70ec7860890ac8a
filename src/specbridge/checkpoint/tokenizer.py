"""What a plain draft model and its target say about their tokenizers, read from the JSON files beside the weights
(no torch, no `tokenizers`): the token-to-id map of `tokenizer.json` (model.vocab plus added_tokens), its model type
and merges, the special tokens of config.json / generation_config.json / tokenizer_config.json /
special_tokens_map.json, the chat template, and the vocab size and max positions of config.json.

An engine serving a draft model (vLLM `method: draft_model`, SGLang `STANDALONE`) tokenizes with the target's
tokenizer only and hands the draft the target's ids: a draft whose own map gives those ids other tokens drafts
text the target never accepts. Comparing the maps is one dict equality (C-level, ~10 ms for 150 k entries); the
ids that differ are listed only when the maps differ."""

from __future__ import annotations

import itertools
import json
import operator
from pathlib import Path

from ..record import field, record
from .assemble import read_json
from .errors import CheckpointError

SPECIAL = ("bos", "eos", "pad", "unk")
TOKENIZER_LIMIT = 256 * 2**20  # a tokenizer.json larger than this is not read (the biggest real ones are ~30 MB)
TEXT_KEYS = ("text_config", "language_config", "llm_config")


@record(frozen=False)
class TokenizerFacts:
    root: Path
    read: list[str] = field(default_factory=list)  # the files found and read
    unreadable: list[str] = field(default_factory=list)  # files present but not valid JSON (said, not fatal)
    vocab_size: int | None = None  # config.json (the text config of a wrapper)
    max_positions: int | None = None  # config.json max_position_embeddings
    ids: dict[str, int] | None = None  # tokenizer.json: token -> id (model.vocab + added_tokens)
    tokenizer_sha256: str | None = None
    model_type: str | None = None  # tokenizer.json model.type (BPE, Unigram, WordPiece, WordLevel)
    merges: list | None = None  # BPE merges as written
    # name -> {"token": str | None, "id": int | list | None, "from": [files]}: what each file says of bos/eos/pad/unk
    special: dict[str, dict] = field(default_factory=dict)
    chat_template: str | None = None
    chat_template_from: str | None = None

    def token_of(self) -> list[str | None]:
        """id -> token (None where no token has the id), the inverse of `ids`."""
        ids = self.ids or {}
        inv: list[str | None] = [None] * (max(ids.values(), default=-1) + 1)
        for tok, i in ids.items():
            if type(i) is int and i >= 0:
                inv[i] = tok
        return inv


def _json(root: Path, name: str, facts: TokenizerFacts) -> dict | None:
    p = root / name
    if not p.is_file():
        return None
    try:
        obj = read_json(p)
    except CheckpointError:
        facts.unreadable.append(name)
        return None
    if not isinstance(obj, dict):
        facts.unreadable.append(name)
        return None
    facts.read.append(name)
    return obj


def _token_text(v) -> str | None:
    """A special token as tokenizer_config.json / special_tokens_map.json write it: a string or {"content": …}."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and isinstance(v.get("content"), str):
        return v["content"]
    return None


def _token_id(v):
    if type(v) is int:
        return v
    if isinstance(v, list) and v and all(type(i) is int for i in v):
        return sorted(set(v)) if len(set(v)) > 1 else v[0]
    return None


def _token_map(tj: dict) -> tuple[dict[str, int] | None, str | None, list | None]:
    model = tj.get("model") if isinstance(tj.get("model"), dict) else {}
    vocab = model.get("vocab")
    if isinstance(vocab, dict):
        ids = dict(vocab)
    elif isinstance(vocab, list):  # Unigram: [[piece, score], …], the id is the position
        ids = {p[0]: i for i, p in enumerate(vocab) if isinstance(p, list) and p and isinstance(p[0], str)}
    else:
        ids = None
    added = tj.get("added_tokens")
    if isinstance(added, list):
        ids = ids if ids is not None else {}
        ids.update(
            {a["content"]: a["id"] for a in added if isinstance(a, dict) and isinstance(a.get("content"), str) and type(a.get("id")) is int}
        )
    merges = model.get("merges") if isinstance(model.get("merges"), list) else None
    mtype = model.get("type") if isinstance(model.get("type"), str) else None
    return ids, mtype, merges


def read_tokenizer_facts(root: Path) -> TokenizerFacts:
    """Everything above that `root` holds; a file that is absent or unreadable leaves its facts None."""
    facts = TokenizerFacts(root)
    cfg = _json(root, "config.json", facts) or {}
    text = next((cfg[k] for k in TEXT_KEYS if isinstance(cfg.get(k), dict)), cfg)
    for k in ("vocab_size", "max_position_embeddings"):
        v = text.get(k, cfg.get(k))
        if type(v) is int:
            setattr(facts, "vocab_size" if k == "vocab_size" else "max_positions", v)
    gen = _json(root, "generation_config.json", facts) or {}
    tcfg = _json(root, "tokenizer_config.json", facts) or {}
    stm = _json(root, "special_tokens_map.json", facts) or {}
    tpath = root / "tokenizer.json"
    if tpath.is_file():
        raw = tpath.read_bytes() if tpath.stat().st_size <= TOKENIZER_LIMIT else None
        if raw is not None:
            import hashlib  # only when there is a tokenizer.json to hash

            facts.tokenizer_sha256 = hashlib.sha256(raw).hexdigest()
            try:
                tj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                tj = None
            if isinstance(tj, dict):
                facts.read.append("tokenizer.json")
                facts.ids, facts.model_type, facts.merges = _token_map(tj)
            else:
                facts.unreadable.append("tokenizer.json")
        else:
            facts.unreadable.append("tokenizer.json (too large)")
    for name in SPECIAL:
        entry: dict = {"token": None, "id": None, "from": []}
        for fname, src in (("config.json", text), ("config.json", cfg), ("generation_config.json", gen)):
            v = _token_id(src.get(f"{name}_token_id"))
            if v is not None and entry["id"] is None:
                entry["id"], entry["from"] = v, entry["from"] + [fname]
        for fname, src in (("tokenizer_config.json", tcfg), ("special_tokens_map.json", stm)):
            v = _token_text(src.get(f"{name}_token"))
            if v is not None and entry["token"] is None:
                entry["token"], entry["from"] = v, entry["from"] + [fname]
        if entry["from"]:
            facts.special[name] = entry
    tmpl = tcfg.get("chat_template")
    if isinstance(tmpl, list):  # [{"name": "default", "template": …}, …]: the default one
        tmpl = next((t.get("template") for t in tmpl if isinstance(t, dict) and t.get("name") == "default"), None)
    if isinstance(tmpl, str):
        facts.chat_template, facts.chat_template_from = tmpl, "tokenizer_config.json"
    else:
        jinja = root / "chat_template.jinja"
        if jinja.is_file():
            facts.chat_template, facts.chat_template_from = jinja.read_text(encoding="utf-8", errors="replace"), "chat_template.jinja"
            facts.read.append("chat_template.jinja")
        else:
            ct = _json(root, "chat_template.json", facts) or {}
            if isinstance(ct.get("chat_template"), str):
                facts.chat_template, facts.chat_template_from = ct["chat_template"], "chat_template.json"
    return facts


@record(frozen=False)
class MapDiff:
    """How two token-to-id maps differ: the ids whose token differs (or that only one side has), how many, and
    the first few with both tokens."""

    differing: int
    first: list[tuple[int, str | None, str | None]]  # (id, draft's token, target's token)
    draft_size: int
    target_size: int


def diff_maps(draft: TokenizerFacts, target: TokenizerFacts, show: int = 3) -> MapDiff | None:
    """None when the maps are equal (or one is missing); else the differing ids, counted in C."""
    a, b = draft.ids, target.ids
    if a is None or b is None:
        return None
    if (draft.tokenizer_sha256 and draft.tokenizer_sha256 == target.tokenizer_sha256) or a == b:
        return None
    ia, ib = draft.token_of(), target.token_of()
    n = max(len(ia), len(ib))
    ia += [None] * (n - len(ia))
    ib += [None] * (n - len(ib))
    ne = list(map(operator.ne, ia, ib))
    first = [(i, ia[i], ib[i]) for i in itertools.islice(itertools.compress(range(n), ne), show)]
    return MapDiff(ne.count(True), first, len(a), len(b))


def template_key(t: str | None) -> str | None:
    """A chat template compared without surrounding whitespace (editors add a final newline)."""
    return t.strip() if isinstance(t, str) else None
