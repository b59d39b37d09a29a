"""The semantic lane (docs/semantic.md): vectors written with their items, in the same
transaction; filters applied before the nearest-neighbour cut; vectors of two models never
mixed; `jezero embed` resumable after kill -9; the lane switched off costs nothing and changes
nothing; the MCP `search` with the lane on.

The vectors come from `jezero.plugin.testing.HashingEmbedder` (hashed words and trigrams, no
model), so these tests do not depend on a model; one test uses the real first-party embedder
where it is installed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the semantic lane needs numpy (pip install 'jezero[semantic]'; core-only run)")
pytest.importorskip("sqlite_vec", reason="the semantic lane needs sqlite-vec (pip install 'jezero[semantic]'; core-only run)")

from fixture_plugins import EchoSummarizer, SummarizerPlugin, TestConnectorPlugin, write_session  # noqa: E402
from jezero.config import Config, SemanticConfig  # noqa: E402
from jezero.ingest.embed import embed_library  # noqa: E402
from jezero.ingest.runner import run_connectors  # noqa: E402
from jezero.plugin.testing import HashingEmbedderPlugin  # noqa: E402
from jezero.query import search  # noqa: E402
from jezero.query.vectors import VectorLane  # noqa: E402
from jezero.store import Store, open_readonly  # noqa: E402
from jezero.store import vectors as stored  # noqa: E402
from jz_support import jezero_command, needs_plugin  # noqa: E402

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
# The first-party embedder's prepared tables live in the real user's cache (`jezero embed
# --prepare` made them); read here, at import, before every test gets an isolated home.
REAL_CACHE = __import__("platformdirs").user_cache_path("jezero") / "embedders"


def config(tmp_path: Path, *, enabled=True, sources=("local",), **semantic) -> Config:
    return Config.model_validate({
        "storage": {"path": str(tmp_path / "lib.sqlite3")},
        "summarizer": {"name": "echo"},
        "ingest": {"settle_minutes": 0, "max_input_chars": 4000},
        "semantic": {"enabled": enabled, "embedder": "hashing", **semantic},
        "connectors": [{"name": s, "type": "testdir", "options": {"path": str(tmp_path / s)}} for s in sources],
    })


@pytest.fixture
def plugins_in(register_plugin):
    register_plugin(TestConnectorPlugin(), "test-connector")
    register_plugin(SummarizerPlugin(EchoSummarizer()), "test-summarizer")
    register_plugin(HashingEmbedderPlugin(), "test-embedder")


def session(tmp_path: Path, source: str, name: str, prompt: str, answer: str, *, cwd=None,
            ended_at="2026-01-01T10:00:00Z"):
    write_session(tmp_path / source, name, [{"role": "user", "text": prompt}, {"role": "assistant", "text": answer}],
                  cwd=cwd, ended_at=ended_at)


def ingest(cfg: Config) -> None:
    for report in run_connectors(cfg, now=NOW):
        assert report.error is None, report.error


def counts(library: Path) -> dict:
    conn = open_readonly(library)
    try:
        stored.load_extension(conn)
        c = stored.counts(conn) if stored.has_tables(conn) else {"items": 0, "windows": 0}
        c["library"] = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        c["state"] = conn.execute("SELECT count(*) FROM item_vector_state").fetchone()[0]
        c["window_rows"] = conn.execute("SELECT count(*) FROM message_windows").fetchone()[0]
        c["behind"] = stored.behind_count(conn)
        if stored.has_tables(conn):
            ids = [r[0] for r in conn.execute(f"SELECT item_id FROM {stored.ITEM_VECTORS}")]
            c["duplicates"] = len(ids) - len(set(ids))
            c["orphans"] = conn.execute(f"SELECT count(*) FROM {stored.ITEM_VECTORS} WHERE item_id NOT IN "
                                        "(SELECT id FROM items)").fetchone()[0]
        return c
    finally:
        conn.close()


def find(cfg: Config, query: str, **kw) -> list:
    conn = open_readonly(cfg.library_path())
    try:
        return search(conn, query, semantic=VectorLane(cfg.semantic) if cfg.semantic.enabled else None,
                      now=NOW, **kw)
    finally:
        conn.close()


# -- storage ------------------------------------------------------------------------------------


def test_a_run_writes_each_items_vectors_and_windows_and_records_the_model(tmp_path, plugins_in):
    cfg = config(tmp_path)
    session(tmp_path, "local", "a", "the webhook fails with InvalidClientTokenId", "rotate the access keys")
    session(tmp_path, "local", "b", "bake a chocolate cake", "preheat the oven to 180 degrees")
    ingest(cfg)
    c = counts(cfg.library_path())
    assert c["library"] == c["items"] == c["state"] == 2 and c["behind"] == 0
    assert c["windows"] == c["window_rows"] >= 2
    conn = open_readonly(cfg.library_path())
    assert stored.recorded(conn) == stored.Model("hashing", "hashing-v1-256", 256, stored.LAYOUT, stored.WINDOW_CHARS)
    conn.close()


def test_windows_cut_the_transcript_and_clip_tool_output():
    long_log = "ERROR disk full " + "x" * 5000
    wins = stored.windows([(0, "user", "why does the build fail?"), (1, "tool", long_log),
                           (2, "assistant", "word " * 400), (3, "user", "thanks")])
    assert all(len(text) <= stored.WINDOW_CHARS for _, _, text in wins)
    assert "x" * (stored.TOOL_WINDOW_CHARS + 1) not in "".join(t for _, _, t in wins)  # the log's head only
    assert wins[0][0] == 0 and wins[-1][1] == 3
    assert [w[:2] for w in wins] == sorted(w[:2] for w in wins)


def test_a_failed_write_leaves_no_orphan_vectors(tmp_path, plugins_in, monkeypatch):
    cfg = config(tmp_path)
    session(tmp_path, "local", "a", "first session about webhooks", "fixed")
    session(tmp_path, "local", "b", "boom session that fails while writing", "never stored")
    real_put = stored.VectorWriter.put

    def put_then_fail(self, db, item_id, prepared):
        real_put(self, db, item_id, prepared)  # the vectors are in, inside the transaction...
        title = db.execute("SELECT title FROM items WHERE id = ?", (item_id,)).fetchone()[0]
        if title.startswith("boom"):
            raise OSError("disk gone")  # ...and the transaction is rolled back with them

    monkeypatch.setattr(stored.VectorWriter, "put", put_then_fail)
    [report] = run_connectors(cfg, now=NOW)
    assert "disk gone" in report.error
    c = counts(cfg.library_path())
    assert c["library"] == c["items"] == c["state"] == 1
    assert c["orphans"] == 0 and c["windows"] == c["window_rows"]


def test_retag_moves_the_vectors_project_filter_without_embedding(tmp_path, plugins_in):
    cfg = config(tmp_path)
    session(tmp_path, "local", "a", "configure the kafka consumer group lag alert", "done", cwd="/w/src/alpha/x")
    ingest(cfg)
    from jezero.ingest.runner import open_store

    with open_store(cfg) as store:
        [(item_id,)] = store.db.execute("SELECT id FROM items").fetchall()
        store.set_project(item_id, "beta")
    assert counts(cfg.library_path())["behind"] == 0
    assert [h["id"] for h in find(cfg, "kafka consumer lag", lanes=["vectors"], project="beta")] == [item_id]
    assert find(cfg, "kafka consumer lag", lanes=["vectors"], project="alpha") == []


# -- the lane -----------------------------------------------------------------------------------


def test_filters_apply_before_the_nearest_neighbour_cut(tmp_path, plugins_in):
    """Twenty sessions of a source the caller may not read sit exactly on the query; the one
    session it may read is only near it. With k = 10, a filter applied after the cut would leave
    nothing; applied in the scan, the readable session is found and nothing else is."""
    cfg = config(tmp_path, sources=("secret", "open"), k=10)
    query = "payroll export to the bank rejected with checksum mismatch"
    for i in range(20):
        session(tmp_path, "secret", f"s{i}", query, query, cwd="/w/src/hr/x")
    session(tmp_path, "open", "o", "the bank export was rejected", "a checksum mismatch in the payroll file",
            cwd="/w/src/hr/x", ended_at="2026-02-01T10:00:00Z")
    ingest(cfg)
    open_item = [h for h in find(cfg, "bank export rejected") if h["source"] == "open"][0]["id"]
    for filters in ({"allowed": ["open"]}, {"source": "open"}, {"since": "2026-01-15"}):
        hits = find(cfg, query, lanes=["vectors"], **filters)
        assert [h["id"] for h in hits] == [open_item], filters
    # Fused with the keyword lanes, the key still sees only its source.
    assert {h["source"] for h in find(cfg, query, allowed=["open"], explain=True)} == {"open"}
    assert len(find(cfg, query, lanes=["vectors"], project="hr")) == 10  # a filter every row passes: k sessions


def test_the_bit_scan_keeps_the_filters_before_the_cut_and_ranks_as_the_exact_scan(tmp_path, plugins_in,
                                                                                    monkeypatch):
    """The library is small enough for the exact scan; with EXACT_UP_TO = 0 the lane scans the
    bits instead and rescores its candidates. The filters still act inside the scan (twenty
    unreadable sessions sit on the query, k = 10: 20 candidates), and where the candidates cover
    every vector the order is the exact scan's."""
    from jezero.query import vectors as lane

    cfg = config(tmp_path, sources=("secret", "open"), k=10)
    query = "payroll export to the bank rejected with checksum mismatch"
    for i in range(20):
        session(tmp_path, "secret", f"s{i}", query, query, cwd="/w/src/hr/x")
    session(tmp_path, "open", "o", "the bank export was rejected", "a checksum mismatch in the payroll file",
            cwd="/w/src/hr/x", ended_at="2026-02-01T10:00:00Z")
    for i in range(6):
        session(tmp_path, "open", f"x{i}", f"unrelated chore number {i}: bump the linter", "done",
                ended_at="2026-02-02T10:00:00Z")
    ingest(cfg)
    open_item = [h for h in find(cfg, "bank export rejected") if h["session_id"] == "o"][0]["id"]
    wide = config(tmp_path, sources=("secret", "open"), k=100)  # 200 candidates: every vector
    exact = {q: [h["id"] for h in find(wide, q, lanes=["vectors"])] for q in (query, "linter chore")}
    monkeypatch.setattr(lane, "EXACT_UP_TO", 0)
    for filters in ({"allowed": ["open"]}, {"source": "open"}, {"since": "2026-01-15"}):
        hits = find(cfg, query, lanes=["vectors"], **filters)
        assert hits and hits[0]["id"] == open_item and {h["source"] for h in hits} == {"open"}, filters
    assert {h["source"] for h in find(cfg, query, allowed=["open"])} == {"open"}
    for q, ids in exact.items():
        assert [h["id"] for h in find(wide, q, lanes=["vectors"])] == ids, q


