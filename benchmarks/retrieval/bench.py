"""Retrieval benchmark: can an agent find the session again?

Writes the labelled sessions (specs/) in the real Claude Code and Codex on-disk formats with
the connectors' demo writers, ingests them with the real connectors and the configured summarizer
(`offline` by default) through `run_connectors`, then runs every labelled query (queries.py)
two ways:

- items:  `jezero.query.search` over the library (limit 10, recency boost, fixed `now`);
- raw:    plain FTS5 BM25 over the redacted transcripts, one row per session (the items'
          `original` column concatenated in segment order), same trigram tokenizer, same
          MATCH string (`jezero.query.build_match_query`).

Hits are mapped to sessions (an item's `session_id`; a session is at rank r if any of its items
is at rank r; sessions are deduplicated in the ranking). Prints recall@1, recall@5 and MRR@10 per
query kind and overall, and the index size figures.

    .venv/bin/python benchmarks/retrieval/bench.py              # the table
    .venv/bin/python benchmarks/retrieval/bench.py --misses     # plus every query items miss at 5
    .venv/bin/python benchmarks/retrieval/bench.py --keep DIR   # keep the sessions and the library
    .venv/bin/python benchmarks/retrieval/bench.py --json out.json
    .venv/bin/python benchmarks/retrieval/bench.py --order time --pad 2000 --pad-after   # storage order
                                                  # (storage_order.py: the orders and the distractors)
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import apsw  # noqa: E402

from jezero.config import Config, SearchConfig  # noqa: E402
from jezero_connectors_claude.demo import write_claude  # noqa: E402
from jezero_connectors_codex.demo import write_codex  # noqa: E402
from jezero.ingest.runner import run_connectors  # noqa: E402
from jezero.query import build_match_query, later, search  # noqa: E402
from jezero.store import DEFAULT_TOKENIZER, open_readonly, parse_stored_time  # noqa: E402

from chats import CHAT_KINDS, chat_specs  # noqa: E402
from longchats import LONG_KINDS, long_chat_specs  # noqa: E402
from queries import CHAINS, KINDS, QUERIES, chain_query  # noqa: E402
import storage_order  # noqa: E402
from specs import NOW, Spec, all_specs  # noqa: E402

LIMIT = 10
MAX_INPUT_CHARS = 60_000


# -- data set on disk ------------------------------------------------------------------------------


def write_sessions(specs: list[Spec], folder: Path) -> tuple[Path, Path, int]:
    """The sessions as Claude Code projects/ and a Codex home; returns both and the bytes written.
    Each file's mtime is set to its session's last line, as on a real disk."""
    claude, codex = folder / "claude" / "projects", folder / "codex"
    claude.mkdir(parents=True, exist_ok=True)
    codex.mkdir(parents=True, exist_ok=True)
    total = 0
    for spec in specs:
        s = spec.to_session_spec()
        path = write_claude(claude, s) if spec.agent == "claude" else write_codex(codex, s)
        step = 40 if spec.agent == "claude" else 30
        end = spec.started().timestamp() + step * (2 * len(spec.turns) + 2)
        os.utime(path, (end, end))
        total += path.stat().st_size
    return claude, codex, total


def ingest(claude: Path, codex: Path, library: Path, summarizer: str) -> tuple[float, list]:
    config = Config.model_validate({
        "storage": {"path": str(library)},
        "summarizer": {"name": summarizer},
        "ingest": {"settle_minutes": 0, "max_input_chars": MAX_INPUT_CHARS},
        "connectors": [
            {"name": "claude", "type": "claude", "options": {"path": str(claude)}},
            {"name": "codex", "type": "codex", "options": {"path": str(codex)}},
        ],
    })
    started = time.perf_counter()
    reports = run_connectors(config, now=NOW)
    return time.perf_counter() - started, reports


# -- the rankings --------------------------------------------------------------------------------

# The search lanes. `search` takes `lanes` once the messages layer is in (branch `messages`):
# ("items",) is the items-only search, ("messages",) the messages alone, both the fused search.
# Before that, only the items lane exists and the other two columns print as "-".
HAS_LANES = "lanes" in inspect.signature(search).parameters
SYSTEMS = ("items", "messages", "raw", "fused")
LANES = {"items": ("items",), "messages": ("messages",), "fused": ("items", "messages")}


def lane_ranking(conn: apsw.Connection, system: str, text: str, by_session: dict[str, str],
                 recency_weight: float | None = None, project: str | None = None) -> list[str] | None:
    """The sessions `search` ranks for `text` in one lane, or None when the lane does not exist."""
    kwargs = {"limit": LIMIT, "now": NOW, "recency_weight": recency_weight, "project": project, "options": OPTIONS}
    if HAS_LANES:
        kwargs["lanes"] = LANES[system]
    elif system != "items":
        return None
    hits = search(conn, text, **kwargs)
    return dedupe(by_session.get(h.get("session_id"), "?" + str(h.get("session_id"))) for h in hits)


OPTIONS = SearchConfig()  # --engine sets which search index engine ranks the items


def items_ranking(conn: apsw.Connection, text: str, by_session: dict[str, str],
                  recency_weight: float | None = None, project: str | None = None) -> list[str]:
    return lane_ranking(conn, "items", text, by_session, recency_weight, project)


class RawIndex:
    """One FTS5 row per session holding its redacted transcript, in an in-memory database.

    `ranking` is the reference: plain bm25. `ranking_with_recency` is a diagnostic only: the same
    bm25 re-ranked by search's recency factor (session end date, default options), to tell
    how much of a difference comes from recency and how much from the indexed text."""

    def __init__(self, docs: dict[str, str], ended: dict[str, datetime], projects: dict[str, str | None],
                 tokenizer: str = DEFAULT_TOKENIZER):
        self.ended = ended
        self.db = apsw.Connection(":memory:")
        tok = tokenizer.replace("'", "''")
        self.db.execute(f"CREATE VIRTUAL TABLE raw USING fts5(key UNINDEXED, project UNINDEXED, body, tokenize='{tok}')")
        with self.db:
            for key, body in docs.items():
                self.db.execute("INSERT INTO raw(key, project, body) VALUES(?, ?, ?)", (key, projects.get(key), body))

    def _rows(self, text: str, project: str | None, count: int):
        match = build_match_query(text)
        if not match:
            return []
        where = " AND project = ?" if project else ""
        args = (match, project, count) if project else (match, count)
        return self.db.execute(f"SELECT key, bm25(raw) FROM raw WHERE raw MATCH ?{where} ORDER BY bm25(raw) LIMIT ?", args)

    def ranking(self, text: str, project: str | None = None) -> list[str]:
        return [k for k, _ in self._rows(text, project, LIMIT)]

    def ranking_with_recency(self, text: str, options: SearchConfig = SearchConfig()) -> list[str]:
        w, half = options.recency_weight, options.recency_half_life_days
        scored = []
        for key, b in self._rows(text, None, options.candidate_pool):
            age = max((NOW - self.ended[key]).total_seconds() / 86400, 0.0)
            scored.append((-b * ((1 - w) + w * 0.5 ** (age / half)), key))
        scored.sort(key=lambda x: -x[0])
        return [k for _, k in scored[:LIMIT]]


def check_end_facts(specs: list[Spec], originals: dict[str, list[str]]) -> None:
    """A long session's end facts must be in its last segment only, or long_end tests nothing."""
    for spec in specs:
        if not spec.end_facts:
            continue
        segs = originals[spec.key]
        if len(segs) < 2:
            raise SystemExit(f"{spec.key}: meant to be long, but ingested as {len(segs)} segment")
        for fact in spec.end_facts:
            where = [i for i, text in enumerate(segs) if fact in text]
            if where != [len(segs) - 1]:
                raise SystemExit(f"{spec.key}: {fact!r} is in segments {where}, expected only the last ({len(segs) - 1})")


