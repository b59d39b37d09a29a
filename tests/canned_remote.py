"""Fixed answers in the shapes the server gives, for snapshot tests of the app's screens: real
dates change every day, a screenshot must not. (The pilot test in test_tui.py reads a real
server; these only pin the layout.)"""

from __future__ import annotations

from typing import Any

from jezero.tui.remote import Remote


def hit(i: int, title: str, project: str, source: str, day: str, score: float = 1.0, **extra) -> dict[str, Any]:
    return {"id": i, "title": title, "summary": f"{title}. Outcome: done.", "project": project, "source": source,
            "agent": source.split("-")[0], "occurred_at": f"{day}T10:00:00.000000Z", "score": score, **extra}


ITEMS = [
    hit(8, "Staging runs out of memory during invoice exports", "billing-api", "codex-local", "2026-02-26"),
    hit(4, "Drop Plausible, keep server logs only", "shop", "claude-local", "2026-02-17"),
    hit(7, "Migrar la base de datos de facturación a PostgreSQL 16", "infra", "claude-local", "2026-02-09"),
    hit(6, "What does the staging server cost us?", "billing-api", "codex-local", "2026-01-30"),
    hit(5, "CI fails building the docker image (ENOSPC)", "infra", "claude-local", "2026-01-15"),
    hit(2, "Billing API crashes with too many clients", "billing-api", "codex-local", "2025-12-31"),
    hit(3, "Remove Google Analytics: Plausible, no consent banner", "shop", "claude-local", "2025-12-01"),
    hit(1, "Add Google Analytics 4 to the shop site", "shop", "claude-local", "2025-10-02"),
]

OVERVIEW = {
    "days": 30, "since": "2026-01-29T00:00:00.000000Z", "total": 8, "recent": 4,
    "sources": [
        {"name": "claude-local", "items": 5, "recent": 2, "last_at": "2026-02-17T10:00:00.000000Z"},
        {"name": "codex-local", "items": 3, "recent": 2, "last_at": "2026-02-26T10:00:00.000000Z"},
    ],
    "projects": [
        {"name": "billing-api", "items": 3, "recent": 2, "last_at": "2026-02-26T10:00:00.000000Z"},
        {"name": "shop", "items": 3, "recent": 1, "last_at": "2026-02-17T10:00:00.000000Z"},
        {"name": "infra", "items": 2, "recent": 1, "last_at": "2026-02-09T10:00:00.000000Z"},
    ],
    "per_day": [{"day": f"2026-{1 + (28 + i) // 31:02}-{(28 + i) % 31 + 1:02}", "items": n}
                for i, n in enumerate([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1,
                                       0, 0, 0, 0, 0, 0, 0, 0, 1, 0])],
    "connectors": [
        {"name": "claude-local", "type": "claude", "enabled": True, "interval_minutes": 15,
         "last_run_at": "2026-03-01T09:45:00.000000Z", "last_success_at": "2026-03-01T09:45:00.000000Z",
         "status": "ok", "problems": []},
        {"name": "codex-local", "type": "codex", "enabled": True, "interval_minutes": 15,
         "last_run_at": "2026-03-01T09:45:00.000000Z", "last_success_at": "2026-02-27T08:00:00.000000Z",
         "status": "warning", "problems": [{"connector": "codex-local", "kind": "warning",
                                            "detail": "rollout-x.jsonl:3: unknown record type 'hologram'"}]},
        {"name": "laptop-inbox", "type": "inbox-claude", "enabled": True, "interval_minutes": 15,
         "last_run_at": None, "last_success_at": None, "status": "stale",
         "problems": [{"connector": "laptop-inbox", "kind": "stale", "detail": "never run (is the timer running? see `jezero schedule`)"}]},
    ],
    # A laptop whose Claude Code plugin is current and whose Codex plugin carries an older core,
    # and a desktop approved but silent so far.
    "client_core_version": "0.2.0",
    "devices": [
        {"device": "anna-laptop", "approved": True,
         "agents": [
             {"agent": "claude", "source": "inbox-anna-laptop-claude", "last_upload_at": "2026-03-01T09:40:12Z",
              "files": 14, "bytes": 2811904, "core_version": "0.2.0", "plugin": "claude/0.1.0", "outdated": False},
             {"agent": "codex", "source": "inbox-anna-laptop-codex", "last_upload_at": "2026-02-27T17:02:45Z",
              "files": 3, "bytes": 401233, "core_version": "0.1.0", "plugin": "codex/0.1.0", "outdated": True}],
         "plugins": [
             {"plugin": "claude/0.1.0", "core_version": "0.2.0", "last_upload_at": "2026-03-01T09:40:12Z",
              "outdated": False},
             {"plugin": "codex/0.1.0", "core_version": "0.1.0", "last_upload_at": "2026-02-27T17:02:45Z",
              "outdated": True}]},
        {"device": "build-box", "approved": True, "agents": [], "plugins": []},
    ],
}


class CannedRemote(Remote):
    def __init__(self) -> None:
        super().__init__("http://jezero.example:8765/mcp", "jz_canned")

    async def overview(self, days: int = 30) -> dict[str, Any]:
        return OVERVIEW

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        if tool == "catalog":
            return {"sources": [{k: s[k] for k in ("name", "items", "last_at")} for s in OVERVIEW["sources"]],
                    "projects": [{**p, "sources": []} for p in OVERVIEW["projects"]]}
        if tool == "timeline":
            rows = [h for h in ITEMS if args.get("project") in (None, h["project"])
                    and args.get("source") in (None, h["source"])]
            return {"items": rows[: args.get("limit") or 20]}
        if tool == "search":
            words = [w for w in args["query"].lower().split() if len(w) >= 3]
            rows = [dict(h, score=round(1.0 - i / 10, 2)) for i, h in
                    enumerate(h for h in ITEMS if any(w in h["title"].lower() for w in words))]
            if args.get("explain"):
                for h in rows:
                    h["explain"] = {"bm25": -h["score"] * 2, "relevance": h["score"] * 2, "recency": 0.5,
                                    "score": h["score"]}
            return {"items": rows[: args.get("limit") or 10]}
        if tool == "later":
            return {"matched_by": "subject", "item": next(h for h in ITEMS if h["id"] == args["item_id"]),
                    "items": [ITEMS[1]]}
        if tool == "get_item":
            h = next(h for h in ITEMS if h["id"] == args["item_id"])
            return {**h, "questions": [f"What about {h['title'].lower()}?"],
                    "atoms": [{"type": "decision", "text": h["title"]}], "session_id": "s1"}
        raise AssertionError(tool)
