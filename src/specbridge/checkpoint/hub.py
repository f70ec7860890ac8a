"""Hub ids (`org/name[@revision]`) wherever a checkpoint or target path is accepted.

Everything goes through `huggingface_hub`, so its token, `HF_ENDPOINT`, cache (`HF_HUB_CACHE`,
`HF_HOME`) and `HF_HUB_OFFLINE` apply as they do for every other tool. What is read:

- the revision is resolved to a commit once (one API call; none when the revision is a commit
  whose snapshot is cached, or offline, where the cache's refs answer);
- `config.json` and index files are small: downloaded into (or used from) the HF cache;
- weights are never downloaded to describe them: a cached copy is read in place, otherwise the
  safetensors header (or a torch zip's directory and pickle) is read with HTTP range requests, and
  tensor bytes are fetched by range only when a command needs them (`convert` streams them).

A report carries the resolved commit (`HubRef`) so its result can be reproduced.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from urllib.parse import urlparse

from ..record import record, replace
from .assemble import (
    MAX_CONFIG_BYTES,
    MAX_INDEX_BYTES,
    Checkpoint,
    assemble_shards,
    choose_weights,
    is_pickle,
    read_json,
    read_weights,
    shard_name_ok,
)
from .errors import CheckpointError
from .hubref import COMMIT, HubRef, hub_ref_or_none
from .safetensors import MAX_HEADER_BYTES, SafetensorsHeader, TensorInfo, parse_header
from .source import BlockCache


def engine_model_arg(path) -> str:
    """What to hand an engine for a model given as `path`: an absolute local directory, or a Hub
    repo id (the engine downloads it). An `@revision` has no place on the engines' model flags, so
    rather than print a command that would load another revision than the one checked, refuse."""
    text = os.fspath(path)
    ref = hub_ref_or_none(text)
    if ref is None:
        return str(Path(text).absolute())
    if ref.revision is not None:
        raise CheckpointError(
            ref.label,
            f"the engine's command line cannot pin revision {ref.revision}: download it "
            f"(hf download {ref.repo_id} --revision {ref.revision}) and pass that directory",
        )
    return ref.repo_id


# ---------------------------------------------------------------------------------------------
# huggingface_hub, imported only for Hub inputs (it costs start-up time)


def _hf():
    try:
        import huggingface_hub
    except ImportError:
        raise CheckpointError(None, "Hub ids need huggingface_hub: pip install huggingface_hub") from None
    return huggingface_hub


def _errors() -> tuple[type[BaseException], ...]:
    """What huggingface_hub and its HTTP client raise for a failed request (all become one line)."""
    import httpx2  # huggingface_hub 2.x's HTTP client
    from huggingface_hub import errors as hfe

    return (
        hfe.HfHubHTTPError,
        hfe.OfflineModeIsEnabled,
        hfe.EntryNotFoundError,
        hfe.FileMetadataError,
        httpx2.HTTPError,
        OSError,
        ValueError,
    )


def _constants():
    _hf()
    from huggingface_hub import constants

    return constants


def _offline() -> bool:
    return bool(_constants().HF_HUB_OFFLINE)


def _endpoint() -> str:
    return _constants().ENDPOINT


def _cache_dir() -> Path:
    return Path(_constants().HF_HUB_CACHE)


def _repo_cache(ref: HubRef) -> Path:
    from huggingface_hub.file_download import repo_folder_name

    return _cache_dir() / repo_folder_name(repo_id=ref.repo_id, repo_type="model")


def _hub_error(ref: HubRef, e: Exception, what: str) -> CheckpointError:
    """One line for whatever huggingface_hub or the network raised."""
    from huggingface_hub import errors as hfe

    if isinstance(e, hfe.GatedRepoError):
        msg = "is gated: accept its terms on the Hub and log in (hf auth login / HF_TOKEN)"
    elif isinstance(e, hfe.RepositoryNotFoundError):
        msg = f"not a local path, and {_endpoint()} has no such repository (or it is private: log in with hf auth login / HF_TOKEN)"
    elif isinstance(e, hfe.RevisionNotFoundError):
        msg = f"the Hub has no revision {ref.asked!r}"
    elif isinstance(e, hfe.EntryNotFoundError):
        msg = f"{what} is not in the repository at {ref.commit or ref.asked}"
    elif isinstance(e, hfe.OfflineModeIsEnabled):
        msg = f"offline (HF_HUB_OFFLINE) and {what} is not in the HF cache"
    elif isinstance(e, hfe.HfHubHTTPError):
        status = getattr(getattr(e, "response", None), "status_code", "?")
        msg = f"the Hub answered HTTP {status} for {what}"
    else:
        msg = f"cannot reach {_endpoint()} for {what} ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); "
        msg += "set HF_HUB_OFFLINE=1 to use the HF cache"
    return CheckpointError(ref.label, msg)


# ---------------------------------------------------------------------------------------------
# Resolving a revision, listing files


def _cached_commit(ref: HubRef) -> str | None:
    if COMMIT.match(ref.asked):
        return ref.asked
    refs = _repo_cache(ref) / "refs" / ref.asked
    try:
        return refs.read_text().strip() or None
    except OSError:
        return None


def _cached_names(ref: HubRef, commit: str) -> list[str] | None:
    snap = _repo_cache(ref) / "snapshots" / commit
    if not snap.is_dir():
        return None
    return sorted(str(p.relative_to(snap)) for p in snap.rglob("*") if p.is_file())


@record
class Listing:
    ref: HubRef  # with commit and endpoint
    names: list[str]
    sizes: dict[str, int]  # from the API, when it told us
    from_cache: bool = False  # names are what the HF cache holds, not the whole repository


def _complete_in_cache(names: list[str], where: str) -> bool:
    if "config.json" not in names:
        return False
    try:
        choose_weights(names, Path(where))
    except CheckpointError:
        return False
    return True


def resolve(ref: HubRef) -> Listing:
    """The commit `ref` means and its files: from the cache when that is enough (offline, or a
    commit whose snapshot holds config and weights), else one API call."""
    endpoint = _endpoint()
    commit = _cached_commit(ref)
    cached = _cached_names(ref, commit) if commit else None
    if _offline():
        if commit is None or cached is None:
            raise CheckpointError(
                ref.label,
                f"not a local path; offline (HF_HUB_OFFLINE) and revision {ref.asked} of {ref.repo_id} is not in the HF cache ({_cache_dir()})",
            )
        return Listing(replace(ref, commit=commit, endpoint=endpoint), cached, {}, from_cache=True)
    if cached is not None and COMMIT.match(ref.asked) and _complete_in_cache(cached, ref.label):
        return Listing(replace(ref, commit=commit, endpoint=endpoint), cached, {}, from_cache=True)
    hf = _hf()
    try:
        info = hf.HfApi(endpoint=endpoint).model_info(
            ref.repo_id, revision=ref.revision, files_metadata=True, timeout=_constants().HF_HUB_ETAG_TIMEOUT
        )
    except _errors() as e:
        raise _hub_error(ref, e, f"revision {ref.asked}") from None
    if not info.sha:
        raise CheckpointError(ref.label, f"{endpoint} did not say which commit revision {ref.asked} is")
    sib = info.siblings or []
    sizes = {s.rfilename: s.size for s in sib if s.size is not None}
    return Listing(replace(ref, commit=info.sha, endpoint=endpoint), sorted(s.rfilename for s in sib), sizes)


def cached_snapshot_files(ref: HubRef) -> dict[str, Path]:
    """The top-level files the HF cache holds for the resolved commit of `ref`: {name: path}, without any request."""
    names = _cached_names(ref, ref.commit) if ref.commit else None
    snap = _repo_cache(ref) / "snapshots" / (ref.commit or "")
    return {n: snap / n for n in names or () if "/" not in n}


def cached_file(ref: HubRef, name: str) -> Path | None:
    """The file from the HF cache at the resolved commit, without any request; None if absent."""
    from huggingface_hub import try_to_load_from_cache

    got = try_to_load_from_cache(ref.repo_id, name, revision=ref.commit)
    return Path(got) if isinstance(got, str) else None


def small_file(ref: HubRef, name: str, listing: Listing, limit: int) -> Path:
    """config.json, an index: from the cache, else downloaded into it — after checking the size the
    Hub lists against the reader's limit, so a hostile repo cannot make us download gigabytes."""
    got = cached_file(ref, name)
    if got is not None:
        return got
    size = listing.sizes.get(name)
    if size is not None and size > limit:
        raise CheckpointError(f"{ref.label}/{name}", f"{size} bytes exceeds the {limit}-byte limit for a JSON file; not downloading it")
    if _offline():
        raise CheckpointError(ref.label, f"offline (HF_HUB_OFFLINE) and {name} at commit {ref.commit} is not in the HF cache")
    try:
        return Path(_hf().hf_hub_download(ref.repo_id, name, revision=ref.commit, endpoint=ref.endpoint))
    except _errors() as e:
        raise _hub_error(ref, e, name) from None