def fts_index_bytes(conn: apsw.Connection, table: str) -> int | None:
    """Bytes of an FTS5 table's inverted index (its _data and _idx shadow tables), or None when
    this SQLite has no dbstat."""
    try:
        rows = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name IN (?, ?)", (f"{table}_data", f"{table}_idx"))
        return rows.fetchone()[0]
    except apsw.Error:
        return None


def dedupe(keys) -> list[str]:
    out: list[str] = []
    for k in keys:
        if k not in out:
            out.append(k)
    return out


# -- metrics --------------------------------------------------------------------------------------

METRICS = ("r1", "r5", "r10", "rr")


@dataclass
class Scores:
    r1: float
    r5: float
    r10: float
    rr: float  # reciprocal rank of the first relevant session within LIMIT, else 0
    first: int | None  # its rank (1-based)


def score(ranking: list[str], relevant: tuple[str, ...]) -> Scores:
    rel = set(relevant)
    r1, r5, r10 = (len(rel & set(ranking[:k])) / len(rel) for k in (1, 5, 10))
    first = next((i + 1 for i, k in enumerate(ranking[:LIMIT]) if k in rel), None)
    return Scores(r1, r5, r10, 1.0 / first if first else 0.0, first)


def mean(rows: list[Scores | None], field: str) -> float | None:
    if not rows or any(r is None for r in rows):
        return None
    return sum(getattr(r, field) for r in rows) / len(rows)