def test_the_bits_centre_is_taken_again_as_the_library_grows(tmp_path, plugins_in, monkeypatch):
    """Each step of CENTRE_AT sets the centre to the vectors' mean and rewrites every bit: one bit
    row per vector, no duplicate, and the lane's answer is the same through the bits as exact."""
    from jezero.query import vectors as lane

    monkeypatch.setattr(stored, "CENTRE_AT", (4, 12))
    cfg = config(tmp_path)
    for i in range(8):
        session(tmp_path, "local", f"s{i}", f"session {i} about the {['deploy', 'cake', 'kafka', 'tax'][i % 4]} work",
                "done")
    ingest(cfg)
    conn = open_readonly(cfg.library_path())
    stored.load_extension(conn)
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'semantic_%'").fetchall())
    assert meta[stored.META_CENTRED_AT] == "12" and len(bytes.fromhex(meta[stored.META_CENTRE])) == 256 * 4
    for floats, bits, key in ((stored.ITEM_VECTORS, stored.ITEM_BITS, "item_id"),
                              (stored.WINDOW_VECTORS, stored.WINDOW_BITS, "window_id")):
        assert (sorted(r[0] for r in conn.execute(f"SELECT {key} FROM {bits}"))
                == sorted(r[0] for r in conn.execute(f"SELECT {key} FROM {floats}")))
    conn.close()
    exact = [h["id"] for h in find(cfg, "kafka work", lanes=["vectors"])]
    monkeypatch.setattr(lane, "EXACT_UP_TO", 0)
    assert [h["id"] for h in find(cfg, "kafka work", lanes=["vectors"])] == exact


