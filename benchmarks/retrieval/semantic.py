"""The semantic lane on the retrieval benchmark: keyword, vector and hybrid, per query kind.

Builds bench.py's three sets exactly as it does (the coding set, the conversational set, the
long-chat set: its writers, its libraries, its queries and its scoring), embeds each library with
`jezero embed`'s own pass (jezero.ingest.embed), then asks every query three ways:

- keyword: `search(..., lanes=("items", "messages"))`, today's default search;
- vector:  `search(..., lanes=("vectors",))`, the vector lane alone;
- hybrid:  `search(...)` with the lane on: the three lanes fused, literal matches kept in place
  (query/vectors.py LITERAL_IDF);
- unguarded (with `--unguarded`): the hybrid without that guard (LITERAL_GUARD off), as before it.

    .venv/bin/python benchmarks/retrieval/semantic.py                       # the real embedder if installed
    .venv/bin/python benchmarks/retrieval/semantic.py --embedder hashing    # the test embedder (no model)
    .venv/bin/python benchmarks/retrieval/semantic.py --weights 0.5,1,2     # the lane's weight, tuned on half A
    .venv/bin/python benchmarks/retrieval/semantic.py --literal-idf 0.5,1,2,off --unguarded
    .venv/bin/python benchmarks/retrieval/semantic.py --engine tantivy                 # items and messages on tantivy
    .venv/bin/python benchmarks/retrieval/semantic.py --json out.json
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/retrieval/semantic.py --embedder minilm --keep /tmp/full   # the full model
    .venv/bin/python benchmarks/retrieval/semantic.py --embedder minilm --window-chars 400 --keep /tmp/full400 --vector-k 60,10,2

`--window-chars N` embeds message windows of up to N characters instead of jezero/store/vectors.py's
WINDOW_CHARS (the model id does not say it, so give such a run a --keep folder of its own).
`--vector-k K,...` is an experiment on the fusion: the vector lane's share of a session at rank r
becomes weight / (K + r) instead of weight / (60 + r) (query/fused.py's RRF_K), tuned on half A
with the other constants.
    .venv/bin/python benchmarks/retrieval/semantic.py --embedder minilm --window-chars 400 --keep /tmp/full400 --flat-k off,2,5 --flat-rule literal,separation --flat-sep 0.3,0.5 --noise 1 --changes

`--flat-k K,...` sweeps `[semantic] flat_k` (query/vectors.py: the vector lane's share at weight / (K + rank)
for a query no session holds a literal term of; 'off': the fusion's own curve everywhere);
`--flat-rule separation` or `both` are experiments on when a query counts as flat (its messages
lane's best session less than `--flat-sep` above its 10th, (best - 10th) / best; or either).
`--noise 1` lets a kind lose one question's worth (R@5 and R@10) before it counts as below keyword.
`--changes` also prints each such query's messages-lane separation, whether a session holds a
literal term of it and the curve's K. Query vectors are embedded once per run and reused by every
variant.
    .venv/bin/python benchmarks/retrieval/semantic.py --pad 0,2000,10000 --keep /tmp/libs --unguarded
    .venv/bin/python benchmarks/retrieval/semantic.py --pad 0,2000,10000 --keep /tmp/libs --literal-depth off,1,3,5

With `--pad`, each set is also run on a copy of its library with N distractor sessions added
(benchmarks/messages/sessions.py's sessions, dated over the two years before NOW; the coding set's
in the corpus's projects, the scoped sets' dealt to their conversations' projects, since a search
within a project counts and scans only its sessions), reported as e.g. `coding+2000`; a tuning
sweep then counts those sets' half A too. `--keep` builds the libraries in a folder and reuses
them (10,000 distractors: about 1.6 GB per set and several minutes to build).

With `--weights` and `--literal-idf`, each pair is scored on half A of the queries (bench.halves:
stratified by kind, the halves bench.py --halves prints) and the best is reported on half B, which
took no part in choosing it, and on the whole. Best on A: the fewest kinds (of all three sets)
where the hybrid's R@5 is below keyword's, then the hybrid's R@5 summed over the three sets (each
set counts once, as in bench.py's criterion), then its MRR@10 summed likewise, then (a tie) the
larger LITERAL_IDF: the guard over the fewest words.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
from bench import LIMIT, NOW, aggregate, build_library, dedupe, half_key, score, table  # noqa: E402
from bench import halves as bench_halves  # noqa: E402
from chats import CHAT_KINDS, chat_specs  # noqa: E402
from longchats import LONG_KINDS, long_chat_specs  # noqa: E402
from queries import KINDS, QUERIES  # noqa: E402
from specs import all_specs  # noqa: E402

sys.path.insert(0, str(HERE.parent / "messages"))
from sessions import SessionCorpus  # noqa: E402  (benchmarks/messages/sessions.py)

from jezero import plugins  # noqa: E402
from jezero.config import Config, SearchConfig, SemanticConfig  # noqa: E402
from jezero.ingest.embed import embed_library  # noqa: E402
from jezero.models import EmbedderNotReady  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.query import vectors as vector_query  # noqa: E402
from jezero.query.vectors import VectorLane  # noqa: E402
from jezero.store import Store, open_readonly  # noqa: E402

SYSTEMS = ("keyword", "vector", "hybrid")
REAL = "minilm-static"


def choose_embedder(name: str | None, options: dict) -> str:
    """The real embedder when it is installed and ready (or the one asked for); else the test
    kit's hashing embedder, registered here. Says which on stderr."""
    types = plugins.embedder_types()
    wanted = name or REAL
    if wanted in types:
        try:
            types[wanted].build(options)
            return wanted
        except EmbedderNotReady as e:
            if name:
                raise SystemExit(f"embedder {wanted}: {e}")
            print(f"note: {wanted} is installed but not ready ({e}); using the hashing test embedder",
                  file=sys.stderr)
    elif name and name != "hashing":
        raise SystemExit(f"embedder {name!r} is not installed (installed: {', '.join(sorted(types)) or 'none'})")
    from jezero.plugin.testing import HashingEmbedderPlugin

    if "hashing" not in types:
        plugins.get_plugin_manager().register(HashingEmbedderPlugin(), name="bench:hashing")
    if not name and wanted not in types:
        print(f"note: {REAL} is not installed; using the hashing test embedder (knows no meaning)", file=sys.stderr)
    return "hashing"