def table(results: dict[str, list[dict]], kinds: tuple[str, ...], systems: tuple[str, ...] = SYSTEMS,
          total: str = "overall") -> str:
    """One line per kind; for each system R@1, R@5, R@10 and MRR@10 ("-" when it does not run)."""
    head = f"{'kind':<13}{'n':>4}" + "".join(f" | {name + ' R@1':>10} {'R@5':>5} {'R@10':>5} {'MRR':>5}" for name in systems)
    lines = [head, "-" * len(head)]
    everything: list[dict] = []
    for kind in [*kinds, total]:
        rows = everything if kind == total else results.get(kind, [])
        if kind != total:
            everything.extend(rows)
        if not rows:
            continue
        if kind == total:
            lines.append("-" * len(head))
        cells = []
        for name in systems:
            vals = [mean([r[name] for r in rows], f) for f in METRICS]
            cells.append(" | " + " ".join(f"{v:>{w}.3f}" if v is not None else f"{'-':>{w}}"
                                          for v, w in zip(vals, (10, 5, 5, 5))))
        lines.append(f"{kind:<13}{len(rows):>4}" + "".join(cells))
    return "\n".join(lines)


def half_key(q) -> str:
    """What a query's half is drawn from: its text and its relevant sessions (the same question is
    asked in several conversations of the chat sets, each with its own session)."""
    return q.text + "\0" + "\0".join(q.relevant)


def halves(results: dict[str, list[dict]]) -> dict[str, str]:
    """Each query's half, stratified by kind: within a kind the queries are ordered by a CRC of
    half_key() and dealt A, B, A, B ...; the first kind (in name order) starts with A, the next
    with B, and so on, so the halves differ by at most one query per kind and about one overall.
    The same rule for every set. (Until 2026-12-01 the half was the CRC's parity alone, which put
    all 10 long_update and all 10 long_multi questions in half B.)"""
    out: dict[str, str] = {}
    for i, kind in enumerate(sorted(results)):
        keys = sorted({half_key(r["query"]) for r in results[kind]},
                      key=lambda k: (zlib.crc32(k.encode("utf-8")), k))
        for j, key in enumerate(keys):
            out[key] = "AB"[(i + j) % 2]
    return out


def halves_table(results: dict[str, list[dict]], systems: tuple[str, ...] = SYSTEMS) -> str:
    """Overall figures of each half (A tuning, B check), then of both."""
    rows = [r for v in results.values() for r in v]
    of = halves(results)
    split = {name: [r for r in rows if of[half_key(r["query"])] == name[0]] for name in ("A (tuning)", "B (check)")}
    return table(split, tuple(split), systems, total="all")


