"""Segment ids: unique within a session whatever its blocks hold, stable as it grows (issue 10,
defect 1: a 2025 Codex rollout with no per-line times stored 1 item of 6)."""

from __future__ import annotations

import json
import uuid

import pytest

from jezero.ingest.segments import SegmentIdCollision, check_unique, segment_session
from jezero.models import Block, Session
from jz_support import needs_plugin


def _session(blocks: list[Block]) -> Session:
    return Session(id="s1", agent="codex", blocks=blocks, cursor_key="k", cursor_value=1)


def _turns(n: int, size: int = 3_000) -> list[Block]:
    out = []
    for i in range(n):
        out.append(Block(role="user", kind="text", text="continue"))
        out.append(Block(role="assistant", kind="text", text=f"turn{i}word " + "y" * size))
    return out


def test_segments_starting_with_the_same_untimed_block_get_distinct_ids():
    segments = segment_session(_session(_turns(6)), "codex", max_input_chars=2_000)
    assert len(segments) >= 6
    assert len({s.uid for s in segments}) == len(segments)


def test_ids_stay_put_as_the_session_grows():
    before = segment_session(_session(_turns(4)), "codex", max_input_chars=2_000)
    after = segment_session(_session(_turns(7)), "codex", max_input_chars=2_000)
    assert [s.uid for s in after[: len(before)]] == [s.uid for s in before]


def test_first_occurrence_keeps_the_id_it_always_had():
    """Libraries built before the fix keep their items: a segment whose start is unique keeps
    its old id (sha256 of time + first rendered block)."""
    import hashlib

    from jezero.ingest.segments import render_block

    blocks = [Block(role="user", kind="text", text="hello there")]
    [seg] = segment_session(_session(blocks), "codex", max_input_chars=2_000)
    anchor = "\n" + render_block(blocks[0])
    assert seg.uid == f"codex:s1:{hashlib.sha256(anchor.encode()).hexdigest()[:12]}"


def test_a_collision_is_loud_never_an_overwrite():
    segments = segment_session(_session(_turns(2)), "codex", max_input_chars=2_000)
    segments[1].uid = segments[0].uid
    with pytest.raises(SegmentIdCollision, match="segment id"):
        check_unique(segments)


def _legacy_rollout(home, turns: int = 6) -> str:
    """A 2025 rollout: a bare meta line, `record_type: state` lines, no per-line timestamps."""
    sid = str(uuid.UUID(int=42))
    lines = [{"id": sid, "timestamp": "2025-05-01T10:00:00.000Z", "instructions": None}, {"record_type": "state"}]
    for i in range(turns):
        lines.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "continue"}]})
        body = f"zorblax{i}quux " + " ".join(f"word{i}_{k}" for k in range(7_000))  # ~60,000 chars
        lines.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": body}]})
        lines.append({"record_type": "state"})
    path = home / "sessions" / "2025" / "05" / "01" / f"rollout-2025-05-01T10-00-00-{sid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return sid


@needs_plugin("jezero-connectors-codex")
@needs_plugin("jezero-summarizers")
def test_untimed_codex_rollout_keeps_every_turn(tmp_path, run_cli):
    home = tmp_path / "codex"
    _legacy_rollout(home)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n[ingest]\nsettle_minutes = 0\n'
        f'[[connectors]]\nname = "codex"\ntype = "codex"\noptions = {{ path = "{home}" }}\n'
    )
    ran = run_cli("--config", str(cfg), "run", "--json", check=True)
    [report] = json.loads(ran.stdout)
    status = json.loads(run_cli("--config", str(cfg), "status", "--json", check=True).stdout)
    assert status[0]["items"] == report["items_written"] >= 6
    from jezero.store import open_readonly

    originals = [r[0] for r in open_readonly(tmp_path / "lib.sqlite3").execute("SELECT original FROM items")]
    for i in range(6):
        assert any(f"zorblax{i}quux" in o for o in originals), f"turn {i} was lost"
