"""Where the tantivy engine read the same text differently from FTS5, run against both engines
(one fixture over the engine's name): each case below is one the engines answered differently
before (benchmarks/retrieval/README.md, 2026-12-01 `parity`), and must answer alike now.

- The messages lane replaces each term's IDF over messages by its IDF over sessions: it divides
  the engine's bm25 by the IDF that bm25 used. FTS5's uses every message holding the term; the
  engine path divided by the IDF of the messages within the search's filters (a project), so a
  word said in other projects too weighed a fraction of what it weighs on FTS5.
- tantivy's IDF is ln(1 + (N - n + 0.5) / (n + 0.5)), FTS5's the log without the 1 +: divided by
  FTS5's, a word in a third of the messages weighed several times more on tantivy.
- Text written with decomposed accents (`Noe\u0308l`): tantivy's tokenizer split the word at the
  combining mark, FTS5's tokenizers fold it as they fold `Noël`.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import fused, recall, search
from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.messages import MessageRecord
from test_query_engines import engine  # noqa: F401  (the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=30)


def session(sid, texts, *, project="mine", day=0, title=None, summary="nothing about it"):
    start = T0 + timedelta(days=day)
    msgs = [MessageRecord("user", text, start + timedelta(minutes=i), None) for i, text in enumerate(texts)]
    return ItemRecord(uid=f"claude-local:{sid}:0", source="claude-local", agent="claude-code", session_id=sid,
                      segment_index=0, occurred_at=start + timedelta(minutes=len(texts)), title=title or f"session {sid}",
                      summary=summary, questions=[], atoms=[], original="(see messages)",
                      content_hash=f"{sid}{day}{texts}{title}", summarizer="x", summary_schema=1, project=project,
                      messages=msgs)


def lane(path, engine, query, project=None):
    """Search's messages lane, answered by `engine` (with tantivy: its index, not the FTS5 loop)."""
    with open_readonly(path) as conn:
        if engine != "fts5":
            terms = [t for t in mq.terms_for(conn, query) if fused._ranking(t)]
            assert mq.engine_term_matches(conn, engine, terms, mq.MessageFilters(), 10) is not None
        return [h.session_id for h in fused.message_lane(conn, query, sources=None, source=None, project=project,
                                                          since=None, time_budget_ms=5000, engine=engine)]


@pytest.fixture
def idf_library(tmp_path):
    """Project `mine` holds four short sessions; `alpha` and `gamma` are also said in 200 sessions
    of another project (201 of 452 messages: under the lane's cap, under half the messages), `beta`
    and `delta` nowhere else. Every message is 5-6 words (no length rounding in tantivy's norms)."""
    records = [
        session("A1", ["alpha alpha said here twice"], day=1),
        session("B1", ["beta once said here now"], day=2),
        session("A2", ["gamma once said here now"], day=3),
        session("B2", ["delta delta said here twice"], day=4),
        *[session(f"o{i}", ["alpha and gamma in another project"], project="other", day=5 + i % 20)
          for i in range(200)],
        *[session(f"f{i}", [f"filler words number {i}"], project="other", day=5 + i % 20) for i in range(248)],
    ]
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write(records)
    if engines.sync("tantivy", path) is None:  # (built whole up front: a reader catches up at most 200 items)
        pytest.skip("jezero-index-tantivy is not installed")
    return path


def test_a_word_said_in_other_projects_weighs_its_bm25_within_the_scope(idf_library, engine):
    # alpha twice (A1) against beta once (B1), messages of the same length: alpha leads by its
    # frequency, the IDF over sessions being the same (one session each within `mine`). Divided
    # by the IDF of its 1 message within the project instead of its 201 in all, alpha fell behind.
    assert lane(idf_library, engine, "alpha beta", project="mine") == ["A1", "B1"]