def aggregate(rows: list[dict], systems: tuple[str, ...] = SYSTEMS) -> dict:
    return {"n": len(rows), **{name: {f: (round(v, 4) if (v := mean([r[name] for r in rows], f)) is not None else None)
                                      for f in METRICS} for name in systems}}


# -- later on decision chains ---------------------------------------------------------------------


def later_figures(conn: apsw.Connection, chains, by_key: dict[str, Spec], by_session: dict[str, str],
                  queries: dict[tuple, str] | None = None) -> dict:
    """`later` from every session of every chain, the last item of each session.

    From a session with newer sessions in its chain, those are what later should list on the
    subject; from the last session, nothing. precision = chain sessions among everything listed
    on the subject; recall = chain sessions listed / chain sessions to find. `timeline` counts the
    calls that fell back to the project's timeline (not evidence of a change)."""
    tp = fp = fn = fallback = calls = 0
    rows = []
    for chain in chains:
        query = (queries or {}).get(chain)
        for i, key in enumerate(chain):
            newer = set(chain[i + 1:])
            item_id = conn.execute("SELECT id FROM items WHERE session_id = ? ORDER BY segment_index DESC LIMIT 1",
                                   (by_key[key].id,)).fetchone()[0]
            got = later(conn, item_id, query, now=NOW)
            calls += 1
            listed = [by_session.get(h["session_id"], "?") for h in got["items"]] if got["matched_by"] == "subject" else []
            fallback += got["matched_by"] != "subject"
            found = set(listed) & newer
            tp += len(found)
            fp += sum(1 for k in listed if k not in newer and k != key)
            fn += len(newer - found)
            rows.append({"from": key, "want": sorted(newer), "listed": listed, "matched_by": got["matched_by"]})
    return {"calls": calls, "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / (tp + fn) if tp + fn else None,
            "listed_right": tp, "listed_wrong": fp, "missed": fn, "timeline": fallback, "rows": rows}


def later_line(name: str, f: dict) -> str:
    p = "-" if f["precision"] is None else f"{f['precision']:.3f}"
    r = "-" if f["recall"] is None else f"{f['recall']:.3f}"
    return (f"{name:<34} precision {p}  recall {r}  ({f['listed_right']} right, {f['listed_wrong']} wrong, "
            f"{f['missed']} missed; {f['timeline']} of {f['calls']} calls fell back to the timeline)")


# -- one data set ---------------------------------------------------------------------------------


@dataclass
class Library:
    conn: apsw.Connection
    by_key: dict[str, Spec]
    by_session: dict[str, str]
    originals: dict[str, list[str]]
    docs: dict[str, str]
    projects: dict[str, str | None]
    ended: dict[str, datetime]
    item_chars: int
    n_items: int
    transcript_bytes: int
    ingest_s: float


# --order / --pad / --pad-after (storage_order.py): how the sessions are stored.
STORAGE = {"order": "path", "pad": 0, "after": False}


def build_library(specs: list[Spec], folder: Path, summarizer: str, reuse: bool = False,
                  fillers: list[Spec] = ()) -> Library:
    """Write and ingest the sessions into folder/library.sqlite3, with the distractor sessions
    `fillers`, in the storage order of STORAGE; with `reuse`, open the library an earlier `--keep`
    run left there (no writing, no ingest: for trying a ranking change)."""
    library = folder / "library.sqlite3"
    fillers = list(fillers)
    if reuse:
        if not library.exists():
            raise SystemExit(f"--reuse: no library at {library}; run once with --keep first")
        transcript_bytes = sum(p.stat().st_size for p in (folder / "sessions").rglob("*.jsonl"))
        return load_library(specs + fillers, library, transcript_bytes, 0.0)
    transcript_bytes, ingest_s = 0, 0.0
    batches = storage_order.runs(specs, fillers, STORAGE["order"], STORAGE["after"])
    for n, batch in enumerate(batches):
        where = folder / "sessions" / (f"{n:05d}" if len(batches) > 1 else "")
        claude, codex, written = write_sessions(batch, where)
        took, reports = ingest(claude, codex, library, summarizer)
        transcript_bytes, ingest_s = transcript_bytes + written, ingest_s + took
        for rep in reports:
            if rep.error or rep.warnings:
                print(f"warning: connector {rep.connector}: {rep.error or rep.warnings[:3]}", file=sys.stderr)
    return load_library(specs + fillers, library, transcript_bytes, ingest_s)


