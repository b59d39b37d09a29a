"""Where a session becomes items: settle, redact, segment, hash, summarise, name the project,
write. The pipeline knows no source format (connectors do) and no ranking (the query layer does).

Exactly once, safely: a session's items, their index rows, their messages (the messages layer)
and the connector's cursor entry for that session are written in one transaction. A crash at any point leaves either all of it or none
of it, and the next run reads the session again from the cursor that was last committed. A
session that is still active or that a summarizer failed on keeps its old cursor entry, so it
comes back next run; unchanged segments are recognised by their content hash and never
summarised twice. A session the connector read with warnings (a bad line, an unknown record
type) is written and its cursor moves: reading the same bytes again would only repeat the
warning, which the store keeps until an admin acknowledges it (jezero.store.warnings).
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta, timezone
from typing import Callable

from jezero import plugins
from jezero.config import Config, ConnectorConfig, config_minutes
from jezero.ingest.files import without_lone_surrogates
from jezero.ingest.segments import SegmentIdCollision, first_time, segment_session
from jezero.ingest.shrunk import read_back_shorter
from jezero.models import (
    SUMMARY_SCHEMA_VERSION,
    ConnectorContext,
    ProjectHints,
    Segment,
    Session,
    Summarizer,
    Summary,
    Usage,
)
from jezero.store import ItemRecord, Store
from jezero.store.messages import from_blocks

log = logging.getLogger("jezero.ingest")

# A rough tokens-per-character ratio for English and code, for --dry-run estimates only.
CHARS_PER_TOKEN = 4

# A session whose last time is further ahead of this machine's clock than this was not written
# just now by an agent still at work: its times are wrong (a device's clock set years ahead, a
# local time read as UTC is at most 14 hours ahead). Waiting for it to settle would wait until
# that time comes, so it was never stored; it is written now, with a warning. A clock a little
# ahead only makes its session wait a little longer.
FUTURE_SKEW = timedelta(days=1)


@dataclass
class RunReport:
    connector: str
    sessions_seen: int = 0
    sessions_written: int = 0
    sessions_deferred: int = 0  # still active (settle)
    sessions_held: int = 0  # written but cursor held: a failed segment or an id collision
    segments_summarized: int = 0
    segments_unchanged: int = 0
    segments_reused: int = 0  # same text already summarised under another uid
    segments_failed: int = 0
    items_written: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    segments_planned: int = 0  # dry run: segments that would be summarised
    estimated_tokens: int = 0  # dry run: roughly what would be sent
    budget_reached: bool = False
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Budget:
    """Stops a run cleanly once its tokens or money are spent. Shared across connectors."""

    def __init__(self, usd: float | None = None, tokens: int | None = None):
        self.usd, self.tokens = usd, tokens
        self.spent_usd, self.spent_tokens = 0.0, 0
        self._lock = threading.Lock()

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.spent_tokens += usage.input_tokens + usage.output_tokens
            self.spent_usd += usage.cost_usd or 0.0

    @property
    def exhausted(self) -> bool:
        return (self.usd is not None and self.spent_usd >= self.usd) or (
            self.tokens is not None and self.spent_tokens >= self.tokens
        )


def redact_session(session: Session, redactors) -> Session:
    def clean(text: str | None) -> str | None:
        if not text:
            return text
        for r in redactors:
            text = r.redact(text)
        return text

    # A shell call's command and a file call's paths are text the summarizer reads too.
    blocks = [replace(b, text=clean(b.text), command=clean(b.command), paths=[clean(p) for p in b.paths])
              for b in session.blocks]
    return replace(session, blocks=blocks, title=clean(session.title), cwd=session.cwd)


def _without_lone_surrogates(record):
    """`record` (a Session or a Block) with each lone surrogate in its text fields replaced by
    U+FFFD; the same object when it holds none."""
    changes = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            fixed = without_lone_surrogates(value)
            if fixed != value:
                changes[f.name] = fixed
    return replace(record, **changes) if changes else record


def encodable_session(session: Session) -> Session:
    """The session with text that UTF-8 can hold. A lone surrogate cannot be hashed or stored:
    it stopped the connector's whole run at that session. A JSONL reader already replaces it,
    naming the file and line; what comes another way (a database row, a JSON document, a file
    name whose bytes are not UTF-8) is replaced here, with a warning naming the session."""
    blocks = [_without_lone_surrogates(b) for b in session.blocks]
    fixed = _without_lone_surrogates(session)
    if fixed is session and all(new is old for new, old in zip(blocks, session.blocks)):
        return session
    warning = f"session {fixed.id}: text that is not valid Unicode (a lone surrogate) replaced with U+FFFD"
    return replace(fixed, blocks=blocks, warnings=[*fixed.warnings, warning])


def build_summarizer(config: Config) -> Summarizer:
    types = plugins.summarizer_types()
    name = config.summarizer.name
    if name not in types:
        known = ", ".join(sorted(types)) or "none"
        raise LookupError(f"summarizer {name!r} is not installed (installed: {known}); pip install jezero-summarizers")
    return types[name].build(config.summarizer)


@dataclass
class _Pending:
    session: Session
    segments: list[Segment]
    stale_uids: list[str]
    futures: dict[str, Future]  # uid -> Future[(Summary, Usage)]
    reused: dict[str, ItemRecord]  # uid -> item copied from an identical segment
    hold_cursor: bool


class Pipeline:
    """Runs one connector: reads its sessions and writes their items."""

    def __init__(
        self,
        store: Store,
        config: Config,
        connector: ConnectorConfig,
        summarizer: Summarizer | None,
        *,
        budget: Budget | None = None,
        dry_run: bool = False,
        now: datetime | None = None,
        progress: Callable[[str], None] | None = None,
    ):
        self.store, self.config, self.conn_cfg = store, config, connector
        self.summarizer = summarizer
        self.budget = budget or Budget(config.summarizer.budget_usd, config.summarizer.budget_tokens)
        self.dry_run = dry_run
        self.now = now or datetime.now(timezone.utc)
        self.progress = progress or (lambda message: None)
        self.report = RunReport(connector.name)
        self.run_id = uuid.uuid4().hex[:12]
        self.redactors = plugins.redactors()
        self.pm = plugins.get_plugin_manager()

    # -- the run -----------------------------------------------------------------------------

    def run(self) -> RunReport:
        types = plugins.connector_types()
        ctype = types.get(self.conn_cfg.type)
        if ctype is None or ctype.build is None:
            raise LookupError(f"connector type {self.conn_cfg.type!r} is not installed")
        ctx = ConnectorContext(name=self.conn_cfg.name, warn=self._warn, default_project=self.conn_cfg.default_project)
        connector = ctype.build(dict(self.conn_cfg.options), ctx)
        cursor = self.store.cursor(self.conn_cfg.name)
        settle = config_minutes(self.config.ingest.settle_minutes)
        in_flight = max(1, getattr(self.summarizer, "max_in_flight", 1)) if self.summarizer else 1
        pool = ThreadPoolExecutor(max_workers=in_flight) if in_flight > 1 else None
        pending: deque[_Pending] = deque()
        try:
            try:
                for session in connector.read(cursor):
                    self.report.sessions_seen += 1
                    if self._still_active(session, settle):
                        self.report.sessions_deferred += 1
                        continue
                    if self.budget.exhausted:
                        self.report.budget_reached = True
                        break
                    job = self._prepare(session, pool)
                    if job is None:
                        continue
                    pending.append(job)
                    # Keep enough work queued to fill the pool, and write sessions as they finish.
                    while pending and (len(pending) > in_flight * 2 or _done(pending[0])):
                        self._finish(pending.popleft())
            except Exception:
                # The connector (or a session's preparation) failed part way: the sessions read
                # before it are summarised or being summarised, and are written before the error
                # goes up. Dropped, they were summarised (and paid for) again on every run and
                # never written while the connector kept failing at the same place.
                while pending:
                    self._finish(pending.popleft())
                raise
            while pending:
                self._finish(pending.popleft())
        finally:
            for job in pending:
                for f in job.futures.values():
                    f.cancel()
            if pool:
                pool.shutdown(wait=True, cancel_futures=True)
        if self.budget.exhausted:
            self.report.budget_reached = True
        return self.report

    def _still_active(self, session: Session, settle: timedelta) -> bool:
        if session.ended_at is None or self.now - session.ended_at >= settle:
            return False
        if session.ended_at - self.now > FUTURE_SKEW:  # not waited for: see FUTURE_SKEW
            self._warn(f"session {session.id}: its last time ({session.ended_at.isoformat()}) is in the future "
                       "(a clock set wrong?): written without waiting for it to settle")
            return False
        return True

    def _warn(self, message: str) -> None:
        # Info, not warning: the report carries every warning and the CLI prints each once.
        log.info("%s: %s", self.conn_cfg.name, message)
        self.report.warnings.append(message)

    def _prepare(self, session: Session, pool: ThreadPoolExecutor | None) -> _Pending | None:
        source = self.conn_cfg.name
        session = encodable_session(session)
        for w in session.warnings:
            self._warn(w)
        session = redact_session(session, self.redactors)
        try:
            segments = segment_session(session, source, self.config.ingest.max_input_chars)
        except SegmentIdCollision as e:  # loud, and the session is left for the next run
            self._warn(str(e))
            self.report.sessions_held += 1
            return None
        existing = self.store.session_items(source, session.id)
        shorter = read_back_shorter(session.id, existing, lambda: self.store.session_originals(source, session.id),
                                    segments)
        if shorter:  # jezero.ingest.shrunk: keep what is stored, move the cursor
            self._warn(shorter)
            return None if self.dry_run else _Pending(session, [], [], {}, {}, False)
        current = {s.uid for s in segments}
        job = _Pending(session, [], [u for u in existing if u not in current], {}, {}, False)
        for seg in segments:
            stored = existing.get(seg.uid)
            if stored and stored[1] == seg.content_hash:
                self.report.segments_unchanged += 1
                continue
            job.segments.append(seg)
            if self.dry_run:
                self.report.segments_planned += 1
                self.report.estimated_tokens += len(seg.text) // CHARS_PER_TOKEN
                continue
            twin = self.store.hash_exists(seg.content_hash)
            if twin is not None:
                self.report.segments_reused += 1
                job.reused[seg.uid] = twin[0]
                continue
            if self.summarizer is None:
                raise LookupError("no summarizer configured")
            if pool is not None:
                job.futures[seg.uid] = pool.submit(self._summarize, seg)
            else:
                f: Future = Future()
                try:
                    f.set_result(self._summarize(seg))
                except Exception as e:  # recorded per segment, like a pool failure
                    f.set_exception(e)
                job.futures[seg.uid] = f
        if self.dry_run:
            return None
        return job

    def _summarize(self, seg: Segment) -> tuple[Summary, Usage]:
        if self.budget.exhausted:
            raise BudgetReached()
        return self.summarizer.summarize(seg)

    def _finish(self, job: _Pending) -> None:
        source = self.conn_cfg.name
        items: list[ItemRecord] = []
        calls: list[dict] = []  # written with the items, in one transaction
        hold = job.hold_cursor
        for seg in job.segments:
            if seg.uid in job.reused:
                items.append(self._copy_item(job.reused[seg.uid], seg))
                continue
            try:
                summary, usage = job.futures[seg.uid].result()
            except BudgetReached:
                self.report.budget_reached = True
                hold = True
                continue
            except Exception as e:
                hold = True
                self.report.segments_failed += 1
                reason = f"{type(e).__name__}: {e}"
                self._warn(f"session {job.session.id} segment {seg.index}: summarizer failed: {reason}")
                spent = getattr(e, "usage", None) or Usage()  # a failed call may still have cost tokens
                self._account(spent)
                calls.append(dict(run_id=self.run_id, source=source, uid=seg.uid, summarizer=self.summarizer.name,
                                  model=self.summarizer.model, input_tokens=spent.input_tokens,
                                  output_tokens=spent.output_tokens, cost_usd=spent.cost_usd, ok=False,
                                  error=reason[:1000]))
                continue
            self._account(usage)
            self.report.segments_summarized += 1
            calls.append(dict(run_id=self.run_id, source=source, uid=seg.uid, summarizer=self.summarizer.name,
                              model=self.summarizer.model, input_tokens=usage.input_tokens,
                              output_tokens=usage.output_tokens, cost_usd=usage.cost_usd, ok=True))
            items.append(self._item(seg, summary))
        cursor = None if hold else {job.session.cursor_key: job.session.cursor_value}
        if hold:
            self.report.sessions_held += 1
        # Stale uids go only when the whole session was rewritten cleanly.
        self.store.write(items, connector=source, cursor=cursor, delete_uids=[] if hold else job.stale_uids,
                         calls=calls)
        self.report.items_written += len(items)
        if items or cursor:
            self.report.sessions_written += 1
        self.progress(f"{source}: {job.session.id} ({len(items)} item(s))")

    def _account(self, usage: Usage) -> None:
        self.budget.add(usage)
        self.report.input_tokens += usage.input_tokens
        self.report.output_tokens += usage.output_tokens
        self.report.cost_usd += usage.cost_usd or 0.0

    # -- items -------------------------------------------------------------------------------

    def project_for(self, session: Session, guess: str | None) -> str | None:
        hints = ProjectHints(
            source=self.conn_cfg.name, agent=session.agent, cwd=session.cwd,
            device_project=session.project_hint, summarizer_guess=guess,
            default_project=self.conn_cfg.default_project,
            rules=list(self.config.projects.rules), roots=list(self.config.projects.roots),
        )
        return self.pm.hook.resolve_project(hints=hints)

    def _item(self, seg: Segment, summary: Summary) -> ItemRecord:
        return segment_item(seg, summary_fields(summary, self.summarizer),
                            project=self.project_for(seg.session, summary.project))

    def _copy_item(self, twin_id: int, seg: Segment) -> ItemRecord:
        """The item for a segment whose redacted text is already summarised under another uid."""
        row = self.store.db.execute(
            "SELECT title, summary, questions, atoms, summarizer, summarizer_model, summary_schema, language, "
            "project_guess FROM items WHERE id=?", (twin_id,)
        ).fetchone()
        fields = dict(title=row[0], summary=row[1], questions=json.loads(row[2]), atoms=json.loads(row[3]),
                      summarizer=row[4], summarizer_model=row[5], summary_schema=row[6], language=row[7],
                      project_guess=row[8])
        return segment_item(seg, fields, project=self.project_for(seg.session, row[8]))


def summary_fields(summary: Summary, summarizer: Summarizer) -> dict:
    """What a summarizer's answer contributes to an item."""
    return dict(title=summary.title, summary=summary.summary, questions=list(summary.questions),
                atoms=[a.model_dump() for a in summary.atoms], summarizer=summarizer.name,
                summarizer_model=summarizer.model, summary_schema=SUMMARY_SCHEMA_VERSION,
                language=summary.language, project_guess=summary.project)


def segment_item(seg: Segment, fields: dict, *, project: str | None) -> ItemRecord:
    """An item from a segment (where it comes from) and its summary fields (what it says)."""
    s = seg.session
    started = first_time(seg.blocks)
    return ItemRecord(
        uid=seg.uid, source=seg.source, agent=s.agent, session_id=s.id, segment_index=seg.index,
        occurred_at=seg.occurred_at, original=seg.text, content_hash=seg.content_hash, project=project,
        parent_session_id=s.parent_id, started_at=started or s.started_at, cwd=s.cwd,
        git_branch=s.git_branch, model=s.model, device_project=s.project_hint,
        messages=from_blocks(seg.blocks), **fields,
    )


class BudgetReached(Exception):
    pass


def _done(job: _Pending) -> bool:
    return all(f.done() for f in job.futures.values())

