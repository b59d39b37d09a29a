"""The configured clients, kept current while the server runs.

Adding, revoking or rotating a client is an edit to `[[clients]]` in the config file; the server
must honour it without a restart. Rather than a watcher thread, every lookup looks at the file
at most every POLL_SECONDS and reloads it when its bytes changed, so an edit is in force by the
next request after at most that long. (Comparing bytes rather than mtime and size also catches a
rotated key: same length, possibly within the same clock tick.) A bad edit keeps the last good
config and logs a warning once per bad version of the file.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from pathlib import Path

from jezero import config as config_mod
from jezero.config import ClientConfig, Config

log = logging.getLogger("jezero.server")

# Reading a config of a few KB costs microseconds; four times a second keeps an edit well inside
# the promised second without touching the file on every one of hundreds of requests a second.
POLL_SECONDS = 0.25


def _signature(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


class ClientRegistry:
    """The last good config and its clients, re-read when the file changes.

    Built from a config file path (reloaded on change) or from a `Config` object (reloaded from
    `config.path` when it came from a file, otherwise fixed)."""

    def __init__(self, config: Config, path: Path | None = None, *, poll_seconds: float = POLL_SECONDS):
        self._path = path
        self._poll = poll_seconds
        self._lock = threading.Lock()
        self._checked = time.monotonic()
        self._seen = _signature(path) if path else None
        self._warned: object = None
        self._index(config)

    @classmethod
    def from_source(cls, source: ClientRegistry | Config | str | os.PathLike | None = None) -> ClientRegistry:
        """A registry from whatever the caller has: a registry, a loaded config, or a config path
        (None: the usual lookup, `$JEZERO_CONFIG` then the platform folder). Raises ConfigError
        when a path is given and the file is not valid."""
        if isinstance(source, ClientRegistry):
            return source
        if isinstance(source, Config):
            return cls(source, source.path)
        path = config_mod.resolve_config_path(source)
        seen = _signature(path)  # before loading: an edit in between is then seen as a change
        registry = cls(config_mod.load(source), path)
        registry._seen = seen
        return registry

    def _index(self, cfg: Config) -> None:
        # One assignment, so a reader on another thread never sees half of an old and half of
        # a new config.
        self._state = (cfg, tuple(cfg.clients), {c.name: c for c in cfg.clients})

    # -- reading -----------------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        return self._path

    def config(self) -> Config:
        """The current config (the last good one if the file is now broken)."""
        self.refresh()
        return self._state[0]

    def clients(self) -> list[ClientConfig]:
        self.refresh()
        return list(self._state[1])

    def by_name(self, name: str) -> ClientConfig | None:
        self.refresh()
        return self._state[2].get(name)

    def by_digest(self, digest: str) -> ClientConfig | None:
        """The client whose key has this SHA-256 hex digest. Every stored digest is compared in
        constant time, and all of them are, so the answer's timing says nothing about the keys."""
        self.refresh()
        found = None
        for client in self._state[1]:
            if hmac.compare_digest(client.key_sha256, digest) and found is None:
                found = client
        return found

    # -- reloading ---------------------------------------------------------------------------

    def refresh(self, *, force: bool = False) -> bool:
        """Reload the file if it changed since the last look; True when new clients took effect."""
        if self._path is None:
            return False
        now = time.monotonic()
        if not force and now - self._checked < self._poll:
            return False
        # A request never waits for a reload another thread is doing: it answers with the
        # clients in force until that reload is done.
        if not self._lock.acquire(blocking=force):
            return False
        try:
            if not force and now - self._checked < self._poll:
                return False
            self._checked = now
            sig = _signature(self._path)
            if sig == self._seen and not force:
                return False
            return self._reload(sig)
        finally:
            self._lock.release()

    def _reload(self, sig) -> bool:
        if sig is None:
            if self._warned != ("missing",):
                log.warning("config %s has disappeared; keeping the last good clients (%d)",
                            self._path, len(self._state[1]))
                self._warned = ("missing",)
            self._seen = None
            return False
        try:
            cfg = config_mod.load(self._path)
        except config_mod.ConfigError as e:
            self._seen = sig
            if self._warned != sig:
                self._warned = sig
                problems = "; ".join(str(p) for p in e.problems)
                log.warning("config %s has problems, keeping the last good clients (%d): %s",
                            self._path, len(self._state[1]), problems)
            return False
        except OSError as e:  # read mid-replace, permissions: try again on the next look
            log.warning("config %s could not be read (%s); keeping the last good clients", self._path, e)
            return False
        before = {c.name: c.key_sha256 for c in self._state[1]}
        self._index(cfg)
        self._seen = sig
        self._warned = None
        after = {c.name: c.key_sha256 for c in self._state[1]}
        if before != after:
            added = sorted(set(after) - set(before))
            removed = sorted(set(before) - set(after))
            rotated = sorted(n for n in set(after) & set(before) if after[n] != before[n])
            log.info("config reloaded: %d client(s)%s%s%s", len(after),
                     f"; added {', '.join(added)}" if added else "",
                     f"; removed {', '.join(removed)}" if removed else "",
                     f"; new key for {', '.join(rotated)}" if rotated else "")
        else:
            log.info("config reloaded (clients unchanged)")
        return True