def load_library(specs: list[Spec], library: Path, transcript_bytes: int, ingest_s: float) -> Library:
    if OPTIONS.engine != "fts5":
        from jezero.store import engines

        if engines.sync(OPTIONS.engine, library, rebuild=True) is None:
            raise SystemExit(f"--engine {OPTIONS.engine}: no installed plugin gives that engine")
    conn = open_readonly(library)
    by_key = {s.key: s for s in specs}
    by_session = {s.id: s.key for s in specs}
    rows = list(conn.execute(
        "SELECT session_id, segment_index, title, summary, questions, atoms, project, original, occurred_at "
        "FROM items ORDER BY session_id, segment_index"))
    missing = [s.key for s in specs if s.id not in {r[0] for r in rows}]
    if missing:
        raise SystemExit(f"sessions not ingested: {missing}")
    unknown = {r[0] for r in rows} - by_session.keys()
    if unknown:
        raise SystemExit(f"{len(unknown)} sessions of {library} are not in this data set: --reuse a padded "
                         "library with the same --pad")
    originals: dict[str, list[str]] = defaultdict(list)
    projects: dict[str, str | None] = {}
    ended: dict[str, datetime] = {}
    item_chars = 0
    for sid, _seg, title, summary, questions, atoms, project, original, occurred in rows:
        key = by_session[sid]
        originals[key].append(original)
        projects[key] = project
        ended[key] = max(ended.get(key, NOW.min.replace(tzinfo=NOW.tzinfo)), parse_stored_time(occurred))
        qs = "\n".join(json.loads(questions))
        at = "\n".join(a["text"] for a in json.loads(atoms))
        item_chars += len(title) + len(summary) + len(qs) + len(at) + len(project or "")
    docs = {k: "".join(v) for k, v in originals.items()}
    return Library(conn, by_key, by_session, originals, docs, projects, ended, item_chars, len(rows),
                   transcript_bytes, ingest_s)


def run_queries(lib: Library, raw: RawIndex, queries, scoped: bool) -> dict[str, list[dict]]:
    """kind -> one dict per query: the query and each system's Scores (None: the lane is absent).
    `scoped`: each query is asked within its conversation (project), as one person's memory."""
    results: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        project = lib.projects[q.relevant[0]] if scoped else None
        row: dict = {"query": q}
        for name in SYSTEMS:
            if name == "raw":
                ranking = raw.ranking(q.text, project)
            else:
                ranking = lane_ranking(lib.conn, name, q.text, lib.by_session, project=project)
            row[name] = None if ranking is None else score(ranking, q.relevant)
            row[name + "_top"] = ranking[:3] if ranking else []
        results[q.kind].append(row)
    return results


def per_query(results: dict[str, list[dict]]) -> list[dict]:
    of = halves(results)
    return [{"kind": r["query"].kind, "query": r["query"].text, "half": of[half_key(r["query"])], "relevant": list(r["query"].relevant),
             **{f"{name}_rank": (r[name].first if r[name] else None) for name in SYSTEMS},
             **{f"{name}_{f}": round(getattr(r[name], f), 4) for name in SYSTEMS if r[name] for f in METRICS},
             "top": {name: r[name + "_top"] for name in SYSTEMS}}
            for rows in results.values() for r in rows]


