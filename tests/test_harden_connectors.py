"""Every connector over every real sample (shared/samples), damaged in seeded, repeatable ways,
through the real pipeline (`run_connectors`, a real SQLite library): a line cut short, a line
that is not JSON or not an object, an unknown record type, fields of the wrong type or missing,
bytes that are not UTF-8, a JSON escape of half a UTF-16 pair, an empty file, a file growing
between two runs. Each run finishes without an error, keeps every session a clean run stores,
and says which file it had trouble with; a damaged file read after its good self loses nothing
that was stored. (A byte order mark and CRLF line ends: test_transcript_tolerance.py.)"""

from __future__ import annotations

import json
import os
import random
import shutil
from functools import cache
from pathlib import Path

import apsw
import pytest

from jezero import plugins
from jezero.plugin.testing import Library
from jezero.store import open_readonly
from jz_support import SAMPLES, needs_samples

pytestmark = needs_samples()
# connector type -> the sample stores laid out for it (OpenCode's is a database: its own test below)
STORES = {
    "claude": ["claude", "newest/claude"],
    "codex": ["codex", "newest/codex"],
    "gemini": ["newest/gemini"],
    "copilot": ["newest/copilot"],
}
CASES = [(t, s) for t, stores in STORES.items() for s in stores]
LONG_AGO = 1_700_000_000  # a file's mtime for "nobody has written it for a long time"


def needs(ctype: str) -> None:
    types = plugins.connector_types()
    if ctype not in types or types[ctype].build is None:
        pytest.skip(f"connector type {ctype!r} is not installed")


def transcripts(root: Path) -> list[Path]:
    """The JSONL files a connector reads in a store (claude/loose/ is not in a store's layout)."""
    return sorted(p for p in root.rglob("*.jsonl") if "loose" not in p.parts)


def stored(library: Path) -> dict[str, tuple]:
    conn = open_readonly(library)
    try:
        return {uid: (session, content_hash, original) for uid, session, content_hash, original in
                conn.execute("SELECT uid, session_id, content_hash, original FROM items")}
    finally:
        conn.close()


def sessions_of(items: dict[str, tuple]) -> set[str]:
    return {session for session, *_ in items.values()}


def ingest(folder: Path, ctype: str, root: Path) -> tuple[dict, dict[str, tuple]]:
    with Library(folder, ctype, {"path": str(root)}) as lib:
        report = lib.run()
        return report, stored(lib.config.library_path())