# ---------------------------------------------------------------------------------------------
# Remote bytes


@record
class HubFile:
    """One file of a repo at a commit, read by HTTP range (a ByteSource). `path` names it in messages."""

    ref: HubRef
    name: str
    size: int
    url: str

    @property
    def path(self) -> Path:
        return Path(self.ref.repo_id) / self.name

    def pread(self, offset: int, n: int) -> bytes:
        return b"".join(self.iter_range(offset, n))

    def iter_range(self, offset: int, n: int, chunk: int = 1 << 20):
        """Stream bytes offset..offset+n. The response must be a 206 for exactly that range: a
        server that ignores Range would otherwise send the whole file."""
        if n <= 0:
            return
        from huggingface_hub.utils import (
            build_hf_headers,
            get_session,
            hf_raise_for_status,
        )

        headers = {"Range": f"bytes={offset}-{offset + n - 1}", "Accept-Encoding": "identity"}
        if urlparse(self.url).netloc == urlparse(self.ref.endpoint or self.url).netloc:
            headers.update(build_hf_headers())
        try:
            with get_session().stream("GET", self.url, headers=headers, timeout=60) as r:
                hf_raise_for_status(r)
                if r.status_code != 206:
                    raise CheckpointError(
                        self.path, f"the server answered {r.status_code} to a range request; refusing to download the whole file"
                    )
                got = 0
                for data in r.iter_bytes(chunk):
                    got += len(data)
                    if got > n:
                        raise CheckpointError(self.path, f"the server sent more than the {n} bytes asked for")
                    yield data
        except CheckpointError:
            raise
        except _errors() as e:
            raise _hub_error(self.ref, e, self.name) from None
        if got != n:
            raise CheckpointError(self.path, f"range {offset}..{offset + n} came back with {got} bytes")