def test_vectors_in_the_first_layout_are_refused_until_embed(tmp_path, plugins_in):
    cfg = config(tmp_path)
    session(tmp_path, "local", "a", "ci db go vm ok", "yes")
    ingest(cfg)
    with Store(cfg.library_path()) as store:  # as a library of the first layout records its model
        store.db.execute("DELETE FROM meta WHERE key = ?", (stored.META_LAYOUT,))
    assert any("older layout" in n for n in find(cfg, "db ci vm").notes)
    assert embed_library(cfg).embedded == 1
    hits = find(cfg, "db ci vm")
    assert not hits.notes and hits[0]["session_id"] == "a"


def test_windows_of_another_length_are_refused_until_embed(tmp_path, plugins_in, monkeypatch):
    """The library records the length its message windows were cut at (WINDOW_CHARS); one cut at
    another length (or recording none: cut before it was recorded, at OLD_WINDOW_CHARS) is refused
    as another model's is, naming `jezero embed`, and a run writes items without vectors; embed
    cuts and embeds every item again."""
    cfg = config(tmp_path)
    session(tmp_path, "local", "a", "ci db go vm ok", "yes")
    ingest(cfg)
    conn = open_readonly(cfg.library_path())
    assert stored.recorded(conn).windows == stored.WINDOW_CHARS
    conn.close()
    monkeypatch.setattr(stored, "WINDOW_CHARS", stored.WINDOW_CHARS + 100)
    notes = find(cfg, "db ci vm").notes
    assert any(f"cut at up to {stored.WINDOW_CHARS - 100} characters, now {stored.WINDOW_CHARS}" in n
               and "jezero embed" in n for n in notes)
    session(tmp_path, "local", "b", "a second session", "done")
    ingest(cfg)
    assert counts(cfg.library_path())["behind"] == 1
    assert embed_library(cfg).embedded == 2
    hits = find(cfg, "db ci vm")
    assert not hits.notes and hits[0]["session_id"] == "a"
    with Store(cfg.library_path()) as store:  # as a library embedded before the length was recorded
        store.db.execute("DELETE FROM meta WHERE key = ?", (stored.META_WINDOWS,))
    assert (stored.OLD_WINDOW_CHARS != stored.WINDOW_CHARS) == bool(find(cfg, "db ci vm").notes)