def print_misses(results: dict[str, list[dict]], lib: Library, system: str, k: int = 5) -> None:
    print(f"\nqueries where {system} misses a relevant session in the top {k}:")
    for rows in results.values():
        for r in rows:
            sc = r[system]
            if sc is None or getattr(sc, f"r{k}") >= 1.0:
                continue
            q = r["query"]
            print(f"- [{q.kind}] {q.text!r} -> {', '.join(q.relevant)}")
            for name in SYSTEMS:
                if r[name] is not None:
                    print(f"    {name:<8} rank {r[name].first or '>10'}; top {r[name + '_top']}")
            for key in q.relevant:
                for title, atoms in lib.conn.execute(
                        "SELECT title, atoms FROM items WHERE session_id=? ORDER BY segment_index", (lib.by_key[key].id,)):
                    shown = "; ".join(f"{a['type']}: {a['text'][:70]}" for a in json.loads(atoms)
                                      if a["type"] in ("error", "file", "decision"))
                    print(f"    {key} item: {title[:90]!r}\n      atoms: {shown[:300]}")


def check_needles(chat_queries, lib: Library) -> None:
    """Each fact of the conversational set is in the stored transcript of its session, after
    redaction: if not, the query could not be answered by any system."""
    for q in chat_queries:
        for key, needle in q.needles:
            if needle not in lib.docs[key]:
                raise SystemExit(f"chat fact {needle!r} is not in the stored transcript of {key}")


