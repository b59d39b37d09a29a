"""Numbered schema migrations. Each runs once, in order, inside one transaction, and bumps
meta.schema_version. Never edit a migration that has shipped: add the next one."""

from __future__ import annotations


def _v1(db, tokenizer: str) -> None:
    db.execute(
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE items(
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,          -- source:session:segment, stable across runs
            source TEXT NOT NULL,              -- the connector's name
            agent TEXT NOT NULL,
            project TEXT,
            session_id TEXT NOT NULL,
            parent_session_id TEXT,
            segment_index INTEGER NOT NULL,
            occurred_at TEXT NOT NULL,         -- UTC, fixed width, sorts as text
            started_at TEXT,
            title TEXT NOT NULL,
            summary TEXT NOT NULL,
            questions TEXT NOT NULL,           -- JSON list of strings
            atoms TEXT NOT NULL,               -- JSON list of {"type", "text"}
            original TEXT NOT NULL,            -- the redacted segment text
            content_hash TEXT NOT NULL,
            summarizer TEXT NOT NULL,
            summarizer_model TEXT,
            summary_schema INTEGER NOT NULL,
            language TEXT,
            cwd TEXT,
            git_branch TEXT,
            model TEXT,                        -- the agent's model
            project_guess TEXT,                -- the summarizer's project, kept for retag
            device_project TEXT,               -- a project sent by a device, kept for retag
            ingested_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX items_source_time ON items(source, occurred_at);
        CREATE INDEX items_project_time ON items(project, occurred_at);
        CREATE INDEX items_session ON items(source, session_id);
        CREATE TABLE connector_state(
            name TEXT PRIMARY KEY,
            last_run_at TEXT,
            last_success_at TEXT,
            last_error TEXT,
            warnings TEXT NOT NULL DEFAULT '[]'  -- JSON list of strings from the last run
        );
        CREATE TABLE cursors(
            connector TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,               -- JSON, owned by the connector
            PRIMARY KEY(connector, key)
        ) WITHOUT ROWID;
        """
    )
    tok = tokenizer.replace("'", "''")
    db.execute(
        f"CREATE VIRTUAL TABLE items_fts USING fts5(title, summary, questions, atoms, project, tokenize='{tok}')"
    )
    db.execute("INSERT INTO meta(key, value) VALUES('tokenizer', ?)", (tokenizer,))


def _v2(db, tokenizer: str) -> None:
    """Summarizer calls, for cost control: every call's tokens and cost, per run."""
    db.execute(
        """
        CREATE TABLE summarizer_calls(
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            at TEXT NOT NULL,
            source TEXT,
            uid TEXT,
            summarizer TEXT NOT NULL,
            model TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL,
            ok INTEGER NOT NULL,
            error TEXT
        );
        CREATE INDEX summarizer_calls_run ON summarizer_calls(run_id);
        """
    )


def _v3(db, tokenizer: str) -> None:
    """Find an already summarised twin by its content hash without scanning every item."""
    db.execute("CREATE INDEX items_content_hash ON items(content_hash)")


def _v4(db, tokenizer: str) -> None:
    """The catalog and the overview group every visible item by project and source; without this
    index they read the whole table (about 230 ms at 100k items, 1.7 ms with it at 10k)."""
    db.execute("CREATE INDEX items_project_source_time ON items(project, source, occurred_at)")


def _v5(db, tokenizer: str) -> None:
    """The messages layer (jezero/store/messages.py): a table of every item's messages and their
    own word-level FTS5 index. An existing library gets the messages of the items it holds from
    their stored originals, inside this migration's transaction; cursors are left alone, so no
    connector reads anything again and nothing is summarised again."""
    from jezero.store import format_time, messages

    messages.create(db)
    messages.backfill(db, format_time)


def _v6(db, tokenizer: str) -> None:
    """Warnings kept until acknowledged (jezero.store.warnings): one row per connector and
    message, so a warning seen again is counted, not repeated, and an admin's acknowledgement
    sticks. IF NOT EXISTS: the same table whatever order the branches' migrations ran in."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS warnings(
            id INTEGER PRIMARY KEY,
            connector TEXT NOT NULL,
            message TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            runs INTEGER NOT NULL DEFAULT 1,
            acknowledged_at TEXT,             -- NULL until an admin acknowledges it
            UNIQUE(connector, message)
        );
        CREATE INDEX IF NOT EXISTS warnings_open ON warnings(acknowledged_at, last_seen);
        """
    )


def _v7(db, tokenizer: str) -> None:
    """A change log for derived search indexes (jezero.store.engines): each item written or
    deleted gets the next change number, in the same transaction as the write. An index beside
    the library records the last number it applied and catches up from there, so it can never
    answer from a state the library did not have. One row per item (the latest change), so the
    log never outgrows the library. `library_id` tells an index which library it was built from."""
    db.execute(
        """
        CREATE TABLE item_changes(item_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
        CREATE UNIQUE INDEX item_changes_seq ON item_changes(seq);
        CREATE TRIGGER items_changes_insert AFTER INSERT ON items BEGIN
          INSERT INTO item_changes(item_id, seq) VALUES(new.id, (SELECT coalesce(max(seq), 0) + 1 FROM item_changes))
          ON CONFLICT(item_id) DO UPDATE SET seq = excluded.seq;
        END;
        CREATE TRIGGER items_changes_update AFTER UPDATE ON items BEGIN
          INSERT INTO item_changes(item_id, seq) VALUES(new.id, (SELECT coalesce(max(seq), 0) + 1 FROM item_changes))
          ON CONFLICT(item_id) DO UPDATE SET seq = excluded.seq;
        END;
        CREATE TRIGGER items_changes_delete AFTER DELETE ON items BEGIN
          INSERT INTO item_changes(item_id, seq) VALUES(old.id, (SELECT coalesce(max(seq), 0) + 1 FROM item_changes))
          ON CONFLICT(item_id) DO UPDATE SET seq = excluded.seq;
        END;
        INSERT INTO meta(key, value) VALUES('library_id', lower(hex(randomblob(16))));
        """
    )


def _v8(db, tokenizer: str) -> None:
    """The semantic lane's bookkeeping (jezero/store/vectors.py), in plain tables so that this
    migration needs neither sqlite-vec nor an embedder: which change of each item its vectors
    reflect (an item written while the lane was off, or by another model, is behind, and
    `jezero embed` brings it up), and which messages each message window covers. The vector
    tables themselves (vec0) are made when the lane first writes, with the embedder's dimension.
    IF NOT EXISTS: the same tables whatever order the branches' migrations ran in."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS item_vector_state(
            item_id INTEGER PRIMARY KEY,
            seq INTEGER NOT NULL               -- item_changes.seq of the item its vectors were made from
        );
        CREATE TABLE IF NOT EXISTS message_windows(
            id INTEGER PRIMARY KEY,            -- = the window's row in window_vectors
            item_id INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,        -- messages (item_id, seq) first_seq..last_seq
            last_seq INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS message_windows_item ON message_windows(item_id);
        """
    )