def test_the_windows_length_of_the_config_is_recorded_and_a_change_needs_embed(tmp_path, plugins_in):
    """`[semantic] window_chars`: the windows are cut at that length and the library records it; a
    config asking another length finds the lane off (naming `jezero embed`) until embed cuts and
    embeds every item again at the new length."""
    cfg = config(tmp_path)
    session(tmp_path, "local", "a", "ci db go vm ok " + "the deploy log says the disk is full " * 30, "yes")
    ingest(cfg)
    before = counts(cfg.library_path())["windows"]
    short = config(tmp_path, window_chars=300)
    assert any("cut at up to 1200 characters, now 300" in n and "jezero embed" in n
               for n in find(short, "db ci vm").notes)
    assert embed_library(short).embedded == 1
    conn = open_readonly(cfg.library_path())
    assert stored.recorded(conn).windows == 300
    conn.close()
    assert counts(cfg.library_path())["windows"] > before
    hits = find(short, "db ci vm")
    assert not hits.notes and hits[0]["session_id"] == "a"
    assert any("now 1200" in n for n in find(cfg, "db ci vm").notes)  # now the default is the stranger


def test_the_lane_finds_what_the_keyword_lanes_cannot_and_explains_each_rank(tmp_path, plugins_in):
    """Words under three characters are not searchable by the keyword lanes; the hashing
    embedder sees them, which stands in here for a paraphrase."""
    cfg = config(tmp_path)
    session(tmp_path, "local", "a", "ci db go vm ok", "yes")
    session(tmp_path, "local", "b", "bake a chocolate cake", "preheat the oven")
    ingest(cfg)
    assert find(cfg, "db ci vm", lanes=["items", "messages"]) == []
    hits = find(cfg, "db ci vm", explain=True)
    assert hits[0]["session_id"] == "a"
    fusion = hits[0]["explain"]["fusion"]
    assert fusion["vectors_rank"] == 1 and fusion["items_rank"] is None and fusion["messages_rank"] is None
    assert fusion["vectors_similarity"] > 0.5


