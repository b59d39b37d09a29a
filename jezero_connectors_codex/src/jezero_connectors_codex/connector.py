"""The `codex` connector: options, the walk over a Codex home, and the cursor.

Cursor: one entry per rollout, keyed by the id in the file's name (stable when Codex moves the
file to `archived_sessions/` or compresses it), valued
`{"sig": [size, mtime_ns, check], "size": n, "bytes": consumed, "sha256": hex}` where `size` is the
(decompressed) length read, `bytes` the part up to the last newline, and `sha256` its hash.
A first-generation document may add `"covers": {key: sig}` for the snapshots it supersedes."""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

import zstandard

from jezero.plugin import (ConnectorContext, FolderPath, JsonlStream, Options, Session, expand, file_signature,
                           read_options, same_signature)

from . import legacy, reader, store
from .actions import annotate

class CodexOptions(Options):
    """A Codex home (the folder holding `sessions/`); default `$CODEX_HOME`, else `~/.codex`."""

    path: FolderPath | None = None


def default_home() -> str:
    return os.environ.get("CODEX_HOME") or "~/.codex"


def build(options: dict[str, Any] | None, context: ConnectorContext) -> "CodexConnector":
    opts = read_options(CodexOptions, options, "codex")
    return CodexConnector(opts.path if opts.path is not None else expand(default_home()), context)


def discover() -> list[dict[str, Any]]:
    """This computer's Codex home, when Codex has written sessions there."""
    home = expand(default_home())
    found = (home / "sessions").is_dir() or (home / "archived_sessions").is_dir()
    return [{"path": str(home)}] if found else []


