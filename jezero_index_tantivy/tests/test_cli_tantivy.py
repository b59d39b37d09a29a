"""The tantivy engine as a user runs it: the real `jezero` command in subprocesses, a config
with `[search] engine = "tantivy"`, `jezero reindex`, searches answered from the derived index,
and a write the index has not seen yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

from jezero.store import ItemRecord, Store
from jezero.store.messages import MessageRecord
from jezero_index_tantivy import folder_for

NOW = datetime.now(timezone.utc)


def _item(n, title, summary, days_ago=3):
    return ItemRecord(uid=f"claude-local:s{n}:0", source="claude-local", agent="claude", session_id=f"s{n}",
                      segment_index=0, occurred_at=NOW - timedelta(days=days_ago), title=title, summary=summary,
                      questions=[], atoms=[{"type": "file", "text": "deploy/pgbouncer.ini"}] if n == 1 else [],
                      original="o", content_hash=f"h{n}", summarizer="t", summary_schema=1, project="infra")


def test_reindex_and_search_with_the_tantivy_engine(tmp_path):
    library = tmp_path / "library.sqlite3"
    with Store(library) as store:
        pooled = _item(1, "PgBouncer transaction pooling", "Switched PgBouncer to transaction pooling.")
        pooled.messages = [MessageRecord("user", "the pool runs out of connections", NOW),
                           MessageRecord("tool", "SHOW POOLS; cl_waiting 41", NOW, "Bash"),
                           MessageRecord("assistant", "switch pool_mode to transaction", NOW)]
        store.write([pooled,
                     *[_item(10 + i, f"Filler {w}", f"{w} notes", 100) for i, w in enumerate(["kettle", "walnut"])]])
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n\n[search]\nengine = "tantivy"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JEZERO_", "XDG_"))}
    env.update({"JEZERO_CONFIG": str(config), "HOME": str(tmp_path / "home"), "NO_COLOR": "1",
                "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")})

    def jezero(*args):
        return subprocess.run([sys.executable, "-m", "jezero.cli", *args], env=env, capture_output=True, text=True,
                              timeout=120)

    done = jezero("reindex", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["items_written"] == 3 and json.loads(done.stdout)["engine"] == "tantivy"
    assert json.loads(done.stdout)["messages_written"] == 3  # the messages index is rebuilt too
    told = jezero("reindex")
    assert told.returncode == 0 and "3 items and 3 messages written" in told.stdout, told.stdout
    assert (folder_for(library) / "meta.json").exists()

    found = jezero("search", "deploy/pgbouncer.ini", "--explain", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    hits = hits["results"] if isinstance(hits, dict) else hits
    assert [h["title"] for h in hits] == ["PgBouncer transaction pooling"]
    assert hits[0]["explain"]["candidates"] == "tantivy"

    # A write the index has not seen: the next search catches up before it answers.
    with Store(library) as store:
        store.write([_item(2, "Patroni failover drill", "Failover of the Postgres primary with Patroni.")])
    later = jezero("search", "patroni", "--explain", "--json")
    hits = json.loads(later.stdout)
    hits = hits["results"] if isinstance(hits, dict) else hits
    assert [h["title"] for h in hits] == ["Patroni failover drill"] and hits[0]["explain"]["candidates"] == "tantivy"

    caught = jezero("reindex", "--catch-up", "--json")
    assert caught.returncode == 0 and json.loads(caught.stdout)["items_written"] == 0
    assert json.loads(caught.stdout)["messages_written"] == 0

    bad = jezero("reindex", "--engine", "nosuch")
    assert bad.returncode == 2 and "nosuch" in bad.stderr and "Traceback" not in bad.stderr