def embed(library: Path, semantic: SemanticConfig) -> dict:
    config = Config.model_validate({"storage": {"path": str(library)}, "semantic": semantic.model_dump()})
    started = time.process_time()
    report = embed_library(config, batch=256)
    cpu = time.process_time() - started
    return {"items": report.embedded, "windows": report.windows, "cpu_s": round(cpu, 2),
            "vectors_per_cpu_s": round((report.embedded + report.windows) / cpu, 1) if cpu else None,
            "model_id": report.model_id, "dimension": report.dimension}


class CachedEmbedder:
    """--vector-cache: an embedder's rows kept in a SQLite file by (model id, side, text), so a
    later run (another window length, another combination) embeds only the texts it has not seen.
    The same model id and dimension as the embedder it wraps: the library cannot tell."""

    def __init__(self, inner, path: Path):
        import apsw

        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = apsw.Connection(str(path))
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS rows(key BLOB PRIMARY KEY, row BLOB NOT NULL)")

    def _key(self, text: str, query: bool) -> bytes:
        import hashlib

        return hashlib.sha1(f"{self.model_id}\0{int(query)}\0{text}".encode("utf-8", "replace")).digest()

    def embed(self, texts, *, query: bool = False):
        import numpy as np

        keys = [self._key(t, query) for t in texts]
        out = np.zeros((len(texts), int(self.dimension)), dtype=np.float32)
        todo = []
        for i, k in enumerate(keys):
            row = self.db.execute("SELECT row FROM rows WHERE key = ?", (k,)).fetchone()
            if row is None:
                todo.append(i)
            else:
                out[i] = np.frombuffer(row[0], dtype=np.float32)
        if todo:
            rows = np.asarray(self.inner.embed([texts[i] for i in todo], query=query), dtype=np.float32)
            with self.db:
                for i, row in zip(todo, rows):
                    out[i] = row
                    self.db.execute("INSERT OR REPLACE INTO rows(key, row) VALUES(?, ?)", (keys[i], row.tobytes()))
        return out


