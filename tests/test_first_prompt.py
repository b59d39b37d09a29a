"""The first-prompt rule (jezero.query.first_prompt) on the cases its specification names."""

from __future__ import annotations

import pytest

from jezero.query import first_prompt as fp
from jezero.query import session_start


def hit(i, title, summary="", day="2026-03-01"):
    return {"id": i, "title": title, "summary": summary, "occurred_at": f"{day}T10:00:00.000000Z"}


def test_words_are_folded_unique_and_stop_words_dropped():
    assert fp.prompt_words("Please help me FIX the Migración of the billing migración") == ["migracion", "billing"]
    assert fp.prompt_words("Quiero migrar la base de datos para facturación") == ["migrar", "base", "datos", "facturacion"]
    assert fp.prompt_words("go to db") == []  # under three characters


def test_at_most_twenty_words():
    words = fp.prompt_words(" ".join(f"word{i:02}" for i in range(30)))
    assert len(words) == 20 and words[0] == "word00" and words[-1] == "word19"


def test_fewer_than_two_words_adds_nothing():
    assert fp.search_query("please fix the analytics") is None
    assert fp.related("please fix the analytics", [hit(1, "analytics script removed")]) == []


def test_two_whole_words_in_title_or_summary():
    prompt = "the analytics script on the shop site"
    hits = [hit(1, "Shop site: remove the analytics script"),
            hit(2, "Analytics dashboard", "nothing else in common"),
            hit(3, "Billing", "the shop needs a new analytics provider")]
    assert [h["id"] for h in fp.related(prompt, hits)] == [1, 3]


def test_whole_words_only_not_fragments():
    # search matches "migration" inside "migrations"; the rule does not.
    prompt = "database migration rollback"
    assert fp.related(prompt, [hit(1, "Database migrations", "rollbacks planned")]) == []
    assert [h["id"] for h in fp.related(prompt, [hit(2, "Database migration", "")])] == [2]


def test_accents_do_not_matter():
    assert [h["id"] for h in fp.related("migración facturación", [hit(7, "Migracion de facturacion")])] == [7]


def test_only_the_first_eight_results_and_at_most_three_shown():
    hits = [hit(i, "docker prune on the runner") for i in range(1, 12)]
    assert [h["id"] for h in fp.related("docker prune", hits)] == [1, 2, 3]
    late = [hit(i, "unrelated") for i in range(1, 9)] + [hit(9, "docker prune")]
    assert fp.related("docker prune", late) == []


def test_render_lines_and_note():
    text = fp.render([hit(4, "Fixed ENOSPC on CI", day="2026-02-03")])
    assert "[4] 2026-02-03 Fixed ENOSPC on CI" in text and "get_item" in text
    assert fp.render([]) == ""


def test_session_start_block():
    assert session_start.render(None, [hit(1, "x")]) == session_start.PROTOCOL
    text = session_start.render("shop", [hit(i, f"item {i}") for i in range(1, 8)])
    assert text.startswith(session_start.PROTOCOL) and "[5] 2026-03-01 item 5" in text and "[6]" not in text


def test_the_hook_asks_for_the_items_ranking_alone():
    assert fp.search_arguments("Why does the billing migración time out?") == {
        "query": "billing migracion time", "limit": fp.SEARCH_LIMIT, "lanes": ["items"]}
    assert fp.search_arguments("please fix the analytics") is None


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_the_search_tool_takes_the_lanes_the_hook_asks_for(tmp_path):
    """A session whose transcript alone holds the words is found by the default (fused) search and
    not by the items ranking the hook asks for; a lane that does not exist is a plain error."""
    from datetime import datetime, timezone

    from mcp import Client

    from jezero.config import Config
    from jezero.server import build_mcp_server
    from jezero.store import ItemRecord, Store
    from jezero.store.messages import MessageRecord

    at = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)

    def item(sid: str, title: str, said: str) -> ItemRecord:
        return ItemRecord(uid=f"claude-local:{sid}:0", source="claude-local", agent="claude-code", session_id=sid,
                          segment_index=0, occurred_at=at, title=title, summary=f"{title}.", questions=[], atoms=[],
                          original="(messages)", content_hash=sid, summarizer="x", summary_schema=1, project="infra",
                          messages=[MessageRecord("user", "where do we start"), MessageRecord("tool", said, at)])

    with Store(tmp_path / "lib.sqlite3") as store:
        store.write([item("watch", "Raise the file watcher limit", "ENOSPC: file watchers limit reached; set 524288"),
                     item("copy", "Checkout page copy", "rewrote the checkout copy"),
                     item("docs", "Docs for the deploy script", "the deploy script now retries")])
    config = Config.model_validate({"storage": {"path": str(tmp_path / "lib.sqlite3")}})
    async with Client(build_mcp_server(config)) as client:
        fused = await client.call_tool("search", {"query": "524288 ENOSPC"})
        items = await client.call_tool("search", {"query": "524288 ENOSPC", **fp.search_arguments("524288 ENOSPC")})
        wrong = await client.call_tool("search", {"query": "524288", "lanes": ["everything"]})
    assert [h["id"] for h in fused.structured_content["items"]] == [1]
    assert items.structured_content["items"] == []
    assert wrong.is_error
