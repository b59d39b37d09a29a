"""Jezero connector type 'jotter': sessions of the (made-up) Jotter agent, one JSONL file per
session in ~/.jotter/sessions, each line {"at", "who": "you" | "jotter" | "run", "text", and for
"run": "output", "exit"}. Everything it needs comes from `jezero.plugin`."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from jezero.plugin import (Block, DemoSession, FolderPath, Options, Session, clip, expand, file_signature, hookimpl,
                           parse_time, read_jsonl, read_options, same_signature)

DEFAULT_PATH = "~/.jotter/sessions"


class JotterOptions(Options):
    path: FolderPath | None = None  # the folder of session files (default ~/.jotter/sessions)


class JotterConnector:
    def __init__(self, options: dict, context):
        opts = read_options(JotterOptions, options, "jotter")
        self.root, self.context = opts.path or expand(DEFAULT_PATH), context

    def read(self, cursor: dict):
        for path in sorted(self.root.glob("*.jsonl")):
            signature = file_signature(path)  # [size, mtime, check]: JSON, as a cursor value must be
            if same_signature(cursor.get(path.name), signature):
                continue  # unchanged since the last run
            blocks, cwd = [], None
            for _, line in read_jsonl(path).records:  # a half-written last line waits for the next run
                time, text, who = parse_time(line.get("at")), str(line.get("text", "")), line.get("who")
                cwd = cwd or line.get("cwd")
                if who in ("you", "jotter"):
                    blocks.append(Block("user" if who == "you" else "assistant", "text", text, time))
                elif who == "run":  # Jotter's shell tool: only this connector knows it is one
                    blocks.append(Block("assistant", "tool_call", text, time, tool="run", action="shell", command=text))
                    blocks.append(Block("tool", "tool_result", clip(str(line.get("output", ""))), time, tool="run",
                                        action="shell", is_error=line.get("exit", 0) != 0))
            times = [b.time for b in blocks if b.time]
            yield Session(id=path.stem, agent="jotter", blocks=blocks, cursor_key=path.name, cursor_value=signature,
                          cwd=cwd, started_at=min(times, default=None), ended_at=max(times, default=None))


def discover() -> list[dict]:
    """Jotter's store on this computer, if it has one (for `jezero up`)."""
    root = expand(DEFAULT_PATH)
    return [{"path": str(root)}] if root.is_dir() else []


def demo(folder: Path, sessions: list[DemoSession]) -> dict:
    """The made-up sessions of `jezero up --demo`, written as Jotter writes sessions."""
    folder.mkdir(parents=True, exist_ok=True)
    for spec in sessions:
        lines, at = [], spec.started
        for turn in spec.turns:
            at += timedelta(seconds=30)
            line = {"at": at.isoformat(), "cwd": spec.cwd, "text": turn.text,
                    "who": {"user": "you", "assistant": "jotter"}.get(turn.role, "run")}
            if line["who"] == "run":
                line.update(output=turn.output, exit=1 if turn.failed else 0)
            lines.append(json.dumps(line) + "\n")
        (folder / f"{spec.id}.jsonl").write_text("".join(lines))
    return {"path": str(folder)}


@hookimpl
def register_connector_types(register):
    register("jotter", JotterConnector, description="Jotter sessions (~/.jotter/sessions)",
             options=JotterOptions, discover=discover, demo=demo)