@cache
def clean(ctype: str, store: str, without: str | None = None) -> dict[str, tuple]:
    """What one run over the undamaged store (less the file `without`) stores."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        shutil.copytree(SAMPLES / store, root)
        if without:
            (root / without).unlink()
        _, items = ingest(Path(tmp) / "lib", ctype, root)
    return items


# -- the damage, one function per kind: (bytes of the file, rng) -> damaged bytes ---------------


def _lines(data: bytes) -> list[bytes]:
    return data.rstrip(b"\n").split(b"\n")


def _insert(data: bytes, rng: random.Random, line: bytes) -> bytes:
    lines = _lines(data)
    lines.insert(rng.randrange(1, len(lines) + 1), line)
    return b"\n".join(lines) + b"\n"


def cut_mid_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    last = lines[-1]
    return b"\n".join(lines[:-1]) + b"\n" + last[: rng.randrange(1, len(last))]


def not_json(data: bytes, rng: random.Random) -> bytes:
    return _insert(data, rng, b'{"type": "user", "message": {"content": "cut here')


def not_an_object(data: bytes, rng: random.Random) -> bytes:
    return _insert(data, rng, rng.choice([b"[1, 2, 3]", b'"just a string"', b"null", b"42"]))


def unknown_record(data: bytes, rng: random.Random) -> bytes:
    return _insert(data, rng, json.dumps({"type": "hologram-v9", "timestamp": "2026-11-30T17:33:19.751Z",
                                          "payload": {"beam": [1, 2]}}).encode())


def not_utf8(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    at = lines[i].rfind(b'":"') + 3 if b'":"' in lines[i] else len(lines[i]) // 2
    lines[i] = lines[i][:at] + b"\xff\xfe\xc3(" + lines[i][at:]
    return b"\n".join(lines) + b"\n"


def half_a_surrogate_pair(data: bytes, rng: random.Random) -> bytes:
    """`\\ud800` inside a string: valid JSON, but Python reads a lone surrogate, which UTF-8
    cannot hold. Put in every text a session keeps, so it cannot miss."""
    text = data.decode()
    for key in ('"text":"', '"content":"', '"message":"'):
        text = text.replace(key, key + "\\ud800")
    return text.encode()


def nested_too_deep(data: bytes, rng: random.Random) -> bytes:
    """A record whose content nests lists 100,000 deep: valid JSON that Python's decoder gives up
    on (RecursionError, not ValueError)."""
    depth = 100_000
    return _insert(data, rng, b'{"type": "user", "message": {"content": ' + b"[" * depth + b"]" * depth + b"}}")


def nested_deep(data: bytes, rng: random.Random) -> bytes:
    """Lists 900 deep in a record's content, with a text at the bottom: Python's decoder reads
    it, and a walk through it by recursion (the connector's, the redactor's) can overflow."""
    depth = 900
    line = (b'{"type": "user", "message": {"role": "user", "content": ' + b"[" * depth
            + b'{"type": "text", "text": "deep \\ud800 down"}' + b"]" * depth + b"}}")
    return _insert(data, rng, line)


def empty(data: bytes, rng: random.Random) -> bytes:
    return b""


# What every damage must warn about, naming the file: all but an empty file (a file an agent has
# just created is empty, which is nothing to warn about).
LINE_DAMAGE = [cut_mid_line, not_json, not_an_object, unknown_record, not_utf8, half_a_surrogate_pair,
               nested_too_deep, nested_deep]


def damaged_copy(tmp_path: Path, store: str, damage, seed: int) -> tuple[Path, Path]:
    """A copy of the store with one transcript (chosen by `seed`) damaged; nobody has written it
    for a long time (a file cut short by a crash is not a file being written)."""
    rng = random.Random(seed)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / store, root)
    target = rng.choice(transcripts(root))
    target.write_bytes(damage(target.read_bytes(), rng))
    os.utime(target, (LONG_AGO, LONG_AGO))
    return root, target


def warned_about(report: dict, target: Path) -> bool:
    return any(str(target) in w or target.name in w for w in report["warnings"])


@pytest.mark.parametrize("damage", [*LINE_DAMAGE, empty], ids=lambda d: d.__name__)
@pytest.mark.parametrize("ctype,store", CASES)
def test_a_damaged_file_keeps_every_session_and_names_the_file(tmp_path, ctype, store, damage):
    needs(ctype)
    root, target = damaged_copy(tmp_path, store, damage, seed=len(damage.__name__))
    report, items = ingest(tmp_path / "lib", ctype, root)
    assert report["error"] is None, report["error"]
    expected = clean(ctype, store, str(target.relative_to(root)) if damage is empty else None)
    assert sessions_of(items) >= sessions_of(expected)
    if damage is not empty:
        assert warned_about(report, target), report["warnings"]


@pytest.mark.parametrize("damage", [*LINE_DAMAGE, empty], ids=lambda d: d.__name__)
@pytest.mark.parametrize("ctype,store", CASES)
def test_a_file_damaged_after_it_was_stored_loses_nothing(tmp_path, ctype, store, damage):
    needs(ctype)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / store, root)
    report, before = ingest(tmp_path / "lib", ctype, root)
    assert report["error"] is None
    shutil.rmtree(root)
    root, target = damaged_copy(tmp_path, store, damage, seed=len(damage.__name__))
    report, after = ingest(tmp_path / "lib", ctype, root)
    assert report["error"] is None, report["error"]
    assert sessions_of(after) == sessions_of(before)
    for session in sessions_of(before):  # a text may change (a byte replaced), never shrink
        assert text_of(after, session) >= text_of(before, session), session


def mixed_up(record: dict, rng: random.Random) -> dict:
    """One value somewhere in the record swapped for a value of another type, or one key gone."""
    places = []

    def walk(node):
        for key in (node if isinstance(node, dict) else range(len(node))):
            places.append((node, key))
            if isinstance(node[key], (dict, list)):
                walk(node[key])

    walk(record)
    if places:
        node, key = rng.choice(places)
        if isinstance(node, dict) and rng.random() < 0.3:
            del node[key]
        else:
            node[key] = rng.choice([0, -1, 1.5, 10**30, "", "x", [], [1, None], {}, {"type": 7}, None, True,
                                    "9999-99-99T99:99:99Z", "a\x00b"])
    return record


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ctype,store", CASES)
def test_known_records_with_fields_of_the_wrong_type_or_missing(tmp_path, ctype, store, seed):
    needs(ctype)
    rng = random.Random(seed)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / store, root)
    for target in transcripts(root):
        lines = _lines(target.read_bytes())
        for i in rng.sample(range(len(lines)), k=min(len(lines), 4)):
            lines[i] = json.dumps(mixed_up(json.loads(lines[i]), rng)).encode()
        target.write_bytes(b"\n".join(lines) + b"\n")
    report, items = ingest(tmp_path / "lib", ctype, root)
    assert report["error"] is None, report["error"]
    # a session whose id itself was swapped is stored under another id: count them
    assert len(sessions_of(items)) >= len(sessions_of(clean(ctype, store))) - 4


@pytest.mark.parametrize("ctype,store", CASES)
def test_a_file_growing_between_two_runs_ends_as_one_clean_run(tmp_path, ctype, store):
    needs(ctype)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / store, root)
    target = random.Random(7).choice(transcripts(root))
    whole = target.read_bytes()
    lines = _lines(whole)
    half = b"\n".join(lines[: len(lines) // 2]) + b"\n" + lines[len(lines) // 2][:25]
    target.write_bytes(half)  # being written now: its last line is not finished
    report, _ = ingest(tmp_path / "lib", ctype, root)
    assert report["error"] is None and not warned_about(report, target), report["warnings"]
    target.write_bytes(whole)
    report, items = ingest(tmp_path / "lib", ctype, root)
    assert report["error"] is None and report["warnings"] == []
    expected = clean(ctype, store)
    assert {uid: v[:2] for uid, v in items.items()} == {uid: v[:2] for uid, v in expected.items()}


def test_an_opencode_database_with_damaged_rows_keeps_its_other_sessions(tmp_path):
    needs("opencode")
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / "newest/opencode", root)
    report, before = ingest(tmp_path / "lib", "opencode", root)
    assert report["error"] is None and before
    db = apsw.Connection(str(root / "opencode.db"))
    parts = [r[0] for r in db.execute("SELECT id FROM part ORDER BY id")]
    messages = [r[0] for r in db.execute("SELECT id FROM message ORDER BY id")]
    rng = random.Random(3)
    for part, value in zip(rng.sample(parts, 3), ["not json {", "[1, 2]", '{"type": 5, "text": []}']):
        db.execute("UPDATE part SET data = ?, time_updated = time_updated + 1 WHERE id = ?", (value, part))
    # half a surrogate pair in each text part still whole
    db.execute("""UPDATE part SET data = replace(data, '"text":"', '"text":"\\ud800')
                  WHERE json_valid(data) AND data->>'type' = 'text'""")
    for message, value in zip(rng.sample(messages, 2), ['{"role": 7, "time": "soon"}', "null"]):
        db.execute("UPDATE message SET data = ?, time_updated = time_updated + 1 WHERE id = ?", (value, message))
    db.execute("UPDATE session SET time_updated = time_updated + 1")
    db.close()
    report, after = ingest(tmp_path / "lib", "opencode", root)
    assert report["error"] is None, report["error"]
    assert sessions_of(after) == sessions_of(before)
    for session in sessions_of(before):  # a block may be read under another role, never lost
        assert text_of(after, session) >= text_of(before, session), session
    warned = "\n".join(report["warnings"])
    assert "opencode.db" in warned and "unknown message role 7" in warned and "lone surrogate" in warned, warned


def text_of(items: dict[str, tuple], session: str) -> int:
    """How much transcript text the library holds for a session, less the block headers."""
    return sum(len(line) for s, _, original in items.values() if s == session
               for line in original.splitlines() if not line.startswith("["))
