"""A local stand-in for the Hugging Face Hub, for huggingface_hub's real client (through HF_ENDPOINT).

It serves what the client calls — `/api/models/{repo}[/revision/{rev}]` (commit sha and siblings with
sizes) and `/{repo}/resolve/{rev}/{file}` (HEAD with X-Repo-Commit / ETag / Content-Length; GET with
HTTP Range) — over fixture directories, with the Hub's error codes, and counts every request and every
body byte it sends, so tests can assert how much a command transferred.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


@dataclass
class Repo:
    files: dict[str, Path]  # repo file name -> file on disk
    branches: dict[str, str] = field(default_factory=dict)  # name -> commit

    @property
    def commit(self) -> str:
        return self.branches["main"]


def make_repo(directory: Path, seed: str = "") -> Repo:
    """Every file of `directory` (recursively), at a commit derived from their names and sizes."""
    files = {str(p.relative_to(directory)): p for p in sorted(directory.rglob("*")) if p.is_file()}
    h = hashlib.sha1(seed.encode())
    for name, p in files.items():
        h.update(f"{name}:{p.stat().st_size}\n".encode())
    return Repo(files, {"main": h.hexdigest()})


@dataclass
class Stats:
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # method, path, Range
    authorization: list[str | None] = field(default_factory=list)  # the Authorization header of each request
    body_bytes: int = 0

    def reset(self) -> None:
        self.requests.clear()
        self.authorization.clear()
        self.body_bytes = 0


class FakeHub:
    """`with FakeHub({"org/name": make_repo(dir)}) as hub:` → hub.url for HF_ENDPOINT, hub.stats."""

    def __init__(self, repos: dict[str, Repo], honour_range: bool = True):
        self.repos = repos
        self.honour_range = honour_range  # False: a server that ignores Range and sends whole files
        self.stats = Stats()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _commit(self, repo: Repo, rev: str) -> str | None:
        if rev in repo.branches:
            return repo.branches[rev]
        return rev if rev in repo.branches.values() else None

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out as separate writes: with Nagle's algorithm the body waits for the client's
            # delayed ACK of the headers (~40 ms a response on Linux), most of a Hub test's time
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                self._route(head=True)

            def do_GET(self) -> None:
                self._route(head=False)

            def _route(self, head: bool) -> None:
                path = urlparse(self.path).path
                with hub._lock:
                    hub.stats.requests.append((self.command, path, self.headers.get("Range")))
                    hub.stats.authorization.append(self.headers.get("Authorization"))
                m = re.match(r"^/api/models/([^/]+/[^/]+)(?:/revision/(.+))?$", path)
                if m:
                    return self._api(m[1], unquote(m[2] or "main"), head)
                m = re.match(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", path)
                if m:
                    return self._resolve(m[1], unquote(m[2]), unquote(m[3]), head)
                self._send(404, b"not found", head)

            def _repo_rev(self, repo_id: str, rev: str, head: bool):
                repo = hub.repos.get(repo_id)
                if repo is None:
                    self._send(401, b"Repository not found", head, {"X-Error-Code": "RepoNotFound"})
                    return None, None
                commit = hub._commit(repo, rev)
                if commit is None:
                    self._send(404, b"Revision not found", head, {"X-Error-Code": "RevisionNotFound"})
                    return None, None
                return repo, commit

            def _api(self, repo_id: str, rev: str, head: bool) -> None:
                repo, commit = self._repo_rev(repo_id, rev, head)
                if repo is None:
                    return
                siblings = [{"rfilename": n, "size": p.stat().st_size} for n, p in repo.files.items()]
                body = json.dumps({"id": repo_id, "modelId": repo_id, "sha": commit, "siblings": siblings}).encode()
                self._send(200, body, head, {"Content-Type": "application/json"})

            def _resolve(self, repo_id: str, rev: str, name: str, head: bool) -> None:
                repo, commit = self._repo_rev(repo_id, rev, head)
                if repo is None:
                    return
                f = repo.files.get(name)
                if f is None:
                    self._send(404, b"Entry not found", head, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit})
                    return
                size = f.stat().st_size
                etag = hashlib.sha256(f"{commit}/{name}:{size}".encode()).hexdigest()
                headers = {"X-Repo-Commit": commit, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
                rng = RANGE.match(self.headers.get("Range") or "") if hub.honour_range else None
                start, end = 0, size - 1
                status = 200
                if rng:
                    start = int(rng[1])
                    end = min(int(rng[2]), size - 1) if rng[2] else size - 1
                    if start >= size or end < start:
                        self._send(416, b"", head, {"Content-Range": f"bytes */{size}"})
                        return
                    status = 206
                    headers["Content-Range"] = f"bytes {start}-{end}/{size}"
                if head:
                    self._send(status, b"", True, headers, length=end - start + 1)
                    return
                with open(f, "rb") as fh:
                    fh.seek(start)
                    body = fh.read(end - start + 1)
                self._send(status, body, False, headers)

            def _send(self, status: int, body: bytes, head: bool, headers: dict | None = None, length: int | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                if not head and body:
                    self.wfile.write(body)
                    with hub._lock:
                        hub.stats.body_bytes += len(body)

        return Handler