def cache_vectors(folder: Path) -> None:
    """Wrap every jezero_embedders embedder's build with CachedEmbedder (one file per embedder)."""
    import jezero_embedders as package

    for module in (getattr(package, n) for n in ("minilm", "e5_small", "minilm_static", "pair")
                   if hasattr(package, n)):
        inner = module.build

        def build(options, inner=inner, name=module.NAME):
            built = inner(options)
            if getattr(built, "parts", None):  # a combination: cache its parts, not the whole
                return built
            return CachedEmbedder(built, folder / f"{name}.sqlite3")

        module.build = build


# -- distractors (--pad) ---------------------------------------------------------------------------

PAD_SEED = 11
PAD_SPAN_DAYS = 730  # the distractors' dates: the two years up to the benchmark's NOW


def distractors(start: int, stop: int, projects: list[str] | None):
    """Distractor sessions `start`..`stop` (benchmarks/messages/sessions.py: an item of ~1 KB of
    summary plus a transcript of 12-70 messages, words from the search benchmark's Zipf dev
    vocabulary), seeded by position: the first 2,000 of 10,000 are the 2,000. Dated over the two
    years before NOW. With `projects`, each goes to one of them in turn (the scoped sets: their
    searches count and scan only their project's sessions); else to the corpus's own projects."""
    corpus = SessionCorpus(PAD_SEED)
    out = []
    for i in range(start, stop):
        corpus.rng = random.Random(PAD_SEED * 1_000_003 + i)
        item = corpus.session(i, stop)
        sid = f"pad{i}"
        item.session_id, item.uid, item.content_hash = sid, f"{item.source}:{sid}:0", f"pad-h{i}"
        if item.parent_session_id:
            item.parent_session_id = f"pad{int(item.parent_session_id[1:])}"
        item.occurred_at = NOW - timedelta(days=corpus.rng.random() * PAD_SPAN_DAYS, seconds=corpus.rng.randint(0, 3600))
        if projects:
            item.project = projects[i % len(projects)]
        out.append(item)
    return out


def padded(base: Path, target: Path, start: int, stop: int, projects: list[str] | None, semantic: SemanticConfig) -> dict:
    """`base` (a library) copied to `target` with distractors start..stop added and embedded."""
    import apsw

    target.parent.mkdir(parents=True, exist_ok=True)
    dest = apsw.Connection(str(target))
    with dest.backup("main", apsw.Connection(str(base)), "main") as b:
        b.step()
    dest.close()
    started = time.process_time()
    with Store(target) as store:
        for at in range(start, stop, 500):
            store.write(distractors(at, min(at + 500, stop), projects))
        store.tidy_index(written=stop - start)
    write_s = time.process_time() - started
    report = embed(target, semantic)
    report["write_cpu_s"] = round(write_s, 2)
    return report


def sharpen(vector_k: int | None) -> None:
    """An experiment on the fusion (not in the library): the vector lane's share of a session at
    rank r becomes weight / (vector_k + r) instead of weight / (RRF_K + r), through the lane's
    per-session gate (fused.Ranked.gate); None restores query/fused.py's own."""
    from jezero.query import fused

    if vector_k is None:
        fused.vectors_ranked = _VECTORS_RANKED
        return

    def ranked(near, messages=None):
        lane = _VECTORS_RANKED(near, messages)
        lane.gate = {key: (rules.RRF_K + r) / (vector_k + r) for r, key in enumerate(lane.sessions, start=1)}
        return lane

    fused.vectors_ranked = ranked


def lead_guard(ratio: float | None) -> None:
    """An experiment on the literal guard (not in the library): the sessions the messages lane
    scores at least `ratio` times its LEAD_DEPTH-th session's score (the clear lexical leaders: they
    hold the query's rarer words) take the first places, in the fused order, before every other
    session; None restores query/vectors.py's own guard alone."""
    if ratio is None:
        VectorLaneHits.literal_guard = _LITERAL_GUARD
        return

    def literal_guard(self, messages):
        arrange = _LITERAL_GUARD(self, messages)
        scores = {(x.source, x.session_id): -x.match.bm25 for x in (messages or [])}
        ranked = sorted(scores.values(), reverse=True)
        if len(ranked) < LEAD_DEPTH:
            return arrange
        bar = ratio * ranked[LEAD_DEPTH - 1]
        leaders = {k for k, v in scores.items() if v > 0 and v >= bar}
        if not leaders:
            return arrange

        def lead(order, lanes, limit):
            order = arrange(order, lanes, limit) if arrange else order
            return [e for e in order if e["key"] in leaders] + [e for e in order if e["key"] not in leaders]

        return lead

    VectorLaneHits.literal_guard = literal_guard