def test_a_frequent_word_weighs_the_same_on_both_engines(idf_library, engine):
    # delta twice (B2) against gamma once (A2): delta leads. On tantivy's own IDF, gamma (in 201
    # of 452 messages: ln(2.25) against FTS5's ln(1.25)) weighed 3.6 times as much, and led.
    assert lane(idf_library, engine, "gamma delta", project="mine") == ["B2", "A2"]


def test_decomposed_accents_read_as_the_composed_word(tmp_path, engine):
    path = tmp_path / "lib.sqlite3"
    decomposed = "Noe\u0308l"  # e + combining diaeresis, as macOS file names and some pastes have it
    with Store(path) as store:
        ids = store.write([
            session("x", [f"the {decomposed} party is on friday"], title=f"{decomposed} party planning", day=2),
            session("y", ["a noel mentioned once"], summary="a noel in passing", day=1),
            session("z", ["the Noël dinner menu"], day=3),
            *[session(f"f{i}", [f"filler words number {i}"], day=4 + i) for i in range(10)],
        ])
    if engine != "fts5" and engines.sync(engine, path) is None:
        pytest.skip("jezero-index-tantivy is not installed")
    options = SearchConfig(engine=engine)
    with open_readonly(path) as conn:
        found = recall(conn, "Noël", options=options, window=0)
        assert {h["session_id"] for h in found["hits"]} == {"x", "y", "z"}
        assert all(h["explain"]["engine"] == engine for h in found["hits"])
        found = recall(conn, f"{decomposed} party", options=options, window=0)
        assert [h["session_id"] for h in found["hits"]][:1] == ["x"]
        # the items: the title (weight 2) that says it leads the summary (weight 1) that says it
        hits = search(conn, "noël", options=options, now=NOW, lanes=("items",), explain=True)
        assert [h["id"] for h in hits][:2] == [ids[0], ids[1]]
        if engine != "fts5":
            assert all(h["explain"]["candidates"] == engine for h in hits)
    assert lane(path, engine, "noel party")[0] == "x"


def items(path, engine, query):
    """Search's items lane, answered by `engine`: the sessions in order."""
    with open_readonly(path) as conn:
        hits = search(conn, query, options=SearchConfig(engine=engine), now=NOW, lanes=("items",), explain=True)
    if engine != "fts5":
        assert all(h["explain"]["candidates"] == engine for h in hits), "answered by the fallback"
    return [h["session_id"] for h in hits]


def built(tmp_path, records):
    path = tmp_path / "lib.sqlite3"
    with Store(path) as store:
        store.write(records)
    if engines.sync("tantivy", path) is None:
        pytest.skip("jezero-index-tantivy is not installed")
    return path


def test_a_short_word_is_found_inside_a_longer_one(tmp_path, engine):
    # FTS5's trigram index finds `long` in `longest`; tantivy looked a word's substrings up from 5
    # characters only (SUBSTRING_MIN_GRAMS was 3 trigrams), so a held word of 3-4 letters found
    # only the items saying it whole.
    path = built(tmp_path, [
        session("whole", ["x"], title="a long road home", day=1),
        session("inside", ["x"], title="the range of your longest trips", day=2),
        *[session(f"f{i}", ["x"], title=f"filler title number {i}", day=3 + i) for i in range(10)],
    ])
    assert set(items(path, engine, "long")) == {"whole", "inside"}


def test_a_word_in_most_items_weighs_nothing_on_both_engines(tmp_path, engine):
    # `weekly` is in 8 of 15 items: FTS5's IDF, log((N - n + 0.5) / (n + 0.5)), is below 0 and
    # floored at 1e-6, so an old item saying `zebra` once in a long summary comes before the
    # newer ones saying `weekly` alone. tantivy's IDF, ln(1 + ...), gave `weekly` (and its
    # substring) a weight of its own, and the newest `weekly` item came 4th, before it.
    path = built(tmp_path, [
        session("rare", ["x"], title="notes of the day", day=1,
                summary="one zebra seen at the crossing today by the gate near the old mill on the hill road"),
        *[session(f"z{i}", ["x"], title=f"zebra {i}", day=2) for i in range(3)],
        *[session(f"w{i}", ["x"], title=f"weekly filler {i}", day=16 + i) for i in range(8)],
        *[session(f"f{i}", ["x"], title=f"other filler {i}", day=6 + i) for i in range(3)],
    ])
    found = items(path, engine, "zebra weekly")
    assert set(found[:3]) == {"z0", "z1", "z2"}
    assert found[3] == "rare"