def test_vectors_is_a_lane_only_when_the_lane_is_on(tmp_path, plugins_in):
    from jezero.query import QueryError

    cfg = config(tmp_path, enabled=False)
    session(tmp_path, "local", "a", "the webhook fails", "fixed")
    ingest(cfg)
    with pytest.raises(QueryError, match="semantic lane on"):
        find(cfg, "webhook", lanes=["vectors"])


def test_vectors_of_another_model_are_refused_until_embed(tmp_path, plugins_in):
    cfg = config(tmp_path, options={"salt": "one"})
    session(tmp_path, "local", "a", "ci db go vm ok", "yes")
    session(tmp_path, "local", "b", "the webhook fails with InvalidClientTokenId", "rotated the keys")
    ingest(cfg)
    other = config(tmp_path, options={"salt": "two"})  # another model id: its vectors would not compare
    hits = find(other, "db ci vm webhook")
    assert any("do not mix" in n and "hashing-v1-256-one" in n for n in hits.notes)
    assert hits == find(other, "db ci vm webhook", lanes=["items", "messages"])  # the keyword lanes answer
    # A run with the other model writes its items, but no vectors: they are behind.
    session(tmp_path, "local", "c", "a third session on the webhook", "done")
    ingest(other)
    c = counts(other.library_path())
    assert c["library"] == 3 and c["items"] == 2 and c["behind"] == 1
    report = embed_library(other, batch=2)
    assert report.replaced == "hashing-v1-256-one" and report.embedded == 3
    c = counts(other.library_path())
    assert c["items"] == c["state"] == 3 and c["behind"] == 0 and c["duplicates"] == 0
    hits = find(other, "db ci vm", explain=True)
    assert not hits.notes and hits[0]["session_id"] == "a"
    assert any("do not mix" in n for n in find(cfg, "db ci vm").notes)  # now the first model is the stranger


def test_embed_brings_up_a_library_ingested_with_the_lane_off(tmp_path, plugins_in):
    off = config(tmp_path, enabled=False)
    for i in range(5):
        session(tmp_path, "local", f"s{i}", f"session {i} about the deploy script", "done")
    ingest(off)
    assert not stored.has_tables(open_readonly(off.library_path()))
    on = config(tmp_path)
    assert any("no vectors yet" in n for n in find(on, "deploy").notes)
    seen = []
    report = embed_library(on, batch=2, progress=lambda done, total: seen.append((done, total)))
    assert report.embedded == 5 and seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    assert embed_library(on).embedded == 0  # nothing is embedded twice
    # An item deleted while the lane is off leaves vectors that the next embed removes.
    with Store(off.library_path()) as store:
        store.write([], delete_uids=[store.db.execute("SELECT uid FROM items LIMIT 1").fetchone()[0]])
    assert embed_library(on).removed == 1
    c = counts(on.library_path())
    assert c["library"] == c["items"] == c["state"] == 4 and c["orphans"] == 0


# -- the lane switched off ------------------------------------------------------------------------


def test_with_the_lane_off_answers_are_the_keyword_lanes(tmp_path, plugins_in):
    """A library built with the lane on answers the keyword lanes exactly as one built with it
    off, and a search without the lane is those lanes."""
    for folder, enabled in (("on", True), ("off", False)):
        (tmp_path / folder).mkdir()
        cfg = config(tmp_path / folder, enabled=enabled)
        for i, (prompt, answer) in enumerate([("the webhook fails with InvalidClientTokenId", "rotate keys"),
                                              ("postgres vacuum is slow", "tune autovacuum"),
                                              ("the webhook retries twice", "idempotency key")]):
            session(tmp_path / folder, "local", f"s{i}", prompt, answer)
        ingest(cfg)
    on, off = config(tmp_path / "on"), config(tmp_path / "off", enabled=False)
    for q in ("webhook", "vacuum slow", "idempotency"):
        keyword = find(off, q)
        assert keyword == find(on, q, lanes=["items", "messages"]) == find(off, q, lanes=["items", "messages"])
        assert [h["id"] for h in keyword]