LEAD_DEPTH = 10
from jezero.query.vectors import VectorHits as VectorLaneHits  # noqa: E402

_LITERAL_GUARD = VectorLaneHits.literal_guard
from jezero.query import fused as _fused  # noqa: E402
from jezero.query.fused import rules  # noqa: E402

_VECTORS_RANKED = _fused.vectors_ranked


def guarded(literal_idf: float | None, cap=False):
    """Set the vector lane's literal guard (query/vectors.py): None turns it off; `cap` sets
    LITERAL_MAX_SESSIONS (None: no bound; False: leave it)."""
    vector_query.LITERAL_GUARD = literal_idf is not None
    if literal_idf is not None:
        vector_query.LITERAL_IDF = literal_idf
    if cap is not False:
        vector_query.LITERAL_MAX_SESSIONS = cap
        if DEPTH_SWEEP:  # --literal-depth: the values swept are depths (LITERAL_DEPTH), the bound left off
            vector_query.LITERAL_MAX_SESSIONS, vector_query.LITERAL_DEPTH = None, cap


DEPTH_SWEEP = False
VECTOR_K: int | None = None  # --vector-k: the value being run (None: fused.py's RRF_K)
LEAD: float | None = None  # --lead: the value being run (None: no lead rule)


def rankings(lib, lane: VectorLane, q, project, systems, literal_idf) -> dict[str, list[str]]:
    base = {"limit": LIMIT, "now": NOW, "project": project, "options": bench.OPTIONS}

    def keys(hits):  # a distractor (--pad) is its own wrong answer
        return dedupe(lib.by_session.get(h.get("session_id")) or f"pad:{h.get('session_id')}" for h in hits)

    # keyword, vector and unguarded do not depend on the guard's constants: asked once per sweep
    key = (id(lib), q.text, project, lane.config.weight, VECTOR_K, LEAD)
    if key not in _UNTUNED:
        _UNTUNED[key] = {"keyword": keys(search(lib.conn, q.text, lanes=("items", "messages"), **base)),
                         "vector": keys(search(lib.conn, q.text, lanes=("vectors",), semantic=lane, **base))}
        if "unguarded" in systems:
            guarded(None)
            _UNTUNED[key]["unguarded"] = keys(search(lib.conn, q.text, semantic=lane, **base))
    out = dict(_UNTUNED[key])
    guarded(literal_idf)
    SEPARATION[0] = None
    out["hybrid"] = keys(search(lib.conn, q.text, semantic=lane, **base))
    out["separation"] = SEPARATION[0]
    return out


_UNTUNED: dict[tuple, dict[str, list[str]]] = {}
SEPARATION: list[str | None] = [None]  # the last hybrid search's curve and evidence (for --changes)

# --flat-rule: an experiment on query/vectors.py's flat_curve (not in the library). "literal" is the
# library's own (flat: no session holds a literal term of the query); "separation": flat when the
# messages lane's best session scores less than FLAT_SEPARATION above its 10th ((best - 10th) /
# best); "both": either; "and": both at once.
FLAT_RULE = "literal"
FLAT_SEPARATION = 0.5
_FLAT_CURVE = vector_query.flat_curve


def keyword_separation(messages) -> float:
    scores = sorted((-x.match.bm25 for x in (messages or ())), reverse=True)
    if not scores or scores[0] <= 0:
        return 0.0
    if len(scores) == 1:
        return 1.0
    return max(0.0, (scores[0] - scores[min(10, len(scores)) - 1]) / scores[0])


def _flat_curve(messages, count_sessions=None, flat_k=None):
    literal = _FLAT_CURVE(messages, count_sessions, flat_k)
    if FLAT_RULE == "literal" or flat_k is None:
        return literal
    separated = keyword_separation(messages) >= FLAT_SEPARATION
    if FLAT_RULE == "separation":
        return rules.RRF_K if separated else flat_k
    if FLAT_RULE == "and":  # flat only when no session holds a literal term and the lane does not separate
        return flat_k if literal == flat_k and not separated else rules.RRF_K
    return flat_k if literal == flat_k or not separated else rules.RRF_K


