"""`jezero redact` (jezero/ingest/reredact.py): a redactor that comes after sessions were stored
takes their secrets out of everything the library holds, through the real CLI in a subprocess on
a real SQLite file.

The "new" redactor is a plugin, a real distribution on PYTHONPATH registered through the same
hook as the built-in one, that registers its redactor only when EXTRA_ENV is set: the first
ingest runs without it, as before the user installed it. Its secrets are made-up strings that the
built-in rules do not know, so the first ingest stores them as a user's library would."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import textwrap
from datetime import datetime, timedelta, timezone

import apsw
import pytest

from jz_support import jezero_command, needs_plugin
from jezero.demo import SessionSpec, Turn
from jezero.store import open_readonly

pytestmark = [needs_plugin("jezero-connectors-claude"), needs_plugin("jezero-summarizers")]

SECRETS = ("QuokkaLane4417", "hunter2Quokka")  # a customer's address, a password
EXTRA_ENV = "JZ_TEST_EXTRA_REDACTOR"

PLUGIN = textwrap.dedent('''
    import os
    import signal
    from jezero.hookspecs import hookimpl

    SECRETS = {secrets!r}
    calls = [0]
    kill_at = int(os.environ.get("JZ_TEST_KILL_AT", "0"))
    if os.environ.get("JZ_TEST_BATCH"):  # smaller transactions, so that a kill can fall between two
        import jezero.ingest.reredact
        jezero.ingest.reredact.ITEMS_PER_TRANSACTION = int(os.environ["JZ_TEST_BATCH"])

    def redact(text):
        calls[0] += 1
        if kill_at and calls[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)  # a kill in the middle of a pass, at a known point
        for s in SECRETS:
            text = text.replace(s, "[REDACTED:customer]")
        return text

    @hookimpl
    def register_redactors(register):
        if os.environ.get("{env}"):  # the redactor installed after the first ingest
            register("customer", redact)

    @hookimpl
    def register_embedders(register):
        from jezero.plugin.testing import HashingEmbedder
        register("hashing", lambda options: HashingEmbedder(**options), description="tests")
''').format(secrets=SECRETS, env=EXTRA_ENV)


def plugin_site(tmp_path):
    """A real installed distribution on PYTHONPATH (as test_semantic.py makes one): the
    customer redactor (on when EXTRA_ENV is set) and the hashing embedder."""
    site = tmp_path / "site"
    if not site.exists():
        site.mkdir()
        (site / "jz_extra_redactor.py").write_text(PLUGIN)
        info = site / "jz_extra_redactor-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jz_extra_redactor\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text("[jezero.connectors]\njz_extra_redactor = jz_extra_redactor\n")
    return site


def jezero(tmp_path, *args, extra=True, env=None, check=True):
    full = {**os.environ, **(env or {}), "PYTHONPATH": str(plugin_site(tmp_path))}
    full.pop(EXTRA_ENV, None)
    if extra:
        full[EXTRA_ENV] = "1"
    proc = subprocess.run([*jezero_command(), "--config", str(tmp_path / "config.toml"), *args],
                          capture_output=True, text=True, env=full, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def session(i, start, *, secret_first=False):
    first = f"task {i}: fix the invoice export for the customer at {SECRETS[0]}" if secret_first \
        else f"task {i}: fix the invoice export webhook retries"
    turns = [Turn("user", first),
             Turn("command", f"psql -c 'select * from customers' # step {i}",
                  f"id | address\n{i} | {SECRETS[0]}\nlogin ok with password {SECRETS[1]}"),
             Turn("assistant", f"The customer row {i} is at {SECRETS[0]}; the export now retries the webhook."),
             Turn("user", "thanks, and the refund path?"),
             Turn("assistant", "The refund path reuses the same queue; nothing else to change.")]
    return SessionSpec("claude", f"/home/dev/src/shop{i % 3}", start + timedelta(hours=i), turns,
                       id=f"00000000-0000-4000-8000-{i:012d}")


def library_with_secrets(tmp_path, n=6, engine=None, semantic=False):
    """A library ingested by plain `jezero run` (the customer redactor not there yet)."""
    from jezero_connectors_claude.demo import write_claude

    start = datetime(2026, 3, 1, tzinfo=timezone.utc)
    specs = [session(i, start, secret_first=(i == 0)) for i in range(n)]
    for spec in specs:
        write_claude(tmp_path / "sessions", spec)
    search = f'[search]\nengine = "{engine}"\n' if engine else ""
    if semantic:
        search += '[semantic]\nenabled = true\nembedder = "hashing"\n'

    (tmp_path / "config.toml").write_text(f"""
