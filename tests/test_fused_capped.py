"""The messages lane's places held by words read at their newest rows only (jezero/query/fused/,
CAPPED_ALONE), on both engines.

A word in more than LANE_MAX_ROWS messages is read at its newest LANE_MAX_ROWS, each scoring
alike: among the sessions holding only such words the lane's order is their messages' time, not
what they say. In reciprocal rank fusion each of those places still had a whole place's say, so in
a library of thousands of sessions the newest sessions that merely say `TLS` took places 2-40 of
the lane and buried the session the items lane put first (benchmarks/retrieval, padded coding:
`how are TLS certificates issued and renewed`, the revision 1st in the items, out of the fused 10).
Such a place now counts only for a session the items lane found too (where the two lanes agree:
`push notifications provider`, whose revision the items put 1st and the lane reads through its
common words alone, keeps its place); it still counts for the items' gate.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.config import SearchConfig
from jezero.query import search
from jezero.query.fused import rules
from jezero.store import Store, open_readonly
from test_query_engines import engine, message_session, stored  # noqa: F401  (engine: the parametrised fixture: fts5, tantivy)

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=90)
LANE_ROWS = 20  # fused.LANE_MAX_ROWS, lowered so that 30 sessions make a word common


def session(sid, day, texts, title, summary="routine work"):
    return message_session(sid, T0 + timedelta(days=day), texts, title, summary, project="infra")


@pytest.fixture
def capped_library(tmp_path, engine, monkeypatch):  # noqa: F811
    """`cron` (day 1) says `renewed`, said nowhere else: the lane's best. `certs` (day 35), whose
    item is about TLS, says `tls` once; so do 30 sessions of handshake logs (days 10-39) whose items
    say nothing of it: `tls` is common, read at its newest rows, and the five logs newer than
    `certs` come before it in the lane."""
    monkeypatch.setattr(rules, "LANE_MAX_ROWS", LANE_ROWS)
    path = tmp_path / "lib.sqlite3"
    records = [
        session("cron", 1, ["the cron job renewed it overnight", "good"], "Nightly cron jobs"),
        session("certs", 35, ["set up tls on the ingress with cert-manager", "done"],
                "TLS certificates issued by cert-manager", "Moved the TLS certificates to cert-manager."),
        *[session(f"log{n:02d}", n, [f"handshake log {n}: tls alert on port {8000 + n}", "noted"], f"Port check {n}")
          for n in range(10, 40)],
    ]
    return stored(path, records, engine)


def ranked(path, engine):  # noqa: F811
    with open_readonly(path) as conn:
        hits = search(conn, "tls renewed", options=SearchConfig(engine=engine), now=NOW, explain=True)
    return [h["session_id"] for h in hits], {h["session_id"]: h["explain"]["fusion"] for h in hits}


def test_places_held_by_common_words_alone_count_for_sessions_the_items_found(capped_library, engine,  # noqa: F811
                                                                              monkeypatch):
    order, why = ranked(capped_library, engine)
    assert why["certs"]["ranks"]["items"] == 1 and why["certs"]["capped_in_messages"] == ["tls"]
    assert why["certs"]["matched_terms"] == ["tls"] and why["certs"]["shares"]["messages"] > 0
    assert order[:2] == ["cron", "certs"]
    for n in range(35, 40):  # the newer logs: still in the lane, with no say
        assert why[f"log{n}"]["ranks"]["messages"] < why["certs"]["ranks"]["messages"]
        assert why[f"log{n}"]["shares"]["messages"] == 0 and why[f"log{n}"]["messages_no_say"] == "capped_alone"
    assert "messages_no_say" not in why["certs"]
    monkeypatch.setattr(rules, "CAPPED_ALONE", False)
    order, why = ranked(capped_library, engine)
    assert order.index("certs") > order.index("log39")  # without the rule: the newest logs first


def test_jezero_search_explain_says_a_place_had_no_say(tmp_path):
    # the real CLI in a subprocess, at the real LANE_MAX_ROWS: 310 logs make `tls` common
    import os
    import subprocess
    import sys

    path = tmp_path / "lib.sqlite3"
    logs = [session(f"log{n:03d}", n / 4, [f"handshake log {n}: tls alert on port {8000 + n}", "noted"],
                    f"Port check {n}") for n in range(310)]
    with Store(path) as store:
        store.write([session("cron", 0, ["the cron job renewed it overnight", "good"], "Nightly cron jobs"),
                     session("certs", 70, ["set up tls on the ingress with cert-manager", "done"],
                             "TLS certificates issued by cert-manager", "Moved the TLS certificates to cert-manager."),
                     *logs])
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{path}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JEZERO_", "XDG_"))}
    env.update({"JEZERO_CONFIG": str(config), "HOME": str(tmp_path / "home"), "COLUMNS": "250", "NO_COLOR": "1",
                "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
                "XDG_STATE_HOME": str(tmp_path / "xdg-state"), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")})
    proc = subprocess.run([sys.executable, "-m", "jezero.cli", "search", "tls renewed", "--explain"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    hits = proc.stdout.split("\n[")
    certs = next(h for h in hits if "TLS certificates issued by cert-manager" in h)
    log = next(h for h in hits if "Port check" in h)
    assert "read at their newest messages only: tls" in certs and "no say in the fusion" not in certs
    assert "no say in the fusion for it" in log
