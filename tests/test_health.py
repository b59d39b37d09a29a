"""`jezero health` as a timer runs it: the real CLI in a subprocess, a real library, and a real
HTTP receiver on 127.0.0.1 standing in for the webhook and the push monitor."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from jz_support import needs_plugin

from jezero.store import Store, format_time, now_text
from jezero.store.warnings import acknowledge

pytestmark = [needs_plugin("jezero-connectors-claude")]


class Receiver:
    """Records every request; answers `status` (200 unless changed)."""

    def __init__(self):
        self.requests: list[tuple[str, str, dict | None]] = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, body):
                receiver.requests.append((self.command, self.path, body))
                self.send_response(receiver.status)
                self.end_headers()

            def do_GET(self):
                self._answer(None)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self._answer(json.loads(self.rfile.read(length)))

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def posts(self):
        return [body for method, path, body in self.requests if method == "POST"]

    def pings(self):
        return [path for method, path, body in self.requests if method == "GET"]


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.server.shutdown()


CONNECTORS = ("healthy", "failing", "stale", "warns")


@pytest.fixture
def library(tmp_path):
    """A config with four connectors and a library whose record says: one healthy, one whose
    last run failed, one without a success for two hours (interval 15 minutes), one holding a
    warning."""
    store_dir = tmp_path / "claude"
    store_dir.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n' + "".join(
        f'\n[[connectors]]\nname = "{n}"\ntype = "claude"\noptions = {{ path = "{store_dir}" }}\n' for n in CONNECTORS))
    with Store(tmp_path / "library.sqlite3") as store:
        for name in CONNECTORS:
            store.record_run(name, error=None, warnings=[], ok=True)
        store.record_run("failing", error="OSError: [Errno 5] Input/output error", warnings=[], ok=False)
        store.record_run("warns", error=None, warnings=["a.jsonl:3: unknown record type 'hologram'"], ok=True)
        two_hours_ago = format_time(datetime.now(timezone.utc) - timedelta(hours=2))
        store.db.execute("UPDATE connector_state SET last_success_at=?, last_run_at=? WHERE name='stale'",
                         (two_hours_ago, two_hours_ago))
    return config, tmp_path / "library.sqlite3"


def heal(library_path: Path, *names: str) -> None:
    """A clean run of each connector, and its kept warnings acknowledged by the admin (a warning
    stays until then, however many clean runs follow)."""
    with Store(library_path) as store:
        for name in names:
            store.record_run(name, error=None, warnings=[], ok=True)
            acknowledge(store.db, connector=name, everything=True, now=now_text())


def test_flags_failing_stale_and_warning_connectors(run_cli, library):
    config, _ = library
    proc = run_cli("--config", str(config), "health", "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    status = {c["name"]: c["status"] for c in report["connectors"]}
    assert status == {"healthy": "ok", "failing": "failing", "stale": "stale", "warns": "warning"}
    kinds = {(p["connector"], p["kind"]) for p in report["problems"]}
    assert kinds == {("failing", "failing"), ("stale", "stale"), ("warns", "warning")}
    assert not report["ok"]
    text = run_cli("--config", str(config), "health")
    assert text.returncode == 1
    assert "FAILING  failing" in text.stdout and "Input/output error" in text.stdout
    assert "hologram" in text.stdout and "no success for 2 hours" in text.stdout
    assert "3 problem(s)" in text.stdout


def test_stale_after_is_a_multiple_of_the_interval(run_cli, library):
    config, lib = library
    heal(lib, "failing", "warns")
    assert run_cli("--config", str(config), "health").returncode == 1  # 2 h > 3 x 15 min
    proc = run_cli("--config", str(config), "health", "--stale-after", "10")  # 2 h < 10 x 15 min
    assert proc.returncode == 0, proc.stdout
    assert "all connectors healthy" in proc.stdout


def test_webhook_posts_once_per_change_then_a_recovery(run_cli, library, receiver):
    config, lib = library
    env = {"JEZERO_HEALTH_WEBHOOK": receiver.url + "/hook/s3cret"}
    check = lambda: run_cli("--config", str(config), "health", "--webhook", "--json", env=env)

    first = check()
    assert first.returncode == 1 and json.loads(first.stdout)["webhook"]["posted"] == "alert"
    [alert] = receiver.posts()
    assert alert["kind"] == "alert" and len(alert["problems"]) == 3 and "failing" in alert["text"]

    again = check()  # the same problems: not posted again
    assert json.loads(again.stdout)["webhook"]["posted"] is None
    assert len(receiver.posts()) == 1

    heal(lib, "failing")  # fewer problems is a change
    assert json.loads(check().stdout)["webhook"]["posted"] == "alert"
    assert {p["connector"] for p in receiver.posts()[-1]["problems"]} == {"stale", "warns"}

    heal(lib, "stale", "warns")
    last = check()
    assert last.returncode == 0 and json.loads(last.stdout)["webhook"]["posted"] == "recovery"
    assert receiver.posts()[-1]["kind"] == "recovery" and receiver.posts()[-1]["problems"] == []
    check()
    assert len(receiver.posts()) == 3  # healthy and already said so: silence
    assert (lib.parent / "library.sqlite3.health.json").exists()


def test_a_failed_post_is_tried_again_on_the_next_check(run_cli, library, receiver):
    config, _ = library
    env = {"JEZERO_HEALTH_WEBHOOK": receiver.url + "/hook/s3cret"}
    receiver.status = 500
    proc = run_cli("--config", str(config), "health", "--webhook", env=env)
    assert proc.returncode == 1
    assert "HTTP 500" in proc.stderr and "s3cret" not in proc.stderr + proc.stdout  # the URL's path stays secret
    receiver.status = 200
    run_cli("--config", str(config), "health", "--webhook", env=env)
    assert [p["kind"] for p in receiver.posts()] == ["alert", "alert"]


def test_webhook_url_comes_only_from_the_environment(run_cli, library):
    config, _ = library
    proc = run_cli("--config", str(config), "health", "--webhook", env={"JEZERO_HEALTH_WEBHOOK": ""})
    assert proc.returncode == 2 and "JEZERO_HEALTH_WEBHOOK" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_ping_on_every_check_healthy_or_not(run_cli, library, receiver):
    config, lib = library
    for _ in range(2):
        assert run_cli("--config", str(config), "health", "--ping", receiver.url + "/ping/abc").returncode == 1
    heal(lib, *CONNECTORS)
    assert run_cli("--config", str(config), "health", "--ping", receiver.url + "/ping/abc").returncode == 0
    assert receiver.pings() == ["/ping/abc"] * 3
    assert receiver.posts() == []  # no webhook asked for


def test_an_unreachable_monitor_is_a_warning_not_a_crash(run_cli, library):
    config, _ = library
    proc = run_cli("--config", str(config), "health", "--ping", "http://127.0.0.1:9/ping")
    assert proc.returncode == 1 and "warning: ping: cannot reach http://127.0.0.1:9" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_due_then_health_shows_a_held_warning(run_cli, tmp_path):
    """End to end: a Claude Code store that vanished is a warning the connector keeps reporting;
    `run --due` skips it until its interval has elapsed; health keeps flagging it."""
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "lib.sqlite3"}"\n\n[[connectors]]\nname = "gone"\n'
                      f'type = "claude"\noptions = {{ path = "{tmp_path / "nowhere"}" }}\n')
    first = run_cli("--config", str(config), "run", "--due", "--json")
    assert [r["connector"] for r in json.loads(first.stdout)] == ["gone"]
    assert "not found" in json.loads(first.stdout)[0]["warnings"][0]
    second = run_cli("--config", str(config), "run", "--due", "--json")
    assert json.loads(second.stdout) == []  # not due yet
    health = run_cli("--config", str(config), "health", "--json")
    assert health.returncode == 1
    [gone] = json.loads(health.stdout)["connectors"]
    assert gone["status"] == "warning" and "not found" in gone["problems"][0]["detail"]


def test_schedule_prints_and_installs_a_systemd_timer(run_cli, library, isolated_home):
    config, _ = library
    printed = run_cli("--config", str(config), "schedule", "--platform", "linux", "--every", "10", "--webhook")
    assert printed.returncode == 0, printed.stderr
    assert "OnUnitActiveSec=10min" in printed.stdout
    assert "run --due --quiet" in printed.stdout and "health --webhook" in printed.stdout
    assert str(config) in printed.stdout
    assert not (isolated_home / ".config" / "systemd").exists()  # printing writes nothing
    installed = run_cli("--config", str(config), "schedule", "--platform", "linux", "--install")
    assert installed.returncode == 0
    unit = isolated_home / ".config" / "systemd" / "user"
    assert "ExecStart=-" in (unit / "jezero.service").read_text()
    assert "WantedBy=timers.target" in (unit / "jezero.timer").read_text()
    assert "systemctl --user enable --now jezero.timer" in installed.stdout


def test_schedule_for_macos_is_a_launchd_agent(run_cli, library):
    config, _ = library
    proc = run_cli("--config", str(config), "schedule", "--platform", "macos", "--ping", "https://hc.example/p/1")
    assert proc.returncode == 0
    assert "<key>StartInterval</key><integer>300</integer>" in proc.stdout
    assert "run --due --quiet; " in proc.stdout and "health --ping https://hc.example/p/1" in proc.stdout


def test_judge_rules():
    from jezero.config import ConnectorConfig
    from jezero.monitor.health import judge

    now = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    conn = ConnectorConfig(name="c", type="claude", interval_minutes=15)
    recent = format_time(now - timedelta(minutes=20))
    assert judge(conn, None, now).status == "stale"  # configured, never run
    assert judge(conn.model_copy(update={"enabled": False}), None, now).status == "disabled"
    both = judge(conn, {"last_run_at": recent, "last_success_at": recent, "last_error": "KeyError: 'x'",
                        "warnings": ["odd line"]}, now)
    assert [p.kind for p in both.problems] == ["failing", "warning"] and both.status == "failing"
    ok = judge(conn, {"last_run_at": recent, "last_success_at": recent, "last_error": None, "warnings": []}, now)
    assert ok.status == "ok" and not ok.problems


def test_overview_route_reports_health_of_the_keys_sources_only(library):
    import socket
    import time

    import httpx2

    from jezero.server import http_server, key_digest

    config, _ = library
    config.write_text(config.read_text() + f'\n[[clients]]\nname = "ci"\nkey_sha256 = "{key_digest("jz_ci")}"\n'
                      'sources = ["fail*", "warns"]\n')
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = http_server(str(config), "127.0.0.1", port, log_level="warning")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(400):
            if server.started:
                break
            time.sleep(0.05)
        data = httpx2.get(f"http://127.0.0.1:{port}/api/v1/overview", headers={"Authorization": "Bearer jz_ci"},
                          timeout=10).json()
    finally:
        server.should_exit = True
        thread.join(10)
    assert {c["name"]: c["status"] for c in data["connectors"]} == {"failing": "failing", "warns": "warning"}


def test_an_acknowledged_warning_is_no_longer_a_problem_but_a_new_one_is(run_cli, library):
    config, lib = library
    heal(lib, "failing", "stale")
    proc = run_cli("--config", str(config), "health")
    assert proc.returncode == 1 and "hologram" in proc.stdout
    assert run_cli("--config", str(config), "warnings", "ack", "--all").returncode == 0
    assert run_cli("--config", str(config), "health").returncode == 0
    with Store(lib) as store:
        store.record_run("warns", error=None, warnings=["b.jsonl:9: unknown record type 'lantern'"], ok=True)
    proc = run_cli("--config", str(config), "health")
    assert proc.returncode == 1 and "lantern" in proc.stdout and "hologram" not in proc.stdout
