"""Made-up sessions for `jezero up --demo`, written at run time in the agents' real on-disk
formats (Claude Code JSONL and Codex rollouts), so the demo goes through the same connectors,
pipeline and summarizer as a real store.

The writers are also what the retrieval benchmark uses to lay out its labelled sessions.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path


@dataclass
class Turn:
    """One step of a made-up session: a prompt, an answer, or a command with its output."""

    role: str  # "user" | "assistant" | "command"
    text: str  # the prompt, the answer, or the command line
    output: str = ""  # for a command
    failed: bool = False  # for a command: a non-zero exit


@dataclass
class SessionSpec:
    agent: str  # "claude" | "codex"
    cwd: str
    started: datetime
    turns: list[Turn]
    branch: str = "main"
    model: str | None = None
    id: str = field(default_factory=lambda: str(uuid.uuid4()))


def _claude_dir_name(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def write_claude(projects: Path, spec: SessionSpec) -> Path:
    """A Claude Code 2.x session file under `projects/<encoded cwd>/<id>.jsonl`."""
    folder = projects / _claude_dir_name(spec.cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec.id}.jsonl"
    t = spec.started
    parent = None
    lines = []

    def line(kind: str, message: dict, **extra) -> None:
        nonlocal parent, t
        t += timedelta(seconds=40)
        this = str(uuid.uuid4())
        lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": spec.cwd,
                      "sessionId": spec.id, "version": "2.1.17", "gitBranch": spec.branch, "type": kind,
                      "message": message, "uuid": this, "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), **extra})
        parent = this

    model = spec.model or "claude-sonnet-4-5"
    for turn in spec.turns:
        if turn.role == "user":
            line("user", {"role": "user", "content": turn.text})
        elif turn.role == "assistant":
            line("assistant", {"id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant",
                               "model": model, "content": [{"type": "text", "text": turn.text}],
                               "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 10}})
        else:
            call = f"toolu_{uuid.uuid4().hex[:20]}"
            line("assistant", {"id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant",
                               "model": model, "content": [{"type": "tool_use", "id": call, "name": "Bash",
                                                            "input": {"command": turn.text}}],
                               "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 10}})
            line("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                                       "content": turn.output, "is_error": turn.failed}]},
                 toolUseResult={"stdout": "" if turn.failed else turn.output,
                                "stderr": turn.output if turn.failed else "", "interrupted": False})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def write_codex(home: Path, spec: SessionSpec) -> Path:
    """A Codex rollout (envelope lines) under `sessions/YYYY/MM/DD/`."""
    day = spec.started
    folder = home / "sessions" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{day:%Y-%m-%dT%H-%M-%S}-{spec.id}.jsonl"
    t = spec.started
    lines = []

    def line(kind: str, payload: dict) -> None:
        nonlocal t
        t += timedelta(seconds=30)
        lines.append({"timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "type": kind, "payload": payload})

    line("session_meta", {"id": spec.id, "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "cwd": spec.cwd,
                          "originator": "codex_cli_rs", "cli_version": "0.125.0", "source": "cli",
                          "model_provider": "openai", "git": {"branch": spec.branch}})
    line("turn_context", {"cwd": spec.cwd, "approval_policy": "on-request", "model": spec.model or "gpt-5-codex",
                          "summary": "auto"})
    for turn in spec.turns:
        if turn.role == "user":
            line("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": turn.text}]})
            line("event_msg", {"type": "user_message", "message": turn.text, "images": []})
        elif turn.role == "assistant":
            line("response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": turn.text}]})
            line("event_msg", {"type": "agent_message", "message": turn.text})
        else:
            call = f"call_{uuid.uuid4().hex[:20]}"
            line("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                                   "arguments": json.dumps({"command": ["bash", "-lc", turn.text], "workdir": spec.cwd})})
            line("response_item", {"type": "function_call_output", "call_id": call, "output": json.dumps(
                {"output": turn.output, "metadata": {"exit_code": 1 if turn.failed else 0, "duration_seconds": 0.4}})})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def write(spec: SessionSpec, claude_projects: Path, codex_home: Path) -> Path:
    return write_claude(claude_projects, spec) if spec.agent == "claude" else write_codex(codex_home, spec)


# ----------------------------------------------------------------------------------------------
# The demo library: three projects over five months, a decision revised twice, an error fixed.

U, A, C = "user", "assistant", "command"


def demo_sessions(now: datetime | None = None) -> list[SessionSpec]:
    now = now or datetime.now(timezone.utc)

    def ago(days: int, hour: int = 10) -> datetime:
        return (now - timedelta(days=days)).replace(hour=hour, minute=0, second=0, microsecond=0)

    shop, api, infra = "/home/demo/src/shop", "/home/demo/src/billing-api", "/home/demo/src/infra"
    return [
        SessionSpec("claude", shop, ago(150), [
            Turn(U, "Add web analytics to the shop site so we can see which product pages convert."),
            Turn(A, "I'll add the Google Analytics 4 snippet to the base layout, loaded on every page."),
            Turn(C, "grep -rn '</head>' templates/base.html", "templates/base.html:14:</head>"),
            Turn(A, "Decision: we use Google Analytics 4 (gtag.js) on every page, property G-SHOP2026. "
                    "Added to templates/base.html."),
        ]),
        SessionSpec("claude", shop, ago(90), [
            Turn(U, "Legal says Google Analytics needs a consent banner in the EU. Can we avoid it?"),
            Turn(A, "Plausible is cookieless, so no consent banner is needed. I'll remove gtag.js and add Plausible."),
            Turn(C, "git rm static/js/gtag-init.js", "rm 'static/js/gtag-init.js'"),
            Turn(A, "Decision changed: the analytics script is now Plausible (cookieless, no consent banner); "
                    "Google Analytics removed from templates/base.html. Plausible costs $9/month."),
        ]),
        SessionSpec("claude", shop, ago(12), [
            Turn(U, "We hardly look at the analytics dashboard. Drop Plausible and keep server logs only."),
            Turn(C, "git rm static/js/plausible.js", "rm 'static/js/plausible.js'"),
            Turn(A, "Decision: no analytics script on the shop site any more; traffic comes from the nginx "
                    "access logs via goaccess. Plausible subscription cancelled, saving $9/month."),
        ]),
        SessionSpec("codex", api, ago(60, 15), [
            Turn(U, "The billing API crashes under load with too many connections. Please investigate."),
            Turn(C, "pytest tests/test_invoices.py -x", "E   psycopg2.OperationalError: FATAL: sorry, too many "
                    "clients already\nFAILED tests/test_invoices.py::test_bulk_invoice", failed=True),
            Turn(A, "Each request opens a new connection. I'll route through PgBouncer in transaction mode "
                    "with pool_size 20 and set SQLALCHEMY_POOL_SIZE=5."),
            Turn(C, "pytest tests/test_invoices.py -x", "12 passed in 3.41s"),
            Turn(A, "Fixed: psycopg2.OperationalError 'too many clients' solved with PgBouncer "
                    "(pool_mode = transaction, default_pool_size = 20) in deploy/pgbouncer.ini."),
        ]),
        SessionSpec("codex", api, ago(30, 11), [
            Turn(U, "What does the staging server cost us? We run it on Hetzner."),
            Turn(C, "hcloud server list -o columns=name,type", "NAME          TYPE\nstaging-api   cx22"),
            Turn(A, "Staging runs on a Hetzner CX22 at €4.51/month (2 vCPU, 4 GB)."),
        ]),
        SessionSpec("codex", api, ago(3, 9), [
            Turn(U, "Staging runs out of memory during invoice exports; upgrade it."),
            Turn(C, "hcloud server change-type staging-api cx32 --keep-disk", "Server 4417 changed type to cx32"),
            Turn(A, "Upgraded staging to a Hetzner CX32 at €7.59/month (4 vCPU, 8 GB). The CX22 price no longer applies."),
        ]),
        SessionSpec("claude", infra, ago(45, 16), [
            Turn(U, "CI fails building the docker image, something about disk space."),
            Turn(C, "docker build -t shop:ci .", "ERROR: failed to copy files: write /var/lib/docker/tmp/x: "
                    "ENOSPC: no space left on device", failed=True),
            Turn(C, "docker system prune -af --volumes", "Total reclaimed space: 38.2GB"),
            Turn(A, "Fixed ENOSPC on the CI runner by pruning docker (docker system prune -af --volumes). "
                    "Added a weekly prune job to .github/workflows/maintenance.yml."),
        ]),
        SessionSpec("claude", infra, ago(20, 14), [
            Turn(U, "Migrar la base de datos de facturación a PostgreSQL 16, por favor."),
            Turn(C, "pg_upgrade --old-bindir /usr/lib/postgresql/14/bin --new-bindir /usr/lib/postgresql/16/bin --check",
                    "Clusters are compatible"),
            Turn(A, "Decidimos usar pg_upgrade con --link para migrar a PostgreSQL 16; la ventana de "
                    "mantenimiento es de 10 minutos."),
        ]),
    ]


DEMO_SEARCHES = [
    ("an error, pasted", 'jezero search "too many clients"'),
    ("a command", 'jezero search "docker system prune"'),
    ("the current decision", 'jezero search "analytics script" --project shop'),
    ("what changed since the first decision", "jezero later {first_shop_id} analytics"),
    ("another language", 'jezero search "PostgreSQL 16"'),
]


def build(folder: Path, now: datetime | None = None) -> tuple[Path, Path]:
    """Write the demo sessions; returns (claude projects folder, codex home)."""
    claude_projects, codex_home = folder / "claude" / "projects", folder / "codex"
    for spec in demo_sessions(now):
        write(spec, claude_projects, codex_home)
    return claude_projects, codex_home