def _size(ref: HubRef, name: str, listing: Listing) -> tuple[int, str]:
    """A file's size and the URL to read it from (after the Hub's redirect, as hf_hub_download does)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(ref.repo_id, name, revision=ref.commit, endpoint=ref.endpoint)
    if name in listing.sizes:
        return listing.sizes[name], url
    try:
        meta = get_hf_file_metadata(url)
    except _errors() as e:
        raise _hub_error(ref, e, name) from None
    if meta.size is None:
        raise CheckpointError(ref.label, f"{name}: the Hub did not say how large it is")
    return meta.size, meta.location or url


def hub_file(ref: HubRef, name: str, listing: Listing) -> HubFile:
    """One file of the repository, to be read by range (its size from the listing, else one HEAD request)."""
    size, url = _size(ref, name, listing)
    return HubFile(ref, name, size, url)


def remote_header(f: HubFile) -> SafetensorsHeader:
    """A safetensors header over HTTP: 8 bytes, then exactly the header (8 + header_len bytes in all);
    validated like a local one."""
    if f.size < 8:
        raise CheckpointError(f.path, f"not a safetensors file: {f.size} bytes")
    (n,) = struct.unpack("<Q", f.pread(0, 8))
    if n > MAX_HEADER_BYTES or 8 + n > f.size:
        raise CheckpointError(f.path, f"header length {n} is over the limit or past the end of the file ({f.size} bytes)")
    return parse_header(f.path, f.pread(8, n), f.size)


def remote_safetensors(f: HubFile) -> tuple[dict[str, TensorInfo], dict[str, str]]:
    """A safetensors header over HTTP, its tensors reading their bytes through `f`."""
    h = remote_header(f)
    return {k: replace(t, source=f) for k, t in h.tensors.items()}, h.metadata


def weights_of(ref: HubRef, name: str, listing: Listing) -> tuple[dict[str, TensorInfo], dict[str, str], Path]:
    """One weights file: read in place from the cache when there, else its header by range."""
    local = cached_file(ref, name)
    if local is not None:
        tensors, meta = read_weights(local)
        return tensors, meta, local
    if _offline():
        raise CheckpointError(ref.label, f"offline (HF_HUB_OFFLINE) and {name} at commit {ref.commit} is not in the HF cache")
    f = hub_file(ref, name, listing)
    if is_pickle(Path(name)):
        from .torchzip import read_torch_zip

        z = read_torch_zip(BlockCache(f))  # the zip directory and local headers in a few requests
        return {k: replace(t, source=f) for k, t in z.tensors.items()}, z.metadata, f.path
    tensors, meta = remote_safetensors(f)
    return tensors, meta, f.path


# ---------------------------------------------------------------------------------------------
# Checkpoints and targets


def _sharded(ref: HubRef, index_name: str, listing: Listing) -> tuple[dict[str, TensorInfo], list[Path], dict[str, str]]:
    """A sharded repo, through the same assembly (and checks) as a sharded directory on disk."""
    where = f"{ref.label}/{index_name}"
    index = read_json(small_file(ref, index_name, listing, MAX_INDEX_BYTES), MAX_INDEX_BYTES)

    def read_shard(fname: str) -> tuple[dict[str, TensorInfo], dict[str, str], Path]:
        shard_name_ok(fname, where)
        if fname not in listing.names:
            raise CheckpointError(where, f"shard {fname!r} listed in the index does not exist")
        return weights_of(ref, fname, listing)

    return assemble_shards(where, index, read_shard)


def open_hub_checkpoint(ref: HubRef) -> Checkpoint:
    """A Checkpoint for a Hub repo, headers only (see the module docstring for what is read)."""
    listing = resolve(ref)
    ref = listing.ref
    try:
        kind, name = choose_weights(listing.names, Path(ref.label))
    except CheckpointError as e:
        if not listing.from_cache:
            raise
        raise CheckpointError(
            ref.label,
            f"offline (HF_HUB_OFFLINE): the HF cache holds commit {ref.commit} of {ref.repo_id} "
            f"({', '.join(listing.names) or 'no files'}) but not its weights ({e.message})",
        ) from None
    if "config.json" not in listing.names:
        raise CheckpointError(ref.label, "no config.json in the repository (the engines need it to build the drafter)")
    if kind == "index":
        tensors, files, meta = _sharded(ref, name, listing)
    else:
        tensors, meta, path = weights_of(ref, name, listing)
        files = [path]
    config_path = small_file(ref, "config.json", listing, MAX_CONFIG_BYTES)
    storage = ("torch-zip" if is_pickle(Path(files[0].name)) else "safetensors") + ("-sharded" if kind == "index" else "")
    # the commit in the name: every report that prints the checkpoint's path shows what was read
    return Checkpoint(Path(f"{ref.repo_id}@{ref.commit}"), read_json(config_path), config_path, tensors, files, storage, meta, [], hub=ref)


def hub_target_config(ref: HubRef) -> tuple[Path, Path | None, str | None, HubRef]:
    """A target on the Hub: its config.json (downloaded or cached), its cached tokenizer.json if any
    (never downloaded: it only adds a fingerprint), whether it has safetensors weights (as a Hub id
    that open_checkpoint reads by range when a rule needs them), and the resolved ref."""
    listing = resolve(ref)
    ref = listing.ref
    if "config.json" not in listing.names:
        raise CheckpointError(ref.label, "target: no config.json in the repository")
    cfg = small_file(ref, "config.json", listing, MAX_CONFIG_BYTES)
    tok = cached_file(ref, "tokenizer.json")
    has_weights = any(n.endswith(".safetensors") and "/" not in n for n in listing.names)
    return cfg, tok, f"{ref.repo_id}@{ref.commit}" if has_weights else None, ref
