"""A transcript whose timestamps go backwards (the machine's clock set right by a day, a laptop
moved across zones mid-session): an item is dated by its latest message and starts at its
earliest.

Before: an item's `occurred_at` was its last block's time and `started_at` its first block's,
so such an item ended a day before it started and was dated by its oldest message
(test_an_item_ends_at_its_latest_message failed: occurred_at 2026-11-19T12:04, started_at
2026-11-20T12:00:40). The segments' ids (their first block's time and text) do not move: a
library written before keeps its items."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jezero.ingest.segments import segment_session
from jezero.plugin import Block, Session
from jezero.plugin.testing import Library
from jezero.store import open_readonly
from jz_support import needs_plugin

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)


def session(back: timedelta) -> Session:
    times = [T0 + timedelta(minutes=i) for i in range(4)]
    times[2:] = [t - back for t in times[2:]]  # the clock went back after the second block
    texts = ["alpha question about rounding", "alpha answer", "bravo question about taxes", "bravo answer"]
    roles = ["user", "assistant", "user", "assistant"]
    return Session(id="s1", agent="claude-code", blocks=[Block(r, "text", x, t) for r, x, t in zip(roles, texts, times)],
                   cursor_key="k", cursor_value={}, started_at=min(times), ended_at=max(times))


def test_a_segment_spans_its_earliest_to_its_latest_block():
    [seg] = segment_session(session(timedelta(days=1)), "claude", 60_000)
    assert seg.occurred_at == T0 + timedelta(minutes=1)
    [same] = segment_session(session(timedelta(0)), "claude", 60_000)
    assert same.uid == seg.uid  # the id does not depend on the later times


@needs_plugin("jezero-connectors-claude")
def test_an_item_ends_at_its_latest_message(tmp_path):
    import json

    from jezero.demo import SessionSpec, Turn
    from jezero_connectors_claude.demo import write_claude

    path = write_claude(tmp_path / "projects", SessionSpec("claude", "/home/dev/src/shop", T0, [
        Turn("user", "alpha question about rounding"), Turn("assistant", "alpha answer"),
        Turn("user", "bravo question about taxes"), Turn("assistant", "bravo answer")]))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    for line in lines[2:]:
        t = datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")) - timedelta(days=1)
        line["timestamp"] = t.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with Library(tmp_path / "lib", "claude", {"path": str(tmp_path / "projects")}) as lib:
        assert lib.run()["error"] is None
        conn = open_readonly(lib.config.library_path())
        try:
            [(started, occurred)] = conn.execute("SELECT started_at, occurred_at FROM items").fetchall()
            [(first, last)] = conn.execute("SELECT min(at), max(at) FROM messages").fetchall()
        finally:
            conn.close()
    assert started <= occurred, (started, occurred)
    assert (started, occurred) == (first, last)