# -- main -----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summarizer", default="offline")
    parser.add_argument("--keep", type=Path, help="write sessions and libraries here instead of a temp folder")
    parser.add_argument("--reuse", type=Path, help="read the libraries a --keep run left in this folder (no ingest)")
    parser.add_argument("--misses", action="store_true", help="list the queries items miss at 5, with what came first")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument("--misses-of", default="items", choices=SYSTEMS, help="whose misses --misses lists")
    parser.add_argument("--halves", action="store_true", help="also print each set's halves (A tuning, B check)")
    parser.add_argument("--later-rows", action="store_true", help="list what later returned from each chain session")
    parser.add_argument("--engine", default="fts5", help="the search index engine for items: fts5 (default) or tantivy")
    parser.add_argument("--order", default="path", type=storage_order.check_order,
                        help="storage order of the sessions: path (one run, default), time, reverse, shuffle:SEED")
    parser.add_argument("--pad", type=int, default=0, help="add this many distractor sessions to each set")
    parser.add_argument("--pad-after", action="store_true", help="store the distractors after the judged sessions")
    args = parser.parse_args()
    global OPTIONS
    OPTIONS = SearchConfig(engine=args.engine)
    STORAGE.update(order=args.order, pad=args.pad, after=args.pad_after)

    t0 = time.perf_counter()
    specs = all_specs()
    by_key = {s.key: s for s in specs}
    for q in QUERIES:
        unknown = [k for k in q.relevant if k not in by_key]
        if unknown:
            raise SystemExit(f"query {q.text!r} names unknown sessions {unknown}")
    chats, chat_queries = chat_specs()
    longs, long_queries = long_chat_specs()

    tmp = None
    if args.reuse:
        folder = args.reuse
    elif args.keep:
        folder = args.keep
        if folder.exists():
            ours = {"coding", "chats", "longchats"}
            others = [p.name for p in folder.iterdir() if p.name not in ours]
            if others:
                raise SystemExit(f"--keep {folder}: not empty ({', '.join(sorted(others)[:5])}); give a new folder")
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="jezero-retrieval-")
        folder = Path(tmp.name)
    try:
        span = (min(s.days_ago for s in specs), max(s.days_ago for s in specs))
        cwds = sorted({s.cwd for s in specs})
        lib = build_library(specs, folder / "coding", args.summarizer, bool(args.reuse),
                            storage_order.coding_fillers(args.pad, span, cwds))
        chat_lib = build_library(chats, folder / "chats", args.summarizer, bool(args.reuse),
                                 storage_order.chat_fillers(args.pad))
        check_end_facts(specs, lib.originals)
        check_needles(chat_queries, chat_lib)
        long_lib = build_library(longs, folder / "longchats", args.summarizer, bool(args.reuse),
                                 storage_order.long_fillers(args.pad))
        check_needles(long_queries, long_lib)
        long_raw = RawIndex(long_lib.docs, long_lib.ended, long_lib.projects)
        raw = RawIndex(lib.docs, lib.ended, lib.projects)
        chat_raw = RawIndex(chat_lib.docs, chat_lib.ended, chat_lib.projects)

        q0 = time.perf_counter()
        results = run_queries(lib, raw, QUERIES, scoped=False)
        chat_results = run_queries(chat_lib, chat_raw, chat_queries, scoped=True)
        long_results = run_queries(long_lib, long_raw, long_queries, scoped=True)
        query_s = time.perf_counter() - q0
        ablation: dict[str, list] = defaultdict(list)
        for q in QUERIES:
            ablation[q.kind].append({
                "items": score(items_ranking(lib.conn, q.text, lib.by_session, recency_weight=0.0), q.relevant),
                "raw": score(raw.ranking_with_recency(q.text), q.relevant)})
        later_title = later_figures(lib.conn, CHAINS, lib.by_key, lib.by_session)
        later_query = later_figures(lib.conn, CHAINS, lib.by_key, lib.by_session, {c: chain_query(c) for c in CHAINS})
        chat_chains = [q.relevant if q.kind == "chat_multi" else (q.needles[0][0], q.needles[1][0])
                       for q in chat_queries if q.kind in ("chat_multi", "chat_update")]
        later_chat = later_figures(chat_lib.conn, chat_chains, chat_lib.by_key, chat_lib.by_session)

        segs = defaultdict(int)
        for key, parts in lib.originals.items():
            segs[key] = len(parts)
        long_sessions = {k: v for k, v in sorted(segs.items()) if v > 1}
        orig_chars = sum(len(d) for d in lib.docs.values())
        chat_chars = sum(len(d) for d in chat_lib.docs.values())
        per_kind = defaultdict(int)
        for q in [*QUERIES, *chat_queries, *long_queries]:
            per_kind[q.kind] += 1

        print(f"coding set: {len(specs)} sessions ({sum(s.agent == 'claude' for s in specs)} Claude Code, "
              f"{sum(s.agent == 'codex' for s in specs)} Codex; {sum(s.lang == 'es' for s in specs)} in Spanish), "
              f"{len({s.cwd.rsplit('/', 1)[1] for s in specs})} projects, "
              f"{min(s.days_ago for s in specs):.0f}-{max(s.days_ago for s in specs):.0f} days before {NOW:%Y-%m-%d}")
        print(f"          {lib.n_items} items ({lib.n_items / len(specs):.2f} per session); sessions cut into segments: "
              + ", ".join(f"{k} {v}" for k, v in long_sessions.items()))
        print(f"          {len(QUERIES)} queries: " + ", ".join(f"{k} {per_kind[k]}" for k in KINDS))
        print(f"chat set: {len(chats)} sessions in {len({s.cwd for s in chats})} conversations, {chat_lib.n_items} items, "
              f"{chat_chars / len(chats) / 1000:.1f} k chars per session; {len(chat_queries)} queries: "
              + ", ".join(f"{k} {per_kind[k]}" for k in CHAT_KINDS) + " (each asked within its conversation)")
        long_chars = sum(len(d) for d in long_lib.docs.values())
        print(f"long set: {len(longs)} sessions in {len({s.cwd for s in longs})} conversations with an assistant, "
              f"{long_lib.n_items} items, {long_chars / len(longs) / 1000:.1f} k chars and "
              f"{sum(len(s.turns) for s in longs) / len(longs):.0f} turns per session; {len(long_queries)} queries: "
              + ", ".join(f"{k} {per_kind[k]}" for k in LONG_KINDS) + " (each asked within its conversation)")
        print(f"size:     coding transcripts on disk {lib.transcript_bytes / 1e6:.2f} MB; redacted originals "
              f"{orig_chars / 1e6:.2f} M chars ({orig_chars / len(specs) / 1000:.1f} k per session); indexed item text "
              f"{lib.item_chars / 1e3:.1f} k chars ({lib.item_chars / lib.n_items:.0f} per item, "
              f"{100 * lib.item_chars / orig_chars:.1f}% of the originals)")
        ib, rb = fts_index_bytes(lib.conn, "items_fts"), fts_index_bytes(raw.db, "raw")
        if ib and rb:
            print(f"          trigram index (FTS5 _data + _idx): items {ib / 1e3:.0f} kB, raw transcripts {rb / 1e3:.0f} kB "
                  f"({100 * ib / rb:.0f}%)")
        print(f"time:     ingest {lib.ingest_s + chat_lib.ingest_s + long_lib.ingest_s:.1f} s, "
              f"{sum(per_kind.values())} queries x {len(SYSTEMS)} systems {query_s * 1000:.0f} ms, "
              f"total {time.perf_counter() - t0:.1f} s")
        if not HAS_LANES:
            print("lanes:    this search has no `lanes` argument (no messages layer): items only")
        print("\ncoding set")
        print(table(results, KINDS))
        print("\nconversational set (recall@10 is the target)")
        print(table(chat_results, CHAT_KINDS))
        print("\nlong-chat set (recall@10 is the target)")
        print(table(long_results, LONG_KINDS))
        if args.halves:
            for name, res in (("coding", results), ("conversational", chat_results), ("long-chat", long_results)):
                print(f"\n{name} set by half (constants are chosen on A; B is the check)")
                print(halves_table(res))
        print("\nlater on decision chains (from every session of a chain; from its last one nothing should be listed)")
        print(later_line("coding, no query (item's subject)", later_title))
        print(later_line("coding, the decision's words", later_query))
        print(later_line("chats, no query", later_chat))
        print("\ndiagnostic (not the reference): items with recency_weight = 0 | raw bm25 x search's recency factor")
        print(table(ablation, KINDS, ("items", "raw")))

        if args.later_rows:
            for name, f in (("no query", later_title), ("decision words", later_query), ("chats", later_chat)):
                print(f"\nlater, {name}:")
                for r in f["rows"]:
                    print(f"  {r['from']:<22} {r['matched_by']:<16} listed {r['listed']} want {r['want']}")
        if args.misses:
            print_misses(results, lib, args.misses_of)
            print_misses(chat_results, chat_lib, args.misses_of, 10)
            print_misses(long_results, long_lib, args.misses_of, 10)

        if args.json:
            out = {
                "lanes": HAS_LANES, "sessions": len(specs), "items": lib.n_items, "queries": len(QUERIES),
                "queries_per_kind": dict(per_kind), "segments": long_sessions,
                "transcript_bytes": lib.transcript_bytes, "original_chars": orig_chars, "item_chars": lib.item_chars,
                "index_bytes": {"items": ib, "raw": rb},
                "coding": {"kinds": {k: aggregate(v) for k, v in results.items()},
                           "overall": aggregate([x for v in results.values() for x in v])},
                "chats": {"sessions": len(chats), "kinds": {k: aggregate(v) for k, v in chat_results.items()},
                          "overall": aggregate([x for v in chat_results.values() for x in v])},
                "later": {name: {k: v for k, v in f.items() if k != "rows"}
                          for name, f in (("coding_no_query", later_title), ("coding_query", later_query),
                                          ("chats_no_query", later_chat))},
                "diagnostic": {"kinds": {k: aggregate(v, ("items", "raw")) for k, v in ablation.items()},
                               "note": "items = search with recency_weight 0; raw = raw bm25 x recency factor"},
                "longchats": {"sessions": len(longs), "kinds": {k: aggregate(v) for k, v in long_results.items()},
                              "overall": aggregate([x for v in long_results.values() for x in v])},
                "per_query": per_query(results) + per_query(chat_results) + per_query(long_results),
            }
            args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False))
        lib.conn.close()
        chat_lib.conn.close()
        long_lib.conn.close()
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
