"""`jezero search / later / timeline / show`, run as real subprocesses on a library built here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from jezero.store import ItemRecord, Store

NOW = datetime.now(timezone.utc)


def _item(n, title, summary, *, days_ago, project="shop", source="claude-local", original="transcript text"):
    return ItemRecord(
        uid=f"{source}:s{n}:0", source=source, agent="claude", session_id=f"s{n}", segment_index=0,
        occurred_at=NOW - timedelta(days=days_ago), title=title, summary=summary,
        questions=[f"What happened with {title.lower()}?"], atoms=[{"type": "decision", "text": summary}],
        original=original, content_hash=f"h{n}", summarizer="test", summary_schema=1, project=project,
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    library = root / "library.sqlite3"
    items = [
        _item(1, "Shop site: add the analytics script", "Added analytics behind a consent banner.", days_ago=90,
              original="USER: add analytics\nASSISTANT: done"),
        _item(2, "Shop site: analytics only after consent", "Analytics waits for the consent banner.", days_ago=60),
        _item(3, "Shop site: remove the analytics script", "Removed analytics entirely.", days_ago=30),
        _item(4, "Footer colours", "Changed the shop footer colours.", days_ago=10),
        _item(5, "Crème brûlée recipe", "Dessert page.", days_ago=5, project="website", source="codex-local"),
    ]
    items += [_item(10 + i, f"Filler {w}", f"{w} notes", days_ago=200, project="misc")
              for i, w in enumerate(["kettle", "pigeon", "walnut", "meadow", "copper", "lantern", "violet", "saddle"])]
    with Store(library) as store:
        store.write(items)
    config = root / "config.toml"
    config.write_text(f'[storage]\npath = "{library}"\n\n[search]\ndefault_limit = 10\n')
    e = {k: v for k, v in os.environ.items() if not k.startswith(("JEZERO_", "XDG_"))}
    e.update({
        "JEZERO_CONFIG": str(config), "HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "xdg-config"),
        "XDG_DATA_HOME": str(root / "xdg-data"), "XDG_CACHE_HOME": str(root / "xdg-cache"),
        "XDG_STATE_HOME": str(root / "xdg-state"), "COLUMNS": "200", "NO_COLOR": "1",
    })
    return {"env": e, "root": root, "library": library}


def jezero(env, *args, check=True):
    proc = subprocess.run([sys.executable, "-m", "jezero.cli", *args], env=env["env"], capture_output=True, text=True,
                          timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def as_json(env, *args):
    return json.loads(jezero(env, *args, "--json").stdout)


def test_search_json_and_text(env):
    hits = as_json(env, "search", "analytics consent")
    assert [h["id"] for h in hits][:3] and all("analytics" in h["title"].lower() for h in hits[:3])
    assert {"id", "title", "summary", "project", "source", "occurred_at", "score"} <= set(hits[0])
    text = jezero(env, "search", "brulee").stdout
    assert "[5]" in text and "Crème brûlée recipe" in text and "codex-local · website" in text


def test_search_filters_limit_and_explain(env):
    assert [h["id"] for h in as_json(env, "search", "analytics", "--limit", "1")] == [3]
    assert as_json(env, "search", "analytics", "--project", "website") == []
    assert as_json(env, "search", "brulee", "--source", "claude-local") == []
    since = (NOW - timedelta(days=45)).date().isoformat()
    assert {h["id"] for h in as_json(env, "search", "analytics", "--since", since)} == {3}
    explained = as_json(env, "search", "analytics", "--explain", "--lanes", "items")
    assert explained[0]["explain"]["score"] == explained[0]["score"]
    text = jezero(env, "search", "analytics", "--explain", "--lanes", "items").stdout
    assert "relevance" in text and "recency" in text and "by field:" in text
    fused = jezero(env, "search", "analytics", "--explain").stdout
    assert "fused" in fused and "items #1" in fused and "relevance" in fused
    assert "lanes must be" in jezero(env, "search", "analytics", "--lanes", "summaries", check=False).stderr


def test_search_no_match_and_operators(env):
    assert "no match" in jezero(env, "search", "zzzqqqxx").stdout
    for q in ['NEAR(', '"', "title:x", "*", "AND OR NOT"]:
        assert jezero(env, "search", q).returncode == 0


def test_later(env):
    found = as_json(env, "later", "1", "analytics consent")
    assert found["matched_by"] == "subject" and [h["id"] for h in found["items"]] == [3, 2]
    text = jezero(env, "later", "1", "analytics consent").stdout
    assert "NEWER ON THIS SUBJECT" in text and text.index("[3]") < text.index("[2]")
    fallback = as_json(env, "later", "3", "zzzqqqxx")
    assert fallback["matched_by"] == "project_timeline" and [h["id"] for h in fallback["items"]] == [4]


def test_timeline(env):
    items = as_json(env, "timeline", "--project", "shop")
    assert [h["id"] for h in items] == [4, 3, 2, 1]
    until = (NOW - timedelta(days=45)).date().isoformat()
    assert [h["id"] for h in as_json(env, "timeline", "--project", "shop", "--until", until)] == [2, 1]
    assert [h["id"] for h in as_json(env, "timeline", "--source", "codex-local")] == [5]
    assert len(as_json(env, "timeline", "--project", "shop", "--limit", "2")) == 2
    proc = jezero(env, "timeline", check=False)
    assert proc.returncode == 2 and "--project or --source" in proc.stderr and "Traceback" not in proc.stderr


def test_show(env):
    text = jezero(env, "show", "1").stdout
    assert "Shop site: add the analytics script" in text and "Questions:" in text and "USER: add analytics" not in text
    assert "USER: add analytics" in jezero(env, "show", "1", "--original").stdout
    item = as_json(env, "show", "1")
    assert item["id"] == 1 and "original" not in item and isinstance(item["atoms"], list)
    assert as_json(env, "show", "1", "--original")["original"].startswith("USER:")
    newer = jezero(env, "show", "1", "--newer").stdout
    assert "NEWER ON THIS SUBJECT" in newer and "[3]" in newer
    # Item 5 is the newest of its project: nothing on its subject, so the fallback heading.
    fallback = jezero(env, "show", "5", "--newer").stdout
    assert "NEWER IN THIS PROJECT (by date, not by subject)" in fallback
    assert as_json(env, "show", "3", "--newer")["newer"]["matched_by"] in ("subject", "project_timeline")


def test_clear_errors(env):
    proc = jezero(env, "show", "999", check=False)
    assert proc.returncode == 1 and "no item 999" in proc.stderr and "Traceback" not in proc.stderr
    proc = jezero(env, "later", "999", check=False)
    assert proc.returncode == 1 and "no item 999" in proc.stderr
    proc = jezero(env, "search", "analytics", "--since", "last tuesday", check=False)
    assert proc.returncode == 2 and "since" in proc.stderr and "Traceback" not in proc.stderr
    proc = jezero(env, "timeline", "--project", "shop", "--until", "soon", check=False)
    assert proc.returncode == 2 and "until" in proc.stderr


def test_missing_library(env, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "nowhere.sqlite3"}"\n')
    other = {**env, "env": {**env["env"], "JEZERO_CONFIG": str(config)}}
    for args in (["search", "x"], ["show", "1"], ["timeline", "--project", "p"], ["later", "1"]):
        proc = jezero(other, *args, check=False)
        assert proc.returncode == 1, args
        assert "no library at" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "nowhere.sqlite3").exists()
