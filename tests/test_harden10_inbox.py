"""The inbox takes what the connectors read. A transcript that starts with a UTF-8 byte order
mark (an editor or a Windows tool wrote it) is read by every connector (jezero.plugin.json_text),
but the inbox's look at the first bytes refused it as "not JSON lines", with a 400 that the
device client takes as refused for good: the session never reached the library, silently
(the client logs one line, and sends the file again only once it changes, to be refused again).

Before the fix both uploads with a mark were answered 400."""

from __future__ import annotations

import json

import pytest

from test_inbox import LINE, SESSION, inbox  # noqa: F401 (the fixture)

BOM = b"\xef\xbb\xbf"
META = "claude/projects/-home-ann-src-shop/0b1c/subagents/agent-a1b2c3.meta.json"


@pytest.mark.parametrize("relative, body", [(SESSION, BOM + LINE * 2), (SESSION, BOM + b"\n" + LINE),
                                            (META, BOM + b'{"agentType": "explore"}')],
                         ids=["jsonl", "jsonl-blank-line", "meta-json"])
def test_a_transcript_with_a_byte_order_mark_is_stored_as_sent(inbox, relative, body):  # noqa: F811
    status, text = inbox.put(relative, body)
    assert status == 200, text
    assert json.loads(text)["changed"] is True
    assert (inbox.inbox / "laptop" / relative).read_bytes() == body


def test_a_mark_before_what_is_not_json_is_still_refused(inbox):  # noqa: F811
    status, text = inbox.put(SESSION, BOM + b"not json\n")
    assert status == 400 and "not JSON lines" in text
    assert not (inbox.inbox / "laptop" / SESSION).exists()