def imported_by(tmp_path: Path, config_path: Path, *args: str, env=None) -> set[str]:
    out = tmp_path / "modules.json"
    probe = (f"import atexit, json, sys\nsys.argv = ['jezero', '--config', {str(config_path)!r}, *{list(args)!r}]\n"
             f"atexit.register(lambda: open({str(out)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
             "from jezero.cli import main\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text()))


LANE_MODULES = ("numpy", "sqlite_vec", "jezero.query.vectors", "jezero.store.vectors")


@pytest.mark.parametrize("args", [("search", "webhook", "--json"), ("status",), ("run",)])
def test_with_the_lane_off_nothing_of_it_is_imported(tmp_path, args):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    config_path = tmp_path / "config.toml"
    config_path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n\n[semantic]\nenabled = false\n\n'
                           f'[[connectors]]\nname = "x"\ntype = "testdir"\noptions = {{ path = "{sessions}" }}\n')
    Store(tmp_path / "lib.sqlite3").close()
    site = plugin_site(tmp_path)
    modules = imported_by(tmp_path, config_path, *args, env={"PYTHONPATH": str(site)})
    assert [m for m in LANE_MODULES if m in modules or any(x.startswith(m + ".") for x in modules)] == []
    if args[0] == "run":  # the probe did run: the test plugin was loaded
        assert "jz_semantic_test" in modules


# -- the CLI, in subprocesses -----------------------------------------------------------------------


