"""Small plugins the tests register: a connector type over a folder of JSON sessions, and a
summarizer that copies words instead of calling a model."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from jezero import hookimpl
from jezero.ingest.files import file_signature, parse_time, same_signature
from jezero.models import Atom, Block, Session, Summary, Usage


def write_session(folder: Path, session_id: str, blocks: list[dict], *, cwd: str | None = None,
                  ended_at: str = "2026-01-01T10:00:00Z", warnings: list[str] | None = None) -> Path:
    """One session file for the `testdir` connector."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.json"
    path.write_text(json.dumps({"id": session_id, "cwd": cwd, "ended_at": ended_at, "blocks": blocks,
                                "warnings": warnings or []}))
    return path


class DirConnector:
    def __init__(self, options, context):
        self.root = Path(options["path"])
        self.context = context

    def read(self, cursor):
        for path in sorted(self.root.glob("*.json")):
            sig = file_signature(path)
            if same_signature(cursor.get(path.name), sig):
                continue
            data = json.loads(path.read_text())
            blocks = [Block(b.get("role", "user"), b.get("kind", "text"), b["text"], parse_time(b.get("time")),
                            b.get("tool"), b.get("is_error", False)) for b in data["blocks"]]
            yield Session(id=data["id"], agent="test-agent", blocks=blocks, cursor_key=path.name, cursor_value=sig,
                          cwd=data.get("cwd"), ended_at=parse_time(data["ended_at"]),
                          started_at=blocks[0].time if blocks else None, warnings=list(data.get("warnings", [])))


class TestConnectorPlugin:
    @hookimpl
    def register_connector_types(self, register):
        register("testdir", DirConnector, description="JSON session files, for tests")


class Overlap:
    """Proves that calls run at once without timing them: each caller waits inside until
    `parties` callers are inside together, once; after that nobody waits. A pool that runs one
    call at a time never gets there, and the bound (generous, never reached by a working pool
    however busy the machine) only stops such a broken test from hanging."""

    def __init__(self, parties: int, bound: float = 120.0):
        self.parties, self.bound = parties, bound
        self.inside = 0
        self.met = False
        self._cond = threading.Condition()

    def __enter__(self):
        with self._cond:
            self.inside += 1
            if self.inside >= self.parties:
                self.met = True
                self._cond.notify_all()
            elif not self._cond.wait_for(lambda: self.met, timeout=self.bound):
                raise AssertionError(f"{self.parties} calls were never in flight at once")
        return self

    def __exit__(self, *exc):
        with self._cond:
            self.inside -= 1


class EchoSummarizer:
    """Deterministic, and counts its calls; `fail_on` makes a segment containing it fail;
    `latency` simulates a slow model; `cost` is charged per call."""

    name = "echo"
    model = "echo-1"

    def __init__(self, max_in_flight=1, fail_on=None, latency=0.0, cost=None, tokens=100, overlap=None):
        self.max_in_flight, self.overlap = max_in_flight, overlap  # overlap: an Overlap every call enters
        self.fail_on, self.latency, self.cost, self.tokens = fail_on, latency, cost, tokens
        self.calls = 0
        self.in_flight = 0
        self.max_seen = 0
        self._lock = threading.Lock()

    def summarize(self, segment):
        with self._lock:
            self.calls += 1
            self.in_flight += 1
            self.max_seen = max(self.max_seen, self.in_flight)
        try:
            if self.overlap is not None:
                with self.overlap:
                    pass
            if self.latency:
                time.sleep(self.latency)
            if self.fail_on and self.fail_on in segment.text:
                raise RuntimeError(f"cannot summarise text with {self.fail_on!r}")
            first = next((b.text for b in segment.blocks if b.role == "user"), segment.blocks[0].text)
            title = first.splitlines()[0][:100] or "untitled"
            return Summary(
                title=title, summary=segment.text[:300].replace("[", " ").strip() or title,
                questions=[f"What about {title}?", "What happened?", "What was decided?"],
                atoms=[Atom(type="fact", text=title)], project=None, language="en",
            ), Usage(self.tokens, self.tokens // 10, self.cost)
        finally:
            with self._lock:
                self.in_flight -= 1


class SummarizerPlugin:
    def __init__(self, summarizer: EchoSummarizer):
        self.summarizer = summarizer

    @hookimpl
    def register_summarizers(self, register):
        register("echo", lambda config: self.summarizer, description="test summarizer")