vector_query.flat_curve = _flat_curve
_CURVE = VectorLaneHits.curve


def _recorded_curve(self, messages):
    k = _CURVE(self, messages)
    literal = bool(vector_query.literal_terms(messages, self.count_sessions)[1]) if self.count_sessions else False
    sims = [h.similarity for h in self]
    margin = (f" sims {sims[0]:.3f}/{sims[1]:.3f}/{sims[min(9, len(sims) - 1)]:.3f}" if len(sims) > 1 else "")
    SEPARATION[0] = f"sep {keyword_separation(messages):.2f}{' literal' if literal else ''} K {k}{margin}"
    return k


VectorLaneHits.curve = _recorded_curve

# A query's vector is the same in every variant replayed: embedded once per embedder and query.
from jezero.store import vectors as _stored  # noqa: E402

_UNIT_ROWS = _stored.unit_rows
_QUERY_ROWS: dict[tuple, object] = {}


def _cached_unit_rows(embedder, texts, *, query=False):
    if not query or len(texts) != 1:
        return _UNIT_ROWS(embedder, texts, query=query)
    key = (embedder.model_id, texts[0])
    if key not in _QUERY_ROWS:
        _QUERY_ROWS[key] = _UNIT_ROWS(embedder, texts, query=True)
    return _QUERY_ROWS[key]


_stored.unit_rows = _cached_unit_rows


def run(lib, lane: VectorLane, queries, scoped: bool, systems=SYSTEMS, literal_idf=None) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        project = lib.projects[q.relevant[0]] if scoped else None
        ranked = rankings(lib, lane, q, project, systems, literal_idf)
        row = {"query": q, **{name: score(ranked[name], q.relevant) for name in systems}}
        row.update({name + "_top": ranked[name][:3] for name in systems})
        row["separation"] = ranked["separation"]
        results[q.kind].append(row)
    return results


def halves(results: dict[str, list[dict]]) -> tuple[dict, dict]:
    """(half A, half B) of a set's results, as bench.py --halves deals them (bench.halves:
    stratified by kind)."""
    of = bench_halves(results)
    tune, held = defaultdict(list), defaultdict(list)
    for kind, rows in results.items():
        for r in rows:
            (tune if of[half_key(r["query"])] == "A" else held)[kind].append(r)
    return tune, held


def kinds_below(results: dict[str, list[dict]], system: str = "hybrid", field: str = "r5", noise: float = 0.0) -> list[str]:
    """The kinds where `system` scores below keyword alone (mean `field`) by more than `noise`
    questions (--noise: 1, a kind may lose one question's worth)."""
    return [kind for kind, rows in sorted(results.items())
            if sum(getattr(r[system], field) for r in rows) < sum(getattr(r["keyword"], field) for r in rows) - noise - 1e-9]


def flat(results: dict[str, list[dict]]) -> list[dict]:
    return [r for rows in results.values() for r in rows]