def test_the_query_word_itself_before_another_word_of_its_stem(tmp_path, engine):
    # FTS5 finds `certificates` only where its text is; tantivy's English stems make it one word
    # with `certificate` (`certif`), and a word in more than SUBSTRING_WORD_ROWS items is looked up
    # by its stem only, so the 250 newer items saying `certificate` came first (the newest led).
    # The exact field (the same text unstemmed) weighs the word itself EXACT_WEIGHT more.
    path = built(tmp_path, [
        session("itself", ["x"], title="renew the certificates", day=1),
        *[session(f"s{i}", ["x"], title=f"one certificate {i}", day=2 + i % 20) for i in range(250)],
    ])
    assert items(path, engine, "certificates")[:1] == ["itself"]


def _bm25(path, engine, query, session_id):
    """The items lane's bm25 (recency and the current-first moves off) of `session_id`'s item."""
    with open_readonly(path) as conn:
        hits = search(conn, query, options=SearchConfig(engine=engine), now=NOW, lanes=("items",), explain=True,
                      recency_weight=0.0, current_first=False, limit=50)
    if engine != "fts5":
        assert all(h["explain"]["candidates"] == engine for h in hits), "answered by the fallback"
    return next(-h["explain"]["bm25"] for h in hits if h["session_id"] == session_id)


def test_a_rare_word_weighs_against_a_common_one_as_on_fts5(tmp_path, engine):
    # `native` is in 2 items of 505 (rare: tantivy also looks it up as a substring), `backend` in
    # 201 (common: the words field alone). The substring was summed with the word at 0.3 on
    # tantivy's phrase IDF (the sum of its trigrams' IDFs), so a rare word weighed 1.7 times what
    # it weighs against a common word on FTS5; the revision rules, which compare two items'
    # scores, then read another lead (benchmarks/retrieval/README.md, 2026-12-02, `parity3`). Now
    # the term takes the better of the word and its substring, the substring on FTS5's IDF.
    path = built(tmp_path, [
        session("rare", ["x"], title="the native build", day=1),
        session("rare2", ["x"], title="native again", day=1),
        session("common", ["x"], title="the backend build", day=1),
        *[session(f"b{i}", ["x"], title=f"backend filler words for a longer title {i}", day=2 + i % 20)
          for i in range(200)],
        *[session(f"o{i}", ["x"], title=f"other filler {i}", day=2 + i % 20) for i in range(300)],
    ])
    ratio = _bm25(path, engine, "native", "rare") / _bm25(path, engine, "backend", "common")
    on_fts5 = _bm25(path, "fts5", "native", "rare") / _bm25(path, "fts5", "backend", "common")
    assert 0.9 < ratio / on_fts5 < 1.1


def test_a_word_said_inside_longer_words_in_most_items_weighs_nothing_on_both_engines(tmp_path, engine):
    # FTS5 counts a term's items by its substring: `con` is inside `config` in 9 of 16 items, so
    # its IDF is floored and it orders nothing (FTS5 leaves it out of its MATCH). tantivy's words
    # field counts the word: `con`, said whole in one item (a Spanish one), scored as a rare word,
    # and that item (the newest) came first, before the items saying `zebra` (ITEMS_SUBSTRING_COUNT).
    path = built(tmp_path, [
        session("rare", ["x"], title="notes of the day", day=1,
                summary="one zebra seen at the crossing today by the gate near the old mill on the hill road"),
        *[session(f"z{i}", ["x"], title=f"zebra {i}", day=2) for i in range(3)],
        session("whole", ["x"], title="café con leche", day=20),
        *[session(f"c{i}", ["x"], title=f"config filler {i}", day=6 + i) for i in range(9)],
        *[session(f"f{i}", ["x"], title=f"other filler {i}", day=3) for i in range(2)],
    ])
    found = items(path, engine, "zebra con")
    assert set(found[:3]) == {"z0", "z1", "z2"}
    assert found[3] == "rare"