def plugin_site(tmp_path: Path) -> Path:
    """A real installed distribution on PYTHONPATH: the hashing embedder and the testdir
    connector, for `jezero` subprocesses."""
    site = tmp_path / "site"
    if site.exists():
        return site
    site.mkdir()
    tests = Path(__file__).resolve().parent
    (site / "jz_semantic_test.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tests)!r})
        from jezero import hookimpl
        from jezero.plugin.testing import HashingEmbedder
        from fixture_plugins import DirConnector

        @hookimpl
        def register_embedders(register):
            register("hashing", lambda options: HashingEmbedder(**options), description="tests")

        @hookimpl
        def register_connector_types(register):
            register("testdir", DirConnector, description="tests")
    """))
    info = site / "jz_semantic_test-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jz_semantic_test\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[jezero.connectors]\njz_semantic_test = jz_semantic_test\n")
    return site


def write_config(tmp_path: Path, *, enabled: bool, options: str = "{}", clients: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n\n'
                    f'[semantic]\nenabled = {"true" if enabled else "false"}\nembedder = "hashing"\n'
                    f'options = {options}\n\n'
                    f'[[connectors]]\nname = "local"\ntype = "testdir"\noptions = {{ path = "{tmp_path / "local"}" }}\n'
                    + clients)
    return path


def kill_embed_after(tmp_path: Path, config_path: Path, done: int) -> None:
    """Run `jezero embed --batch 1` with `config_path` (a paced embedder) and kill -9 it once it
    has reported `done` of the 12 items embedded."""
    env = {**os.environ, "PYTHONPATH": str(plugin_site(tmp_path))}
    proc = subprocess.Popen([*jezero_command(), "--config", str(config_path), "embed", "--batch", "1"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    try:
        for line in proc.stderr:
            if line.startswith(f"embedded {done} of 12"):
                break
        else:
            pytest.fail(f"embed ended before it was killed (exit {proc.wait()})")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_embed_killed_mid_run_resumes_without_duplicates(tmp_path, plugins_in, run_cli):
    for i in range(12):
        session(tmp_path, "local", f"s{i:02d}", f"session {i} about the release checklist", f"step {i} done")
    ingest(config(tmp_path, enabled=False))
    config_path = write_config(tmp_path, enabled=True, options="{ delay = 0.3 }")  # paced, so kill lands mid-run
    kill_embed_after(tmp_path, config_path, 3)
    c = counts(tmp_path / "lib.sqlite3")
    assert 3 <= c["items"] < 12 and c["items"] == c["state"] and c["duplicates"] == 0
    assert c["windows"] == c["window_rows"] and c["behind"] == 12 - c["items"]
    done = c["items"]
    fast = write_config(tmp_path, enabled=True)  # the same model id: the delay is not part of it
    again = run_cli("--config", str(fast), "embed", "--json", env={"PYTHONPATH": str(plugin_site(tmp_path))},
                    check=True)
    report = json.loads(again.stdout)
    assert report["embedded"] == 12 - done and report["replaced"] is None
    c = counts(tmp_path / "lib.sqlite3")
    assert c["items"] == c["state"] == c["library"] == 12 and c["duplicates"] == 0 and c["behind"] == 0
    assert c["windows"] == c["window_rows"]


def test_re_embedding_with_another_model_killed_mid_run_resumes_with_that_model_alone(tmp_path, plugins_in, run_cli):
    """A model change (`jezero embed` with another embedder setting) killed mid-run leaves only the
    new model's vectors (the old ones went in the one transaction that adopted it), the rest
    behind; the lane refuses the old model; the next run finishes without duplicates."""
    import numpy as np

    from jezero.plugin.testing import HashingEmbedder

    for i in range(12):
        session(tmp_path, "local", f"s{i:02d}", f"session {i} about the release checklist", f"step {i} done")
    first = config(tmp_path, options={"salt": "one"})
    ingest(first)  # every item embedded by the first model as it was written
    assert counts(first.library_path())["items"] == 12
    paced = write_config(tmp_path, enabled=True, options='{ salt = "two", delay = 0.3 }')
    kill_embed_after(tmp_path, paced, 3)
    c = counts(tmp_path / "lib.sqlite3")
    assert 3 <= c["items"] < 12 and c["items"] == c["state"] and c["duplicates"] == 0 and c["orphans"] == 0
    assert c["behind"] == 12 - c["items"]
    conn = open_readonly(tmp_path / "lib.sqlite3")
    try:
        stored.load_extension(conn)
        assert stored.recorded(conn).model_id == "hashing-v1-256-two"
        second = HashingEmbedder(salt="two")
        for item_id, blob in conn.execute(f"SELECT item_id, embedding FROM {stored.ITEM_VECTORS}").fetchall():
            title, summary, questions, atoms = conn.execute(
                "SELECT title, summary, questions, atoms FROM items WHERE id = ?", (item_id,)).fetchone()
            text = stored.item_text(title, summary, json.loads(questions), json.loads(atoms))
            assert np.allclose(np.frombuffer(blob, dtype=np.float32), stored.unit_rows(second, [text])[0], atol=1e-6)
    finally:
        conn.close()
    assert any("do not mix" in n for n in find(first, "release checklist").notes)  # the old model is refused
    done = c["items"]
    again = run_cli("--config", str(write_config(tmp_path, enabled=True, options='{ salt = "two" }')), "embed", "--json",
                    env={"PYTHONPATH": str(plugin_site(tmp_path))}, check=True)
    report = json.loads(again.stdout)
    assert report["embedded"] == 12 - done and report["replaced"] is None
    c = counts(tmp_path / "lib.sqlite3")
    assert c["items"] == c["state"] == c["library"] == 12 and c["duplicates"] == 0 and c["behind"] == 0
    assert c["windows"] == c["window_rows"]


def test_status_and_search_say_whether_the_lane_is_on(tmp_path, plugins_in, run_cli):
    session(tmp_path, "local", "a", "ci db go vm ok", "yes")
    ingest(config(tmp_path))
    env = {"PYTHONPATH": str(plugin_site(tmp_path))}
    on = write_config(tmp_path, enabled=True)
    status = run_cli("--config", str(on), "status", env=env, check=True)
    assert "semantic lane: on, embedder hashing (hashing-v1-256); 1 of 1 item(s) embedded" in status.stdout
    found = run_cli("--config", str(on), "search", "db ci vm", "--explain", env=env, check=True)
    assert "ci db go vm ok" in found.stdout and "vectors #1" in found.stdout
    other = write_config(tmp_path, enabled=True, options='{ salt = "x" }')
    status = run_cli("--config", str(other), "status", env=env, check=True)
    assert "not answering" in status.stdout and "do not mix" in status.stdout
    found = run_cli("--config", str(other), "search", "db ci vm", env=env, check=True)
    assert "note: the semantic lane is off" in found.stderr and "jezero embed" in found.stderr
    off = write_config(tmp_path, enabled=False)
    assert "semantic lane: off" in run_cli("--config", str(off), "status", env=env, check=True).stdout


def test_check_config_names_an_unknown_embedder(tmp_path, run_cli):
    path = tmp_path / "config.toml"
    path.write_text('[semantic]\nenabled = true\nembedder = "nope"\nweight = 1.5\n')
    proc = run_cli("--config", str(path), "check-config")
    assert proc.returncode != 0 and "semantic.embedder" in proc.stdout + proc.stderr
    path.write_text('[semantic]\nenabled = true\nembeder = "hashing"\n')
    proc = run_cli("--config", str(path), "check-config")
    assert "semantic.embeder: unknown key" in proc.stdout + proc.stderr


def test_semantic_config_defaults_keep_the_lane_off():
    assert SemanticConfig().enabled is False and Config().semantic.embedder == "minilm-static"


# -- MCP -------------------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_search_with_the_lane_on_over_stdio(tmp_path, plugins_in):
    import anyio
    from mcp import Client, StdioServerParameters

    cfg = config(tmp_path, sources=("agent-ci", "claude-local"))
    session(tmp_path, "agent-ci", "a", "ci db go vm ok", "yes")
    session(tmp_path, "claude-local", "b", "ci db go vm ok", "yes, the same words in a source ci may not read")
    session(tmp_path, "agent-ci", "c", "bake a chocolate cake", "preheat the oven")
    ingest(cfg)
    config_path = tmp_path / "config.toml"
    config_path.write_text(f'[storage]\npath = "{cfg.library_path()}"\n\n[semantic]\nenabled = true\n'
                           f'embedder = "hashing"\n\n[[clients]]\nname = "ci"\nkey_sha256 = "{"a" * 64}"\n'
                           'sources = ["agent-*"]\n')
    env = {**os.environ, "JEZERO_CONFIG": str(config_path), "PYTHONPATH": str(plugin_site(tmp_path))}
    command, *args = jezero_command()
    params = StdioServerParameters(command=command, args=[*args, "serve", "--transport", "stdio", "--client", "ci"],
                                   env=env)
    with anyio.fail_after(90):
        async with Client(params) as client:
            result = await client.call_tool("search", {"query": "db ci vm"})
            assert not result.is_error, result.content[0].text
            answer = result.structured_content
            instructions = client.instructions
            description = {t.name: t.description for t in (await client.list_tools()).tools}["search"]
    # The agent is told matching is not only literal here (with the lane off it is: test_server).
    assert "words, not meanings" not in instructions and "also on meaning" in instructions
    assert "semantic lane also matches meanings" in description
    assert answer["items"][0]["title"] == "ci db go vm ok"  # found by the vectors alone (words under 3 letters)
    assert {h["source"] for h in answer["items"]} == {"agent-ci"}
    assert "lanes_note" not in answer


# -- the first-party embedder, where installed ------------------------------------------------------


def test_the_real_embedder_finds_a_paraphrase(tmp_path, plugins_in):
    from jezero import plugins
    from jezero.models import EmbedderNotReady

    kind = plugins.embedder_types().get("minilm-static")
    if kind is None:
        pytest.skip("jezero-embedders (embedder minilm-static) is not installed")
    options = {"cache_dir": str(REAL_CACHE)} if REAL_CACHE.is_dir() else {}
    try:
        kind.build(options)
    except EmbedderNotReady:
        # Not prepared on this computer (a fresh machine): prepare the most frequent 4,000
        # tokens into the test's folder (about 12 s CPU; the whole vocabulary takes 75 s).
        try:
            from jezero_embedders import source
        except ImportError:
            pytest.skip("jezero-embedders is not installed")
        if source.installed_version() is None:
            pytest.skip(f"the source model is not installed ({source.INSTALL})")
        options = {"cache_dir": str(tmp_path / "embedder-cache"), "vocabulary": 4000}
        kind.prepare(options)
    cfg = config(tmp_path, embedder="minilm-static", options=options)
    session(tmp_path, "local", "a", "the app crashes when I rotate the phone to landscape",
            "the activity was recreated on configuration change; kept the state in a ViewModel")
    session(tmp_path, "local", "b", "postgres vacuum is slow on the orders table", "tuned autovacuum")
    session(tmp_path, "local", "c", "bake a chocolate cake", "preheat the oven")
    ingest(cfg)
    hits = find(cfg, "application dies when the device is turned sideways", lanes=["vectors"])
    assert hits[0]["session_id"] == "a"


@needs_plugin("jezero-connectors-claude")
def test_up_says_whether_the_lane_is_on(run_cli):
    proc = run_cli("up", "--demo", "--no-serve", check=True)
    assert "semantic lane: off" in proc.stderr