class CodexConnector:
    def __init__(self, root: Path, context: ConnectorContext):
        self.root = root
        self.context = context

    def read(self, cursor: dict[str, Any]) -> Iterator[Session]:
        """Yield a Session for every rollout that changed since `cursor`."""
        if not self.root.is_dir():
            self.context.warn(f"codex: {self.root}: no such folder")
            return
        files = store.discover(self.root, self.context.warn)
        names = store.thread_names(self.root)
        parents: dict[str, list[dict] | None] = {}

        def parent_records(parent_id: str) -> list[dict] | None:
            if parent_id not in parents:
                ref = files.get(parent_id.lower())
                records = None
                if ref is not None and not ref.document:
                    try:
                        with store.open_bytes(ref) as f:
                            records = [obj for _, obj in JsonlStream(ref.path, f) if obj is not None]
                    except (OSError, zstandard.ZstdError):
                        records = None
                parents[parent_id] = records
            return parents[parent_id]

        rollouts = _stat(f for f in files.values() if not f.document)
        for ref, sig in rollouts:
            session = self._rollout(ref, sig, cursor.get(ref.key), names, parent_records)
            if session is not None:
                yield _annotated(session)
        for session in self._documents(_stat(f for f in files.values() if f.document), cursor, names):
            yield _annotated(session)

    # ------------------------------------------------------------------------------------------

    def _rollout(self, ref: store.RolloutFile, sig: list[int], state: Any, names: dict, parent_records) -> Session | None:
        if _same_file(ref, sig, state):
            return None
        # Two passes over the file, never all of it in memory (a rollout can be hundreds of MB):
        # its digest first (nothing new: nothing to parse), then its lines up to that point.
        try:
            size, consumed, digest = store.complete_lines_digest(ref)
            if consumed == 0:
                return None  # empty, or its first line is still being written
            if isinstance(state, dict) and state.get("bytes") == consumed and state.get("sha256") == digest:
                return None  # touched, moved or recompressed, but nothing new
            with store.open_bytes(ref) as f:
                try:
                    session = reader.read_rollout(
                        str(ref.path), JsonlStream(ref.path, f, limit=consumed),
                        fallback_id=ref.key, thread_names=names, parent_records=parent_records,
                    )
                except (OSError, zstandard.ZstdError):
                    raise
                except Exception as e:  # a reader bug must not stop the other files
                    self.context.warn(f"codex: {ref.path}: cannot parse: {type(e).__name__}: {e}")
                    return None
        except FileNotFoundError:
            self.context.warn(f"codex: {ref.path}: removed while the run was reading the store (retention or "
                              "archiving?); skipped")
            return None
        except (OSError, zstandard.ZstdError) as e:
            self.context.warn(f"codex: {ref.path}: cannot read: {e}")
            return None
        session.cursor_key = ref.key
        session.cursor_value = {"sig": sig, "size": size, "bytes": consumed, "sha256": digest}
        return session

    def _documents(self, docs: list[tuple[store.RolloutFile, list[int]]], cursor: dict, names: dict) -> Iterator[Session]:
        covered = {
            key: sig
            for value in cursor.values() if isinstance(value, dict) and isinstance(value.get("covers"), dict)
            for key, sig in value["covers"].items()
        }

        def changed(key: str, sig: list[int]) -> bool:
            state = cursor.get(key)
            return not (isinstance(state, dict) and same_signature(state.get("sig"), sig)) and not same_signature(covered.get(key), sig)

        if not any(changed(ref.key, sig) for ref, sig in docs):
            return  # snapshots are judged against each other, so read them all or none
        loaded: dict[str, tuple[store.RolloutFile, list[int], dict, bytes]] = {}
        for ref, sig in docs:
            try:
                data = store.load(ref)
            except OSError as e:
                self.context.warn(f"codex: {ref.path}: cannot read: {e}")
                continue
            doc = legacy.parse_document(data)
            if doc is None:
                self.context.warn(f"codex: {ref.path}: not a Codex session document, skipped")
                continue
            loaded[ref.key] = (ref, sig, doc, data)
        prints = {key: legacy.item_prints(doc) for key, (_, _, doc, _) in loaded.items()}
        order = {key: (str((doc.get("session") or {}).get("timestamp") or ""), str(ref.path)) for key, (ref, _, doc, _) in loaded.items()}
        superseded = legacy.supersessions(prints, order)
        covers: dict[str, dict[str, list[int]]] = defaultdict(dict)
        for key, by in superseded.items():
            covers[by][key] = loaded[key][1]
        for key, (ref, sig, doc, data) in loaded.items():
            if key in superseded:
                continue
            if not changed(key, sig) and not any(changed(k, s) for k, s in covers[key].items()):
                continue
            try:
                session = reader.read_document(str(ref.path), doc, fallback_id=key, thread_names=names)
            except Exception as e:
                self.context.warn(f"codex: {ref.path}: cannot parse: {type(e).__name__}: {e}")
                continue
            session.cursor_key = key
            session.cursor_value = {"sig": sig, "size": len(data), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            if covers[key]:
                session.cursor_value["covers"] = dict(covers[key])
            yield session


def _annotated(session: Session) -> Session:
    annotate(session.blocks)  # what each tool call did: the summarizers read that, not tool names
    return session


def _stat(refs) -> list[tuple[store.RolloutFile, list[int]]]:
    """Files with their signatures, oldest change first; files gone since the walk are dropped."""
    out = []
    for ref in refs:
        try:
            out.append((ref, file_signature(ref.path)))
        except OSError:
            continue
    return sorted(out, key=lambda e: (e[1][1], str(e[0].path)))


def _same_file(ref: store.RolloutFile, sig: list[int], state: Any) -> bool:
    """Unchanged since the cursor, judged without reading: the same size and mtime, or the
    compressed copy of a fully read file (Codex keeps the mtime when it compresses)."""
    if not isinstance(state, dict) or not isinstance(state.get("sig"), list):
        return False
    if same_signature(state["sig"], sig):
        return True
    if ref.compressed and len(state["sig"]) >= 2 and state["sig"][1] == sig[1] and state.get("bytes") == state.get("size"):
        declared = store.declared_size(ref)
        return declared is None or declared == state.get("size")
    return False
