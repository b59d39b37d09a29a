"""Retrieval benchmark: can an agent find the session again?

Writes the labelled sessions (specs/) in the real Claude Code and Codex on-disk formats with
jezero.demo's writers, ingests them with the real connectors and the configured summarizer
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
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import apsw  # noqa: E402

from jezero.config import Config, SearchConfig  # noqa: E402
from jezero.demo import write_claude, write_codex  # noqa: E402
from jezero.ingest.runner import run_connectors  # noqa: E402
from jezero.query import build_match_query, search  # noqa: E402
from jezero.store import DEFAULT_TOKENIZER, open_readonly, parse_stored_time  # noqa: E402

from queries import KINDS, QUERIES, Query  # noqa: E402
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


# -- the two rankings -----------------------------------------------------------------------------


OPTIONS = SearchConfig()  # --engine sets which search index engine ranks the items


def items_ranking(conn: apsw.Connection, text: str, by_session: dict[str, str],
                  recency_weight: float | None = None) -> list[str]:
    hits = search(conn, text, limit=LIMIT, now=NOW, recency_weight=recency_weight, options=OPTIONS)
    return dedupe(by_session.get(h["session_id"], "?" + h["session_id"]) for h in hits)


class RawIndex:
    """One FTS5 row per session holding its redacted transcript, in an in-memory database.

    `ranking` is the reference: plain bm25. `ranking_with_recency` is a diagnostic only: the same
    bm25 re-ranked by search's recency factor (session end date, default options), to tell
    how much of a difference comes from recency and how much from the indexed text."""

    def __init__(self, docs: dict[str, str], ended: dict[str, datetime], tokenizer: str = DEFAULT_TOKENIZER):
        self.ended = ended
        self.db = apsw.Connection(":memory:")
        tok = tokenizer.replace("'", "''")
        self.db.execute(f"CREATE VIRTUAL TABLE raw USING fts5(key UNINDEXED, body, tokenize='{tok}')")
        with self.db:
            for key, body in docs.items():
                self.db.execute("INSERT INTO raw(key, body) VALUES(?, ?)", (key, body))

    def ranking(self, text: str) -> list[str]:
        match = build_match_query(text)
        if not match:
            return []
        rows = self.db.execute("SELECT key FROM raw WHERE raw MATCH ? ORDER BY bm25(raw) LIMIT ?", (match, LIMIT))
        return [r[0] for r in rows]

    def ranking_with_recency(self, text: str, options: SearchConfig = SearchConfig()) -> list[str]:
        match = build_match_query(text)
        if not match:
            return []
        rows = self.db.execute("SELECT key, bm25(raw) FROM raw WHERE raw MATCH ? ORDER BY bm25(raw) LIMIT ?",
                               (match, options.candidate_pool))
        w, half = options.recency_weight, options.recency_half_life_days
        scored = []
        for key, b in rows:
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


@dataclass
class Scores:
    r1: float
    r5: float
    rr: float  # reciprocal rank of the first relevant session within LIMIT, else 0
    first: int | None  # its rank (1-based)


def score(ranking: list[str], relevant: tuple[str, ...]) -> Scores:
    rel = set(relevant)
    r1 = len(rel & set(ranking[:1])) / len(rel)
    r5 = len(rel & set(ranking[:5])) / len(rel)
    first = next((i + 1 for i, k in enumerate(ranking[:LIMIT]) if k in rel), None)
    return Scores(r1, r5, 1.0 / first if first else 0.0, first)


def table(results: dict[str, list[tuple[Query, Scores, Scores]]], names: tuple[str, str] = ("items", "raw")) -> str:
    lines = []
    a, b = names
    head = (f"{'kind':<16}{'n':>4} | {a + ' R@1':>{max(9, len(a) + 4)}} {'R@5':>6} {'MRR@10':>7} | "
            f"{b + ' R@1':>{max(8, len(b) + 4)}} {'R@5':>6} {'MRR@10':>7}")
    wa, wb = max(9, len(a) + 4), max(8, len(b) + 4)
    lines += [head, "-" * len(head)]
    everything = []
    for kind in [*KINDS, "overall"]:
        rows = everything if kind == "overall" else results.get(kind, [])
        if kind != "overall":
            everything.extend(rows)
        if not rows:
            continue
        n = len(rows)
        it = [sum(getattr(s, f) for _, s, _ in rows) / n for f in ("r1", "r5", "rr")]
        rw = [sum(getattr(s, f) for _, _, s in rows) / n for f in ("r1", "r5", "rr")]
        if kind == "overall":
            lines.append("-" * len(head))
        lines.append(f"{kind:<16}{n:>4} | {it[0]:>{wa}.3f} {it[1]:>6.3f} {it[2]:>7.3f} | "
                     f"{rw[0]:>{wb}.3f} {rw[1]:>6.3f} {rw[2]:>7.3f}")
    return "\n".join(lines)


def aggregate(rows) -> dict:
    n = len(rows)
    return {
        "n": n,
        "items": {f: round(sum(getattr(s, f) for _, s, _ in rows) / n, 4) for f in ("r1", "r5", "rr")},
        "raw": {f: round(sum(getattr(s, f) for _, _, s in rows) / n, 4) for f in ("r1", "r5", "rr")},
    }


# -- main -----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summarizer", default="offline")
    parser.add_argument("--keep", type=Path, help="write sessions and library here instead of a temp folder")
    parser.add_argument("--misses", action="store_true", help="list the queries items miss at 5, with what came first")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument("--engine", default="fts5", help="the search index engine for items: fts5 (default) or tantivy")
    args = parser.parse_args()
    global OPTIONS
    OPTIONS = SearchConfig(engine=args.engine)

    t0 = time.perf_counter()
    specs = all_specs()
    by_key = {s.key: s for s in specs}
    for q in QUERIES:
        unknown = [k for k in q.relevant if k not in by_key]
        if unknown:
            raise SystemExit(f"query {q.text!r} names unknown sessions {unknown}")

    tmp = None
    if args.keep:
        folder = args.keep
        if folder.exists():
            ours = {"sessions", "library.sqlite3", "library.sqlite3-wal", "library.sqlite3-shm", "library.sqlite3.lock"}
            others = [p.name for p in folder.iterdir() if p.name not in ours]
            if others:
                raise SystemExit(f"--keep {folder}: not empty ({', '.join(sorted(others)[:5])}); give a new folder")
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="jezero-retrieval-")
        folder = Path(tmp.name)
    try:
        claude, codex, transcript_bytes = write_sessions(specs, folder / "sessions")
        library = folder / "library.sqlite3"
        ingest_s, reports = ingest(claude, codex, library, args.summarizer)
        for rep in reports:
            if rep.error or rep.warnings:
                print(f"warning: connector {rep.connector}: {rep.error or rep.warnings[:3]}", file=sys.stderr)

        if args.engine != "fts5":
            from jezero.store import engines

            if engines.sync(args.engine, library, rebuild=True) is None:
                raise SystemExit(f"--engine {args.engine}: no installed plugin gives that engine")
        conn = open_readonly(library)
        by_session = {s.id: s.key for s in specs}
        rows = list(conn.execute(
            "SELECT session_id, segment_index, title, summary, questions, atoms, project, original, occurred_at "
            "FROM items ORDER BY session_id, segment_index"))
        missing = [s.key for s in specs if s.id not in {r[0] for r in rows}]
        if missing:
            raise SystemExit(f"sessions not ingested: {missing}")
        originals: dict[str, list[str]] = defaultdict(list)
        item_chars = []
        ended: dict[str, datetime] = {}
        for sid, _seg, title, summary, questions, atoms, project, original, occurred in rows:
            key = by_session[sid]
            originals[key].append(original)
            ended[key] = max(ended.get(key, NOW.min.replace(tzinfo=NOW.tzinfo)), parse_stored_time(occurred))
            qs = "\n".join(json.loads(questions))
            at = "\n".join(a["text"] for a in json.loads(atoms))
            item_chars.append(len(title) + len(summary) + len(qs) + len(at) + len(project or ""))
        docs = {k: "".join(v) for k, v in originals.items()}
        check_end_facts(specs, originals)
        raw = RawIndex(docs, ended)

        results: dict[str, list] = defaultdict(list)
        ablation: dict[str, list] = defaultdict(list)  # kind -> (items without recency, raw with recency)
        misses = []
        q0 = time.perf_counter()
        for q in QUERIES:
            ir = items_ranking(conn, q.text, by_session)
            rr = raw.ranking(q.text)
            si, sr = score(ir, q.relevant), score(rr, q.relevant)
            results[q.kind].append((q, si, sr))
            if si.r5 < 1.0:
                misses.append((q, ir, rr, si, sr))
        query_s = time.perf_counter() - q0
        for q in QUERIES:
            ablation[q.kind].append((q, score(items_ranking(conn, q.text, by_session, recency_weight=0.0), q.relevant),
                                     score(raw.ranking_with_recency(q.text), q.relevant)))

        segs = defaultdict(int)
        for sid, *_ in rows:
            segs[sid] += 1
        n_items = len(rows)
        long_sessions = {k: segs[by_key[k].id] for k in by_key if segs[by_key[k].id] > 1}
        orig_chars = sum(len(d) for d in docs.values())
        per_kind = defaultdict(int)
        for q in QUERIES:
            per_kind[q.kind] += 1

        print(f"data set: {len(specs)} sessions ({sum(s.agent == 'claude' for s in specs)} Claude Code, "
              f"{sum(s.agent == 'codex' for s in specs)} Codex; {sum(s.lang == 'es' for s in specs)} in Spanish), "
              f"{len({s.cwd.rsplit('/', 1)[1] for s in specs})} projects, "
              f"{min(s.days_ago for s in specs):.0f}-{max(s.days_ago for s in specs):.0f} days before {NOW:%Y-%m-%d}")
        print(f"          {n_items} items ({n_items / len(specs):.2f} per session); sessions cut into segments: "
              + ", ".join(f"{k} {v}" for k, v in sorted(long_sessions.items())))
        print(f"          {len(QUERIES)} queries: " + ", ".join(f"{k} {per_kind[k]}" for k in KINDS))
        print(f"size:     transcripts on disk {transcript_bytes / 1e6:.2f} MB; redacted originals {orig_chars / 1e6:.2f} M chars "
              f"({orig_chars / len(specs) / 1000:.1f} k per session); indexed item text {sum(item_chars) / 1e3:.1f} k chars "
              f"({sum(item_chars) / n_items:.0f} per item, {100 * sum(item_chars) / orig_chars:.1f}% of the originals)")
        ib, rb = fts_index_bytes(conn, "items_fts"), fts_index_bytes(raw.db, "raw")
        if ib and rb:
            print(f"          trigram index (FTS5 _data + _idx): items {ib / 1e3:.0f} kB, raw transcripts {rb / 1e3:.0f} kB "
                  f"({100 * ib / rb:.0f}%)")
        print(f"time:     ingest {ingest_s:.1f} s, {2 * len(QUERIES)} queries {query_s * 1000:.0f} ms, "
              f"total {time.perf_counter() - t0:.1f} s")
        print()
        print(table(results))
        print()
        print("diagnostic (not the reference): items with recency_weight = 0 | raw bm25 x search's recency factor")
        print(table(ablation, ("items, no rec.", "raw + recency")))

        if args.misses:
            print("\nqueries where items miss a relevant session in the top 5:")
            for q, ir, rr, si, sr in misses:
                print(f"- [{q.kind}] {q.text!r} -> {', '.join(q.relevant)}")
                print(f"    items: rank {si.first or '>10'}; top {ir[:3]}")
                print(f"    raw:   rank {sr.first or '>10'}; top {rr[:3]}")
                for key in q.relevant:
                    if key in ir[:5]:
                        continue
                    for title, atoms in conn.execute(
                            "SELECT title, atoms FROM items WHERE session_id=? ORDER BY segment_index", (by_key[key].id,)):
                        shown = "; ".join(f"{a['type']}: {a['text'][:70]}" for a in json.loads(atoms)
                                          if a["type"] in ("error", "file", "decision"))
                        print(f"    {key} item: {title[:90]!r}\n      atoms: {shown[:400]}")

        if args.json:
            out = {
                "sessions": len(specs), "items": n_items, "queries": len(QUERIES),
                "queries_per_kind": dict(per_kind), "segments": long_sessions,
                "transcript_bytes": transcript_bytes, "original_chars": orig_chars, "item_chars": sum(item_chars),
                "index_bytes": {"items": ib, "raw": rb},
                "kinds": {k: aggregate(v) for k, v in results.items()},
                "overall": aggregate([x for v in results.values() for x in v]),
                "diagnostic": {"kinds": {k: aggregate(v) for k, v in ablation.items()},
                               "overall": aggregate([x for v in ablation.values() for x in v]),
                               "note": "items = search with recency_weight 0; raw = raw bm25 x recency factor"},
                "per_query": [{"kind": q.kind, "query": q.text, "relevant": list(q.relevant),
                               "items_rank": si.first, "raw_rank": sr.first, "items_r5": si.r5, "raw_r5": sr.r5}
                              for v in results.values() for q, si, sr in v],
            }
            args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False))
        conn.close()
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
