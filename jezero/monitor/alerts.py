"""Telling someone: a webhook alert when health finds a problem, a recovery when it is gone, and
a ping to a push monitor on every check.

The webhook is posted once per distinct set of problems: the same problems found again by the
next check (every few minutes, from a timer) are not posted again. What was last posted is kept
in a small JSON file next to the library, so the library itself is never written by a check.

The ping goes out on every check, healthy or not: the monitor on the other end raises the alarm
when pings stop, which is how a dead timer (or a dead machine) is noticed at all.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jezero import __version__
from jezero.monitor.health import HealthReport

# The webhook URL often carries a secret (Slack, Discord, ntfy tokens): it is read from this
# variable (or the .env beside the config), never from the config file or the command line.
WEBHOOK_ENV = "JEZERO_HEALTH_WEBHOOK"
# A check runs from a timer: a receiver that hangs must not hold it up for long.
TIMEOUT_SECONDS = 10


class AlertError(Exception):
    pass


def state_path(library_path: Path) -> Path:
    return library_path.with_name(library_path.name + ".health.json")


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_state(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)  # never a half-written state that would re-post an old alert


def _request(url: str, data: bytes | None = None) -> int:
    headers = {"User-Agent": f"jezero/{__version__}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_SECONDS) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        raise AlertError(f"{_where(url)} answered HTTP {e.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise AlertError(f"cannot reach {_where(url)}: {reason}") from None


def _where(url: str) -> str:
    """The host of a URL, never its path or query (where webhook secrets live)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or '?'}" + (f":{parts.port}" if parts.port else "")


def message(report: HealthReport, kind: str) -> dict[str, Any]:
    """The JSON posted: `text` for chat webhooks (Slack, Mattermost, ...), the rest for machines."""
    host = socket.gethostname()
    if kind == "recovery":
        text = f"Jezero on {host}: all connectors healthy again."
    else:
        lines = [f"- {p.connector}: {p.kind}: {p.detail}" for p in report.problems]
        text = f"Jezero on {host}: {len(lines)} connector problem(s)\n" + "\n".join(lines)
    return {"text": text, "kind": kind, "host": host, "checked_at": report.checked_at,
            "problems": [{"connector": p.connector, "kind": p.kind, "detail": p.detail} for p in report.problems]}


@dataclass
class WebhookResult:
    posted: str | None  # "alert", "recovery" or None (nothing new to say)
    error: str | None = None


def notify(report: HealthReport, url: str, state_file: Path) -> WebhookResult:
    """Post an alert when the set of problems differs from the last one posted, a recovery when
    problems were posted and none are left; nothing otherwise. A failed post is not recorded, so
    the next check tries again."""
    state = _read_state(state_file)
    posted = sorted(state.get("problems") or [])
    current = sorted({p.key() for p in report.problems})
    if current == posted:
        return WebhookResult(None)
    kind = "alert" if current else "recovery"
    try:
        _request(url, json.dumps(message(report, kind)).encode())
    except AlertError as e:
        return WebhookResult(None, str(e))
    _write_state(state_file, {"problems": current, "posted_at": report.checked_at, "kind": kind})
    return WebhookResult(kind)


def ping(url: str) -> str | None:
    """GET the push monitor's URL; returns an error message, or None when it answered."""
    try:
        _request(url)
    except AlertError as e:
        return str(e)
    return None
