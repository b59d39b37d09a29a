"""Every connector over every real sample (shared/samples), as written and as other tools and
platforms leave the same files: a byte order mark, CRLF line ends, blank lines. The same
sessions must come out, and a known record type never raises a warning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jezero import plugins
from jezero.plugin import ConnectorContext
from jz_support import SAMPLES, needs_samples

pytestmark = needs_samples()
# connector type -> the sample stores laid out for it
STORES = {
    "claude": ["claude", "newest/claude"],
    "codex": ["codex", "newest/codex"],
    "gemini": ["newest/gemini"],
    "copilot": ["newest/copilot"],
    "opencode": ["newest/opencode"],
}
CASES = [(t, s) for t, stores in STORES.items() for s in stores]
TEXT_FILES = (".jsonl", ".json")


def read(ctype: str, root: Path):
    types = plugins.connector_types()
    if ctype not in types or types[ctype].build is None:  # None: only planned (its distribution is not installed)
        pytest.skip(f"connector type {ctype!r} is not installed")
    warnings: list[str] = []
    connector = types[ctype].build({"path": str(root)}, ConnectorContext("samples", warnings.append))
    sessions = list(connector.read({}))
    return sessions, warnings + [w for s in sessions for w in s.warnings]


def shape(sessions):
    return {s.id: ([(b.role, b.kind, b.text.strip()) for b in s.blocks], s.cwd, s.model, s.started_at, s.title)
            for s in sessions}


@pytest.mark.parametrize("ctype,store", CASES)
def test_a_real_sample_reads_without_a_warning(ctype, store):
    sessions, warnings = read(ctype, SAMPLES / store)
    assert sessions and warnings == []


def with_bom(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def with_crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def with_blank_lines(data: bytes) -> bytes:
    return data.replace(b"\n", b"\n\n \n")


@pytest.mark.parametrize("change", [with_bom, with_crlf, with_blank_lines])
@pytest.mark.parametrize("ctype,store", CASES)
def test_the_same_sessions_whatever_the_bytes_around_the_json(tmp_path, ctype, store, change):
    expected, _ = read(ctype, SAMPLES / store)
    root = tmp_path / "store"
    shutil.copytree(SAMPLES / store, root)
    changed = [p for p in root.rglob("*") if p.is_file() and p.suffix in TEXT_FILES]
    for path in changed:
        data = path.read_bytes()
        path.write_bytes(change(data) if change is not with_blank_lines or path.suffix == ".jsonl" else data)
    sessions, warnings = read(ctype, root)
    assert shape(sessions) == shape(expected)
    assert warnings == []