def _v9(db, tokenizer: str) -> None:
    """Message ids that follow the messages' time (jezero/store/messages.py, time_id): every
    message is renumbered in (time, old id) order, its text with it, and the messages index is
    rebuilt from the texts. Nothing else holds a message id: recall's windows, the semantic
    lane's windows and get_item find messages by item and position. The library gets a new
    `library_id`, so that every derived index beside it (tantivy) is rebuilt from the new ids
    rather than caught up: none of their rows changed in the items' change log."""
    from jezero.store import messages

    renumber = messages.time_ordered(db.execute("SELECT id, at FROM messages").fetchall())
    db.execute("CREATE TEMP TABLE message_renumber(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
    db.executemany("INSERT INTO temp.message_renumber(old, new) VALUES(?, ?)", renumber.items())
    for table in ("messages", "message_texts"):
        # Each table copied in its new id order and put in place of the old one: renumbering in
        # place left both B-trees half empty (2,000 sessions: 124 -> 170 MB, and recall slower).
        sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0]
        indexes = [r[0] for r in db.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
                                            "AND sql IS NOT NULL", (table,))]
        columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        rest = ", ".join(f"t.{c}" for c in columns if c != "id")
        db.execute(sql.replace(f"CREATE TABLE {table}(", f"CREATE TABLE {table}_renumbered(", 1))
        # a text without its message (none is written so) keeps its old id
        db.execute(f"INSERT INTO {table}_renumbered(id, {', '.join(c for c in columns if c != 'id')}) "
                   f"SELECT coalesce(r.new, t.id), {rest} FROM {table} AS t "
                   f"LEFT JOIN temp.message_renumber AS r ON r.old = t.id ORDER BY 1")
        db.execute(f"DROP TABLE {table}")
        db.execute(f"ALTER TABLE {table}_renumbered RENAME TO {table}")
        for index in indexes:
            db.execute(index)
    db.execute("DROP TABLE temp.message_renumber")
    db.execute("INSERT INTO messages_fts(messages_fts) VALUES('rebuild')")
    # one segment, as tidy_index leaves a backfill: the rebuild's many slowed every read of it
    db.execute("INSERT INTO messages_fts(messages_fts) VALUES('optimize')")
    db.execute("UPDATE meta SET value = lower(hex(randomblob(16))) WHERE key = 'library_id'")


MIGRATIONS = [_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8, _v9]  # index + 1 = the version it produces
LATEST = len(MIGRATIONS)


def migrate(db, tokenizer: str, target: int = LATEST) -> int:
    """Bring the database from its version to `target`; returns the version it started at."""
    start = current_version(db)
    for version in range(start + 1, target + 1):
        # The write lock first, then the version read again under it: two processes opening one
        # library at once (a run and `jezero status` on a new or older library) both read the old
        # version, and the second ran the first's migration again once it had the lock ("table
        # meta already exists", a traceback). Now the second waits (busy timeout) and finds it done.
        db.execute("BEGIN IMMEDIATE")
        try:
            if current_version(db) < version:
                MIGRATIONS[version - 1](db, tokenizer)
                db.execute(
                    "INSERT INTO meta(key, value) VALUES('schema_version', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (str(version),),
                )
        except BaseException:
            # SQLite has already rolled back on some errors (a full disk, out of memory): a
            # ROLLBACK then raised "no transaction is active" and hid the cause behind a traceback.
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    return start


def current_version(db) -> int:
    has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0