def _relevances(path, engine, query):
    """The items lane's (session, relevance) pairs, recency and the current-first moves off."""
    with open_readonly(path) as conn:
        hits = search(conn, query, options=SearchConfig(engine=engine), now=NOW, lanes=("items",), explain=True,
                      recency_weight=0.0, current_first=False, limit=50)
    if engine != "fts5":
        assert all(h["explain"]["candidates"] == engine for h in hits), "answered by the fallback"
    return [(h["session_id"], -h["explain"]["bm25"]) for h in hits]


def test_the_items_lane_scores_what_it_found_as_fts5_bm25(tmp_path, engine):
    # tantivy's words field holds each column twice its FTS5 weight, so its BM25 saturates as with
    # k1 0.6 instead of 1.2 (an item saying a word once gained on one saying it often), and it keeps
    # an item's length in one byte (items of 347 and 367 words scored alike). Each cost the judged
    # sets a place (benchmarks/retrieval/README.md, 2026-12-02, `tantivy5`). The pool tantivy finds
    # is now scored by FTS5's bm25 (ITEMS_RESCORE): the same items, order and scores as FTS5's.
    pad = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"
    path = built(tmp_path, [
        session("once", ["x"], title="invoice notes", summary="the pdf export " + pad),
        session("often", ["x"], title="pdf invoices in pdf", summary=" ".join([pad] * 20) + " pdf pdf pdf",
                day=1),
        session("long1", ["x"], title="kofi", summary="kofi said " + " ".join([pad] * 28), day=2),
        session("long2", ["x"], title="kofi", summary="kofi said " + " ".join([pad] * 29) + " more words", day=3),
        session("both", ["x"], title="kofi and the pdf", summary="kofi kofi " + pad, day=4),
        # accents composed and decomposed, capitals, another script: each row's size is counted
        # from its folded text, which must be FTS5's count of its trigrams
        session("accents", ["x"], title="Kofi's PDF für Noe\u0308l", summary="café ÉCOLE İstanbul 東京の pdf ana banana",
                day=5),
        *[session(f"f{i}", ["x"], title=f"filler title number {i}", summary=f"other words {pad[: 10 + i]}",
                  day=6 + i) for i in range(30)],
    ])
    for query in ("pdf", "kofi", "kofi pdf", "pdf export", "invoice pdf", "noel pdf", "ana", "東京の", "école"):
        got = _relevances(path, engine, query)
        want = _relevances(path, "fts5", query)
        assert want, query
        assert [s for s, _ in got] == [s for s, _ in want], query
        assert [r for _, r in got] == pytest.approx([r for _, r in want], rel=1e-9), query


def test_an_item_found_by_a_stem_alone_is_left_out_where_others_hold_the_word(tmp_path, engine):
    # FTS5 finds `renewals` only where that text is; tantivy's stems also find `renewal`. Scored as
    # FTS5 scores it, such an item holds none of the query's text (relevance 0), and left at the
    # bottom of the pool it still counted as found by the items lane in the fusion (the long-chat
    # question `which countries did I visit on my big trips` lost a place that way): it is left out.
    path = built(tmp_path, [
        session("itself", ["x"], title="certificate renewals", day=1),
        session("stem", ["x"], title="one renewal", day=2),
        *[session(f"f{i}", ["x"], title=f"filler title number {i}", day=3 + i) for i in range(10)],
    ])
    assert items(path, engine, "renewals") == ["itself"]
