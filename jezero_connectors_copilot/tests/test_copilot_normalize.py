"""`jezero resummarize` reads blocks back from the stored original, where only the role, kind,
tool name, error flag and text survive: `normalize` must say again what each call did, as the
reader said it, results included (they name their call's command and paths)."""

from __future__ import annotations

import json

from jezero.ingest.segments import parse_rendered, render_block
from jezero_connectors_copilot import normalize


def said(blocks):
    return [(b.kind, b.tool, b.action, b.command, b.paths, b.is_error) for b in blocks if b.text.strip()]


def stored(blocks):
    """The blocks as resummarize gets them: rendered into the original, parsed back."""
    return parse_rendered("".join(render_block(b) for b in blocks if b.text.strip()))


def test_normalize_says_what_the_reader_said(copilot, rec):
    copilot.write([
        rec.start(), rec.prompt("fix the tests", 1),
        rec.answer("", 2, [rec.request("c1", "bash", {"command": "npm test", "description": "run tests"}),
                           rec.request("c2", "view", {"path": "/p/src/app.ts"}),
                           rec.request("c3", "str_replace_editor", {"command": "view", "path": "/p/a"}),
                           rec.request("c4", "create", json.dumps({"path": "/p/NOTES.md", "file_text": "x"})),
                           rec.request("c5", "apply_patch", "*** Begin Patch\n*** Update File: /p/b.py\n@@\n-x\n+y\n*** End Patch"),
                           rec.request("c6", "bash", {"command": "npm run lint"})]),
        rec.done("c1", 3, "2 failing\n<exited with exit code 1>"),
        rec.done("c2", 4, "export const app = 1"),
        rec.done("c3", 5, "a file"),
        rec.done("c4", 6, "created"),
        rec.done("c5", 7, "patched"),
        rec.done("c6", 8, "clean\n<exited with exit code 0>"),
        rec.answer("Fixed the two failing tests.", 9),
    ])
    [s] = copilot.read()
    again = normalize(stored(s.blocks))
    assert said(again) == said(s.blocks)
    results = [(b.tool, b.action, b.command, b.is_error) for b in again if b.kind == "tool_result"]
    assert results[0] == ("bash", "shell", "npm test", True) and results[-1] == ("bash", "shell", "npm run lint", False)
    assert results[2] == ("str_replace_editor", "read", None, False)  # the call's `command: view` said so


def test_a_prompt_drops_the_calls_left_unanswered():
    blocks = normalize(parse_rendered("[assistant tool_call bash]\nnpm test\n[user]\nstop, run the linter\n"
                                      "[assistant tool_call bash]\nnpm run lint\n[tool tool_result bash]\nclean\n"))
    assert [b.command for b in blocks if b.kind == "tool_result"] == ["npm run lint"]