def parse_idf(text: str) -> float | None:
    return None if text.strip() in ("off", "none") else float(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", help=f"embedder name (default: {REAL} when installed, else hashing)")
    parser.add_argument("--weights", help="comma-separated lane weights to tune on half A")
    parser.add_argument("--literal-idf", help="comma-separated LITERAL_IDF values to tune on half A ('off': no guard)")
    parser.add_argument("--literal-cap", help="comma-separated LITERAL_MAX_SESSIONS values to tune on half A ('off': no bound)")
    parser.add_argument("--literal-depth", help="comma-separated LITERAL_DEPTH values to tune on half A ('off': all guard), instead of --literal-cap")
    parser.add_argument("--unguarded", action="store_true", help="also report the hybrid without the literal guard")
    parser.add_argument("--options", type=json.loads, default={}, help='the embedder\'s options as JSON, e.g. \'{"cache_dir": "/x"}\'')
    parser.add_argument("--k", type=int, default=SemanticConfig().k)
    parser.add_argument("--vector-k", default="",
                        help="comma-separated reciprocal-rank constants for the vector lane alone, tuned on half A "
                             "(an experiment: its share becomes weight / (K + rank) instead of weight / (60 + rank))")
    parser.add_argument("--lead", default="",
                        help="comma-separated ratios, tuned on half A: an experiment, the sessions the messages lane "
                             "scores at least that many times its 10th session's score come first ('off': none)")
    parser.add_argument("--flat-k", default="",
                        help="comma-separated [semantic] flat_k values (query/vectors.py: the vector lane's reciprocal-rank "
                             "constant where the keyword evidence is flat; 'off': none), tuned on half A")
    parser.add_argument("--flat-sep", default="",
                        help="comma-separated FLAT_SEPARATION values (with --flat-rule separation or both), tuned on half A")
    parser.add_argument("--flat-rule", default="",
                        help="comma-separated flat rules, tuned on half A: literal (query/vectors.py's own), separation, both "
                             "(experiments: see FLAT_RULE in this file)")
    parser.add_argument("--noise", type=float, default=0.0,
                        help="a kind counts as below keyword only when it loses more than this many questions "
                             "(at R@5, and at R@10 too when this is given)")
    parser.add_argument("--window-chars", type=int,
                        help="message windows of up to this many characters (jezero/store/vectors.py WINDOW_CHARS, "
                             "1,200) for this run; with --keep, use a folder of its own (the model id does not change)")
    parser.add_argument("--engine", default="fts5", help="the search index engine: fts5 (default) or tantivy")
    parser.add_argument("--pad", default="0",
                        help="comma-separated distractor counts: each set is also run with that many distractor "
                             "sessions added to its library (benchmarks/messages/sessions.py), e.g. 0,2000,10000")
    parser.add_argument("--vector-cache", type=Path,
                        help="keep every embedder's rows in this folder by text and reuse them (a later run embeds only new texts)")
    parser.add_argument("--keep", type=Path, help="build the libraries in this folder and reuse them on the next run")
    parser.add_argument("--sets", default="coding,chats,longchats",
                        help="comma-separated sets to run (coding, chats, longchats; default all three): a slow "
                             "embedder can be measured on the small sets first")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--misses", action="store_true", help="list the queries hybrid misses at 5")
    parser.add_argument("--changes", action="store_true", help="list the queries whose first relevant rank, R@5 or R@10 moved from keyword to hybrid")
    args = parser.parse_args()
    bench.OPTIONS = SearchConfig(engine=args.engine)  # build_library syncs the engine's indexes
    if args.window_chars:
        from jezero.store import vectors as stored_vectors

        stored_vectors.WINDOW_CHARS = args.window_chars

    if args.vector_cache:
        cache_vectors(args.vector_cache)
    name = choose_embedder(args.embedder, args.options)
    options = args.options if name != "hashing" else {}
    weights = [float(w) for w in args.weights.split(",")] if args.weights else [SemanticConfig().weight]
    idfs = ([parse_idf(v) for v in args.literal_idf.split(",")] if args.literal_idf
            else [vector_query.LITERAL_IDF if vector_query.LITERAL_GUARD else None])
    global DEPTH_SWEEP, FLAT_RULE, FLAT_SEPARATION
    DEPTH_SWEEP = bool(args.literal_depth)
    swept = args.literal_depth or args.literal_cap
    caps = ([None if v.strip() in ("off", "none") else int(v) for v in swept.split(",")]
            if swept else [vector_query.LITERAL_MAX_SESSIONS])
    systems = SYSTEMS + (("unguarded",) if args.unguarded else ())
    specs = all_specs()
    chats, chat_queries = chat_specs()
    longs, long_queries = long_chat_specs()
    sets = {"coding": (specs, QUERIES, KINDS, False), "chats": (chats, chat_queries, CHAT_KINDS, True),
            "longchats": (longs, long_queries, LONG_KINDS, True)}
    unknown = set(args.sets.split(",")) - set(sets)
    if unknown:
        parser.error(f"--sets: unknown set(s) {', '.join(sorted(unknown))}")
    sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    titles = {"coding": "coding set (all queries)",
              "chats": "conversational set (all queries, each within its conversation)",
              "longchats": "long-chat set (all queries, each within its conversation)"}
    out: dict = {"embedder": name, "k": args.k, "engine": args.engine, "window_chars": args.window_chars}
    with tempfile.TemporaryDirectory(prefix="jezero-semantic-") as tmp:
        folder = args.keep or Path(tmp)
        libs = {set_name: build_library(s_specs, folder / set_name, "offline",
                                        reuse=args.keep is not None and (folder / set_name / "library.sqlite3").exists())
                for set_name, (s_specs, _, _, _) in sets.items()}
        base = SemanticConfig(enabled=True, embedder=name, options=options, k=args.k)
        out["embedding"] = {set_name: embed(folder / set_name / "library.sqlite3", base) for set_name in sets}
        first = next(iter(out["embedding"].values()))
        print(f"embedder: {name} ({first['model_id']}, {first['dimension']} dims)")
        pads = sorted({int(n) for n in args.pad.split(",")})
        for set_name in list(sets):
            previous, done = folder / set_name / "library.sqlite3", 0
            # the coding set's searches span the library; the others' are within one conversation
            projects = sorted({p for p in libs[set_name].projects.values() if p}) if sets[set_name][3] else None
            for n in (n for n in pads if n > 0):
                padded_name = f"{set_name}+{n}"
                target = folder / padded_name / "library.sqlite3"
                if not (args.keep and target.exists()):
                    out["embedding"][padded_name] = padded(previous, target, done, n, projects, base)
                libs[padded_name] = dataclasses.replace(libs[set_name], conn=open_readonly(target))
                sets[padded_name] = sets[set_name]
                titles[padded_name] = f"{titles[set_name][:-1]}, {n:,} distractor sessions added)"
                previous, done = target, n
        if 0 not in pads:
            for set_name in ("coding", "chats", "longchats"):
                sets.pop(set_name, None)
        for set_name, e in out["embedding"].items():
            print(f"  {set_name}: {e['items']} items + {e['windows']} message windows embedded in {e['cpu_s']} s CPU "
                  f"({e['vectors_per_cpu_s']} vectors per CPU second, writing included)")
        sweep = []
        chosen = None
        fks = ([None if v.strip() in ("off", "none") else int(v) for v in args.flat_k.split(",")]
               if args.flat_k else [SemanticConfig().flat_k])
        fss = [float(v) for v in args.flat_sep.split(",")] if args.flat_sep else [FLAT_SEPARATION]
        frs = args.flat_rule.split(",") if args.flat_rule else [FLAT_RULE]
        tuning = (len(weights) * len(idfs) * len(caps) * len(args.vector_k.split(",")) * len(args.lead.split(","))
                  * len(fks) * len(fss) * len(frs)) > 1
        global VECTOR_K, LEAD
        vks = [None if v.strip() in ("", "off", "60") else int(v) for v in args.vector_k.split(",")]
        leads = [None if v.strip() in ("", "off") else float(v) for v in args.lead.split(",")]
        combos = [(w, cap, vk, ld, fk, fs, fr) for w in weights for cap in caps for vk in vks for ld in leads
                  for fk in fks for fr in (frs if fk is not None else frs[:1])
                  for fs in (fss if fk is not None and fr != "literal" else fss[:1])]
        for w, cap, vk, ld, fk, fs, fr in combos:
            VECTOR_K, LEAD = vk, ld
            FLAT_SEPARATION, FLAT_RULE = fs, fr
            sharpen(vk)
            lead_guard(ld)
            lane = VectorLane(base.model_copy(update={"weight": w, "flat_k": fk}))
            guarded(vector_query.LITERAL_IDF, cap)
            for idf in idfs:
                results = {set_name: run(libs[set_name], lane, queries, scoped, systems, idf)
                           for set_name, (_, queries, _, scoped) in sets.items()}
                tune = {set_name: halves(res)[0] for set_name, res in results.items()}
                below = [f"{set_name}/{kind}" for set_name, res in tune.items()
                         for kind in sorted(set(kinds_below(res, noise=args.noise))
                                            | set(kinds_below(res, field="r10", noise=args.noise) if args.noise else ()))]
                per_set = {set_name: aggregate(flat(res), SYSTEMS)["hybrid"] for set_name, res in tune.items()}
                figure = {f: round(sum(x[f] for x in per_set.values()), 4) for f in ("r5", "rr")}
                sweep.append({"weight": w, "vector_k": vk, "flat_k": fk, "flat_separation": fs, "flat_rule": fr, "lead": ld, "literal_idf": idf, "literal_max_sessions": cap,
                              "half_a_kinds_below_keyword_r5": below, "half_a_hybrid": figure,
                              "half_a_hybrid_per_set": {k: {f: round(v[f], 4) for f in ("r5", "rr")}
                                                        for k, v in per_set.items()},
                              # every set's figures per kind, all queries and half B, for the README's tables
                              "all": {k: {**{kind: aggregate(rows, systems) for kind, rows in res.items()},
                                          "overall": aggregate(flat(res), systems)} for k, res in results.items()},
                              "half_b": {k: {**{kind: aggregate(rows, systems) for kind, rows in halves(res)[1].items()},
                                             "overall": aggregate(flat(halves(res)[1]), systems)}
                                         for k, res in results.items()}})
                if tuning:
                    print(f"flat K {fk or 'off'} ({fr}, separation {fs}), "
                          + (f"chats R@10 A {aggregate(flat(tune['chats']), SYSTEMS)['hybrid']['r10']:.3f} "
                             f"all {aggregate(flat(results['chats']), SYSTEMS)['hybrid']['r10']:.3f}; " if "chats" in results else "")
                          + f"weight {w}, vector K {vk or 'RRF_K'}, lead {ld or 'off'}, literal IDF {idf if idf is not None else 'off'}, max sessions "
                          f"{cap if cap is not None else 'off'}{' (depth)' if DEPTH_SWEEP else ''}: half A kinds below keyword at R@5 "
                          f"{len(below)} {below}, hybrid R@5 {figure['r5']:.3f}, MRR {figure['rr']:.3f} (summed over the sets)",
                          flush=True)
                # a tie: the larger LITERAL_IDF, then the larger bound (the fewest words guarded, then the least change)
                rank = (-len(below), figure["r5"], figure["rr"], idf if idf is not None else -1.0,
                        cap if cap is not None else float("inf"))
                if chosen is None or rank > chosen[0]:
                    chosen = (rank, w, idf, cap, results, vk, ld, fk, fs, fr)
        _, w, idf, cap, results, vk, ld, fk, fs, fr = chosen
        FLAT_SEPARATION, FLAT_RULE = fs, fr
        guarded(idf, cap)
        sharpen(vk)
        lead_guard(ld)
        out.update(weight=w, vector_k=vk, lead=ld, flat_k=fk, flat_separation=fs, flat_rule=fr, literal_idf=idf, literal_max_sessions=cap, sweep=sweep)
        print(f"\nlane weight {w}, flat K {fk or 'off'} ({fr}, separation {fs}), vector K {vk or 'RRF_K'}, literal IDF {idf if idf is not None else 'off'}, "
              f"max sessions {cap if cap is not None else 'off'}" + (" (chosen on half A)" if tuning else "") + "\n")
        for set_name, (_, _, kinds, _) in sets.items():
            res = results[set_name]
            print(titles[set_name])
            print(table(res, kinds, systems))
            a, b = halves(res)
            print(f"  kinds below keyword at R@5, hybrid: all {kinds_below(res) or 'none'}, A {kinds_below(a) or 'none'}, "
                  f"B {kinds_below(b) or 'none'}"
                  + (f"; unguarded: all {kinds_below(res, 'unguarded') or 'none'}" if args.unguarded else ""))
            print(f"\n{set_name}, half B only (took no part in choosing)")
            print(table(b, kinds, systems))
            print()
            out[set_name] = {kind: aggregate(rows, systems) for kind, rows in res.items()}
            out[set_name]["overall"] = aggregate(flat(res), systems)
            out.setdefault("half_b", {})[set_name] = {kind: aggregate(rows, systems) for kind, rows in b.items()}
            out["half_b"][set_name]["overall"] = aggregate(flat(b), systems)
            out.setdefault("half_a", {})[set_name] = {"overall": aggregate(flat(a), systems)}
        for set_name, res in results.items():
            of = bench_halves(res)
            for rows in res.values():
                for r in rows:
                    q = r["query"]
                    moved = ((r["keyword"].first or 99) != (r["hybrid"].first or 99)
                             or (r["keyword"].r5, r["keyword"].r10) != (r["hybrid"].r5, r["hybrid"].r10))
                    if (args.misses and r["hybrid"].r5 < 1.0) or (args.changes and moved):
                        print(f"- {set_name} [{q.kind}, {of[half_key(q)]}, {r['separation']}] "
                              f"{q.text!r} -> {q.relevant}: "
                              + "; ".join(f"{s} {r[s].first or '>10'} {r[s + '_top']}" for s in systems))
        for lib in libs.values():
            lib.conn.close()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
