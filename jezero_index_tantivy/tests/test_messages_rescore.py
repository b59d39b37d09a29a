"""The messages lane's BM25 best re-scored as FTS5 scores them (messages.MESSAGES_RESCORE): the
scores of a term's messages are FTS5's (term_matches') whatever the messages' lengths, what FTS5
does not match is left out, and a common word read at its newest is not re-scored."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import jezero_index_tantivy.messages as messages_module
from jezero.query import messages as mq
from jezero.store import ItemRecord, Store, engines, open_readonly
from jezero.store.messages import MessageRecord

T0 = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)
FILTERS = mq.MessageFilters(include_tools=True, include_subagents=True)


def _session(i: int, texts: list[str]) -> ItemRecord:
    start = T0 + timedelta(days=i)
    msgs = [MessageRecord("user", text, start + timedelta(minutes=j), None) for j, text in enumerate(texts)]
    return ItemRecord(uid=f"s:{i}:0", source="claude-local", agent="a", session_id=f"s{i}", segment_index=0,
                      occurred_at=start + timedelta(minutes=len(texts)), title=f"session {i}", summary="notes",
                      questions=[], atoms=[], original="o", content_hash=str(i), summarizer="t", summary_schema=1,
                      project="shop", messages=msgs)


@pytest.fixture
def lib(tmp_path):
    """`cousin` in messages of 3 to 400 words (tantivy keeps a length over 40 words rounded, in a
    byte), once or twice; `strasse` as written in one message, `straße` in another (tantivy folds
    that to `strasse`, FTS5 keeps it); `kettle` in most messages (over the cap: read at its newest)."""
    sessions = []
    for i in range(40):
        words = 3 + i * 10
        filler = " ".join(f"w{(i * 7 + k) % 97}" for k in range(words))
        texts = [f"cousin {filler}" + (" cousin" if i % 3 == 0 else ""), "kettle on the stove",
                 *[f"kettle number {i} {j}" for j in range(8)]]
        if i == 5:
            texts.append("the strasse is long")
        if i == 6:
            texts.append("the straße is longer")
        sessions.append(_session(i, texts))
    path = tmp_path / "library.sqlite3"
    with Store(path) as store:
        store.write(sessions)
    engines.forget()
    if engines.sync("tantivy", path) is None:
        pytest.skip("jezero-index-tantivy is not installed")
    yield path
    engines.forget()


def _term(conn, word: str):
    return next(t for t in mq.terms_for(conn, word) if t.text == word)


def _tantivy(conn, word: str, cap: int = 300, common: bool = False) -> list[tuple]:
    answered = mq.engine_term_matches(conn, "tantivy", [_term(conn, word)], FILTERS, cap, None, 0.0)
    assert answered is not None, "answered by the fallback"
    per_term, _, capped = answered
    assert capped == ([word] if common else [])
    return sorted(found for _, found in per_term for found in found)


def _fts5(conn, word: str, cap: int = 300) -> list[tuple]:
    return sorted(mq.term_matches(conn, _term(conn, word), FILTERS, cap))


def test_a_terms_messages_score_as_on_fts5_whatever_their_length(lib):
    with open_readonly(lib) as conn:
        fts5 = _fts5(conn, "cousin")
        assert len(fts5) == 40
        assert _tantivy(conn, "cousin") == pytest.approx(fts5)


def test_without_the_re_score_long_messages_score_otherwise(lib, monkeypatch):
    # (the case the re-score is for: tantivy's own BM25 differs where a length was rounded)
    monkeypatch.setattr(messages_module, "MESSAGES_RESCORE", False)
    engines.forget()
    with open_readonly(lib) as conn:
        fts5, ours = _fts5(conn, "cousin"), _tantivy(conn, "cousin")
    assert [m[:3] for m in ours] == [m[:3] for m in fts5]
    assert [m[3] for m in ours] != pytest.approx([m[3] for m in fts5])


def test_what_fts5_does_not_match_is_left_out(lib):
    with open_readonly(lib) as conn:
        fts5 = _fts5(conn, "strasse")
        assert [m[2] for m in fts5] == ["s5"]
        assert _tantivy(conn, "strasse") == pytest.approx(fts5)


def test_a_common_word_read_at_its_newest_is_not_re_scored(lib):
    # `kettle` is in 360 messages, over a cap of 300: its newest, each scoring the lane's 0.0
    with open_readonly(lib) as conn:
        found = _tantivy(conn, "kettle", common=True)
    assert found and {m[3] for m in found} == {0.0}


def test_whether_fts5_holds_messages_is_read_from_the_librarys_own_tables(lib, tmp_path):
    # (the re-score asks it before it scores by FTS5: the library's schema and its messages
    # table, not FTS5's shadow tables)
    with open_readonly(lib) as conn:
        assert messages_module._fts5_holds_messages(conn)
        assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'kettle'").fetchone()[0]
    with Store(lib) as store:  # every session deleted: no message left, in the table or the index
        store.write([], delete_uids=[f"s:{i}:0" for i in range(40)])
    with open_readonly(lib) as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'kettle'").fetchone() == (0,)
        assert not messages_module._fts5_holds_messages(conn)
    import apsw

    bare = apsw.Connection(str(tmp_path / "bare.sqlite3"))  # no messages layer at all
    try:
        assert not messages_module._fts5_holds_messages(bare)
        bare.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY)")  # the table without its index
        bare.execute("INSERT INTO messages(id) VALUES(1)")
        assert not messages_module._fts5_holds_messages(bare)
    finally:
        bare.close()