[storage]
path = "{tmp_path / 'lib.sqlite3'}"
{search}[ingest]
settle_minutes = 0
max_input_chars = 8000
[[connectors]]
name = "claude"
type = "claude"
options = {{ path = "{tmp_path / 'sessions'}" }}
""")
    jezero(tmp_path, "run", "-q", extra=False)
    return tmp_path / "lib.sqlite3", specs


def rows(library, sql):
    conn = open_readonly(library)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def fts_matches(library, word):
    quoted = '"' + word + '"'
    return (rows(library, f"SELECT count(*) FROM items_fts WHERE items_fts MATCH '{quoted}'")[0][0]
            + rows(library, f"SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '{quoted}'")[0][0])


def in_files(paths, secret):
    """Whether the secret's bytes are anywhere in these files, in any case (the messages index
    keeps words lower-cased)."""
    needle = secret.lower().encode()
    return [str(p) for p in paths if p.exists() and needle in p.read_bytes().lower()]


def library_files(library):
    return [library, library.with_name(library.name + "-wal")]


def search_hits(tmp_path, word):
    found = json.loads(jezero(tmp_path, "search", word, "--json").stdout)
    recalled = jezero(tmp_path, "recall", word, "--json", check=False)
    assert recalled.returncode == 0, recalled.stderr
    return found, json.loads(recalled.stdout)


def test_redact_takes_a_later_redactors_secrets_out_of_everything_stored(tmp_path):
    library, _ = library_with_secrets(tmp_path)
    # what runs keep besides items: warnings quoting a line, a connector's last error, a call's error
    conn = apsw.Connection(str(library))
    with conn:
        for i, secret in enumerate(SECRETS):
            conn.execute("INSERT INTO warnings(connector, message, first_seen, last_seen, runs) VALUES('claude', ?, ?, ?, ?)",
                         (f"bad line: {secret}", f"2026-03-0{i + 1}T00:00:00.000000Z", f"2026-03-0{i + 2}T00:00:00.000000Z",
                          i + 1))
        conn.execute("UPDATE connector_state SET last_error = ?, warnings = ?",
                     (f"failed at {SECRETS[1]}", json.dumps([f"bad line: {SECRETS[0]}"])))
        conn.execute("UPDATE summarizer_calls SET error = ? WHERE id = (SELECT min(id) FROM summarizer_calls)",
                     (f"provider said: {SECRETS[1]}",))
    conn.close()
    assert fts_matches(library, SECRETS[0]) > 0 and fts_matches(library, SECRETS[1]) > 0
    assert in_files(library_files(library), SECRETS[0])
    before = rows(library, "SELECT id, uid, original, content_hash FROM items ORDER BY id")

    dry = jezero(tmp_path, "redact", "--dry-run", "--json")
    report = json.loads(dry.stdout)
    assert report["dry_run"] and report["redactors"] == ["builtin", "customer"]
    assert report["sources"]["claude"]["items"] == len(before)
    assert report["other_rows"] == 4  # two warnings, the connector's state, a call's error
    assert report["sources"]["claude"]["messages"] >= 2 * len(before)
    assert not any(s in dry.stdout + dry.stderr for s in SECRETS)  # counts only
    plain = jezero(tmp_path, "redact", "--dry-run")
    assert "claude: would change" in plain.stdout and not any(s in plain.stdout + plain.stderr for s in SECRETS)
    assert rows(library, "SELECT id, uid, original, content_hash FROM items ORDER BY id") == before  # wrote nothing

    done = jezero(tmp_path, "redact")
    assert "claude: changed" in done.stdout, done.stdout
    assert not any(s in done.stdout + done.stderr for s in SECRETS)
    for secret in SECRETS:
        assert fts_matches(library, secret) == 0
        found, recalled = search_hits(tmp_path, secret)
        assert found == [] and not recalled.get("sessions"), (found, recalled)
        assert rows(library, f"SELECT count(*) FROM items WHERE title || summary || questions || atoms || original "
                             f"LIKE '%{secret}%'")[0][0] == 0
        assert rows(library, f"SELECT count(*) FROM message_texts WHERE text LIKE '%{secret}%'")[0][0] == 0
        assert not in_files(library_files(library), secret)  # not in free pages or the WAL either
    after = rows(library, "SELECT id, uid, original, content_hash FROM items ORDER BY id")
    assert [r[0] for r in after] == [r[0] for r in before]  # the same items, not new ones
    # a uid is the hash of the segment's first block: it changes where that block held a secret
    # (session 0's first prompt), as the pipeline would name the segment now
    moved = {b[1] for a, b in zip(after, before) if a[1] != b[1]}
    assert moved == {b[1] for b in before if SECRETS[0] in b[2].split("\n[", 1)[0]} and len(moved) == 1
    called = {r[0] for r in rows(library, "SELECT uid FROM summarizer_calls")}
    assert called and called <= {r[1] for r in after}  # the call log follows the rename
    assert all(h == hashlib.sha256(o.encode()).hexdigest() for _, _, o, h in after)
    assert all("[REDACTED:customer]" in o for _, _, o, _ in after)
    # the two warnings are one now, seen in both's runs
    assert rows(library, "SELECT message, first_seen, last_seen, runs FROM warnings WHERE message LIKE 'bad line:%'") \
        == [("bad line: [REDACTED:customer]", "2026-03-01T00:00:00.000000Z", "2026-03-03T00:00:00.000000Z", 3)]
    assert rows(library, "SELECT DISTINCT last_error, warnings FROM connector_state") \
        == [("failed at [REDACTED:customer]", json.dumps(["bad line: [REDACTED:customer]"]))]
    assert rows(library, "SELECT count(*) FROM summarizer_calls WHERE error = 'provider said: [REDACTED:customer]'") \
        == [(1,)]
    # what the redactor leaves is still found
    assert json.loads(jezero(tmp_path, "search", "refund", "--json").stdout)
    conn = apsw.Connection(str(library))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
        conn.execute("INSERT INTO items_fts(items_fts, rank) VALUES('integrity-check', 0)")
        assert conn.execute("SELECT count(*) FROM meta WHERE key = 'redact_pending'").fetchone()[0] == 0
    finally:
        conn.close()

    again = json.loads(jezero(tmp_path, "redact", "--json").stdout)  # idempotent
    assert again["items_changed"] == 0 and again["messages_changed"] == 0


def snapshot(library):
    return (rows(library, "SELECT id, uid, content_hash, original, title, updated_at FROM items ORDER BY id"),
            rows(library, "SELECT m.id, m.item_id, t.text FROM messages AS m JOIN message_texts AS t ON t.id = m.id "
                          "ORDER BY m.id"))


def test_a_run_after_redact_stores_nothing_new_and_a_changed_session_still_ingests(tmp_path):
    from jezero_connectors_claude.demo import write_claude

    library, specs = library_with_secrets(tmp_path)
    jezero(tmp_path, "redact")
    redacted = snapshot(library)

    jezero(tmp_path, "run", "-q")  # the transcripts as they were: cursors say nothing changed
    assert snapshot(library) == redacted
    # every session read again from its transcript (as after a cursor lost): each segment is
    # the pipeline's own redaction of it, found unchanged by its content hash
    conn = apsw.Connection(str(library))
    with conn:
        conn.execute("DELETE FROM cursors")
    conn.close()
    reread = jezero(tmp_path, "run", "--json")
    report = json.loads(reread.stdout)[0]
    assert report["sessions_seen"] == len(specs)
    assert report["items_written"] == 0 and report["segments_summarized"] == 0, report
    assert snapshot(library) == redacted

    # a session goes on: written again, its new part stored, still without the secrets
    specs[2].turns += [Turn("user", f"one more: ship it to {SECRETS[0]}"), Turn("assistant", "Shipped.")]
    write_claude(tmp_path / "sessions", specs[2])
    grown = json.loads(jezero(tmp_path, "run", "--json").stdout)[0]
    assert grown["sessions_written"] == 1 and grown["items_written"] >= 1, grown
    items, messages = snapshot(library)
    assert len(items) >= len(redacted[0])
    assert "Shipped." in "".join(t for _, _, t in messages)
    assert not any(s in o for s in SECRETS for *_, o, _, _ in items)
    assert not any(s in t for s in SECRETS for _, _, t in messages)


def item_states(library):
    """Each item as one of the two states a row may be in: old (secret) or new (redacted), with
    its hash, its index row and its messages agreeing with it."""
    conn = open_readonly(library)
    try:
        out = {}
        for item_id, original, content_hash, title in conn.execute(
                "SELECT id, original, content_hash, title FROM items"):
            assert content_hash == hashlib.sha256(original.encode()).hexdigest()
            (fts_title,) = conn.execute("SELECT title FROM items_fts WHERE rowid = ?", (item_id,)).fetchone()
            assert fts_title == title
            texts = "".join(r[0] for r in conn.execute(
                "SELECT t.text FROM messages AS m JOIN message_texts AS t ON t.id = m.id WHERE m.item_id = ?",
                (item_id,)))
            old = SECRETS[0] in original
            assert (SECRETS[0] in texts) == old  # an item and its messages change together
            out[item_id] = "old" if old else "new"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return out
    finally:
        conn.close()


@pytest.mark.parametrize("kill_at", [20, 100])
def test_a_redact_killed_mid_way_leaves_each_row_old_or_new_and_a_second_one_finishes(tmp_path, kill_at):
    library, specs = library_with_secrets(tmp_path, n=12)
    env = {"JZ_TEST_KILL_AT": str(kill_at), "JZ_TEST_BATCH": "3"}  # 4 transactions of 3 items
    killed = jezero(tmp_path, "redact", "--json", env=env, check=False)
    assert killed.returncode == -9, (killed.returncode, killed.stderr)
    states = item_states(library)
    assert len(states) == len(specs)
    if kill_at == 100:
        assert "new" in states.values() and "old" in states.values(), states  # killed between two batches
    conn = apsw.Connection(str(library))
    try:
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
    finally:
        conn.close()
    status = jezero(tmp_path, "status")
    assert "jezero redact" in status.stdout and "did not finish" in status.stdout

    jezero(tmp_path, "redact")
    assert set(item_states(library).values()) == {"new"}
    for secret in SECRETS:
        assert fts_matches(library, secret) == 0
        assert not in_files(library_files(library), secret)


def test_redact_waits_for_no_run_it_is_refused_while_one_holds_the_lock(tmp_path):
    from jezero import config as config_mod
    from jezero.ingest.runner import exclusive

    library, _ = library_with_secrets(tmp_path, n=2)
    before = snapshot(library)
    with exclusive(config_mod.load(str(tmp_path / "config.toml")), "jezero run"):
        refused = jezero(tmp_path, "redact", check=False)
    assert refused.returncode == 3 and "holds" in refused.stderr, refused.stderr
    assert snapshot(library) == before


def test_redact_refuses_a_library_on_another_backend(tmp_path):
    (tmp_path / "config.toml").write_text('[storage]\nbackend = "postgres"\nurl_env = "JZ_NO_SUCH_URL"\n')
    refused = jezero(tmp_path, "redact", check=False)
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: ") and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "SQLite library only" in refused.stderr and "'postgres'" in refused.stderr


def segment_files(tmp_path):
    """The tantivy indexes' segment files (their names are the segments' ids)."""
    return {p for f in tmp_path.iterdir() if f.is_dir() and ".tantivy" in f.name for p in f.iterdir()
            if p.is_file() and not p.name.startswith(".") and p.name != "meta.json"}


@needs_plugin("jezero-index-tantivy")
def test_redact_rebuilds_a_derived_index_so_it_keeps_no_old_text(tmp_path):
    """Tantivy keeps terms in an FST and documents compressed, so a byte scan says nothing: the
    index is searched, and no segment file from before the pass is left (a deleted document
    stays in its segment until a merge; a rebuild writes new segments and removes the old)."""
    library_with_secrets(tmp_path, engine="tantivy")
    assert json.loads(jezero(tmp_path, "search", SECRETS[0], "--json").stdout)
    before = segment_files(tmp_path)
    assert before

    done = jezero(tmp_path, "redact")
    assert "tantivy index rebuilt" in done.stdout, done.stdout
    for secret in SECRETS:
        found, recalled = search_hits(tmp_path, secret)
        assert found == [] and not recalled.get("sessions")
    after = segment_files(tmp_path)
    assert after and not (before & after), sorted(p.name for p in before & after)
    assert json.loads(jezero(tmp_path, "search", "refund", "--json").stdout)


def test_redact_drops_the_changed_items_vectors_and_embed_makes_them_again(tmp_path):
    pytest.importorskip("numpy", reason="the semantic lane needs numpy (core-only run)")
    pytest.importorskip("sqlite_vec", reason="the semantic lane needs sqlite-vec (core-only run)")
    library, specs = library_with_secrets(tmp_path, semantic=True)
    items = rows(library, "SELECT count(*) FROM items")[0][0]
    assert rows(library, "SELECT count(*) FROM item_vector_state")[0][0] == items
    windows = rows(library, "SELECT count(*) FROM message_windows")[0][0]
    assert windows >= items

    report = json.loads(jezero(tmp_path, "redact", "--json").stdout)
    assert report["vectors_dropped"] == report["items_changed"] == items
    # no vector made from the old text is left: the items are behind until `jezero embed`
    assert rows(library, "SELECT count(*) FROM item_vector_state")[0][0] == 0
    assert rows(library, "SELECT count(*) FROM message_windows")[0][0] == 0
    conn = open_readonly(library)
    try:
        from jezero.store import vectors

        vectors.load_extension(conn)
        assert vectors.counts(conn) == {"items": 0, "windows": 0}
        assert conn.execute("SELECT count(*) FROM window_bits").fetchone()[0] == 0
    finally:
        conn.close()
    assert "embedded" in jezero(tmp_path, "status").stdout

    jezero(tmp_path, "embed")
    assert rows(library, "SELECT count(*) FROM item_vector_state")[0][0] == items
    assert rows(library, "SELECT count(*) FROM message_windows")[0][0] == windows


def test_a_pass_killed_after_its_rows_still_gets_its_indexes_merged_and_file_rewritten(tmp_path):
    """Killed after the last batch committed and before the index merge and VACUUM: every row is
    redacted, so the next pass finds nothing to change, and it must still finish that part (the
    old words are in the indexes' pages and the old rows in the file's free space until then)."""
    from jezero.ingest import reredact
    from jezero.store import Store

    library, _ = library_with_secrets(tmp_path)

    def clean(text):
        for s in SECRETS:
            text = text.replace(s, "[REDACTED:customer]") if text else text
        return text

    store = Store(library)
    try:
        report = reredact.RedactReport(False, ["customer"])
        reredact._pass(store.db, clean, report, lambda message: None, write=True)  # the rows, as a kill leaves them
        assert report.items_changed
    finally:
        store.close()
    assert in_files(library_files(library), SECRETS[0])  # the old text is still in the file

    again = json.loads(jezero(tmp_path, "redact", "--json").stdout)
    assert again["items_changed"] == 0 and again["vacuumed"]
    for secret in SECRETS:
        assert not in_files(library_files(library), secret)


def test_a_reader_in_a_long_read_keeps_the_wal_and_redact_says_so(tmp_path):
    """A server's reader in the middle of a read at the end of the pass keeps the write-ahead log
    from being emptied (its frames may hold old pages): the pass says so, and running it again
    once the reader is gone empties it."""
    library, _ = library_with_secrets(tmp_path)
    reader = open_readonly(library)
    try:
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM items").fetchone()[0]  # a snapshot held
        done = jezero(tmp_path, "redact")
        assert "kept the write-ahead log from being emptied" in done.stderr, done.stderr
        # the reader still reads its snapshot, whole
        assert reader.execute("SELECT count(*) FROM items").fetchone()[0]
    finally:
        reader.execute("COMMIT")
        reader.close()
    again = jezero(tmp_path, "redact", "--json")
    assert json.loads(again.stdout)["wal_truncated"] is True
    for secret in SECRETS:
        assert not in_files(library_files(library), secret)
