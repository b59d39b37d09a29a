"""Made-up sessions for `jezero up --demo`: what they say (three projects, a decision that
changes twice, an error and its fix) and which connector type writes each one.

The core knows no agent's format: each connector type that offers a demo writer
(`register(..., demo=...)`) writes the sessions handed to it in its agent's real on-disk format
and returns the options that read them, so the demo goes through the same connectors, pipeline
and summarizer as a real store, with any one connector distribution installed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


@dataclass
class Turn:
    """One step of a made-up session: a prompt, an answer, or a command with its output."""

    role: str  # "user" | "assistant" | "command"
    text: str  # the prompt, the answer, or the command line
    output: str = ""  # for a command
    failed: bool = False  # for a command: a non-zero exit


@dataclass
class SessionSpec:
    """A made-up session. `agent` is the connector type that should write it when installed;
    otherwise another installed type writes it in its own format."""

    agent: str  # a connector type name: "claude", "codex", ...
    cwd: str
    started: datetime
    turns: list[Turn]
    branch: str = "main"
    model: str | None = None
    id: str = field(default_factory=lambda: str(uuid.uuid4()))


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


def build(folder: Path, types: dict[str, Any], now: datetime | None = None) -> list[tuple[str, dict]]:
    """Write the demo sessions under `folder`, each by the connector type it names or, when that
    type is not installed, by the first installed type (by name) that has a demo writer. Returns
    (type name, options) for each type that wrote sessions; empty when no type can."""
    writers = {name: t for name, t in sorted(types.items()) if t.demo is not None and t.build is not None}
    if not writers:
        return []
    fallback = next(iter(writers))
    groups: dict[str, list[SessionSpec]] = {}
    for spec in demo_sessions(now):
        groups.setdefault(spec.agent if spec.agent in writers else fallback, []).append(spec)
    written = []
    for name, specs in groups.items():
        try:
            written.append((name, writers[name].demo(folder / name, specs)))
        except Exception as e:  # a plugin's bug: name the plugin, not a traceback
            raise DemoWriterFailed(f"connector type {name!r} could not write the demo sessions: "
                                   f"{type(e).__name__}: {e}") from e
    return written


class DemoWriterFailed(RuntimeError):
    pass
