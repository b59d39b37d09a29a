"""The timer that runs Jezero unattended: a systemd user timer on Linux, a launchd agent on
macOS. Each tick runs `jezero run --due` (only connectors whose interval has elapsed; the run
lock keeps ticks from overlapping) and then `jezero health --webhook`, which alerts only when
something changed."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

UNIT = "jezero"
LAUNCHD_LABEL = "dev.jezero.run"


@dataclass
class UnitFile:
    path: Path  # where --install writes it
    text: str


def _commands(jezero: list[str], health_args: list[str]) -> tuple[list[str], list[str]]:
    return [*jezero, "run", "--due", "--quiet"], [*jezero, "health", *health_args]


def systemd(jezero: list[str], every_minutes: int, health_args: list[str], home: Path) -> list[UnitFile]:
    run, health = _commands(jezero, health_args)
    folder = home / ".config" / "systemd" / "user"
    service = f"""[Unit]
Description=Jezero: ingest due connectors, then check their health

[Service]
Type=oneshot
# A failing run must not skip the health check that reports it: "-" ignores its exit code.
ExecStart=-{_systemd_line(run)}
ExecStart={_systemd_line(health)}
# Secrets (the webhook URL, a model's API key) come from the environment or the .env beside
# the config, which jezero reads itself; never from the config.
"""
    timer = f"""[Unit]
Description=Run Jezero every {every_minutes} minutes

[Timer]
OnBootSec=2min
OnUnitActiveSec={every_minutes}min

[Install]
WantedBy=timers.target
"""
    return [UnitFile(folder / f"{UNIT}.service", service), UnitFile(folder / f"{UNIT}.timer", timer)]


def _systemd_line(args: list[str]) -> str:
    # systemd expands %-specifiers in ExecStart: a URL's %20 must reach jezero as written.
    return shlex.join(args).replace("%", "%%")


def launchd(jezero: list[str], every_minutes: int, health_args: list[str], home: Path) -> list[UnitFile]:
    run, health = _commands(jezero, health_args)
    # One shell line so the health check runs whatever the run's exit code.
    script = f"{shlex.join(run)}; {shlex.join(health)}"
    logs = home / "Library" / "Logs" / "jezero.log"
    text = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>{LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array><string>/bin/sh</string><string>-c</string><string>{escape(script)}</string></array>
  <key>StartInterval</key><integer>{every_minutes * 60}</integer>
  <key>RunAtLoad</key><true/>
  <key>StandardOutPath</key><string>{escape(str(logs))}</string>
  <key>StandardErrorPath</key><string>{escape(str(logs))}</string>
</dict>
</plist>
"""
    return [UnitFile(home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist", text)]


def enable_hint(platform: str) -> str:
    if platform == "macos":
        return f"launchctl load -w ~/Library/LaunchAgents/{LAUNCHD_LABEL}.plist"
    return (f"systemctl --user daemon-reload && systemctl --user enable --now {UNIT}.timer\n"
            "loginctl enable-linger $USER   # keep the timer running while you are logged out")


def this_platform() -> str:
    return "macos" if sys.platform == "darwin" else "linux"
