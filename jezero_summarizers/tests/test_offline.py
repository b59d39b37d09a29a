"""The offline summarizer: what it lifts from the real samples (verbatim errors, commands, files),
and its rules on small made-up sessions (scaffolding, languages, decisions, numbers, todos)."""

from __future__ import annotations

import hashlib
import time
from datetime import datetime, timezone

import pytest
import summarizer_samples
from jezero.config import SummarizerConfig
from jezero.models import Block, Segment, Session

from jezero_summarizers import extract, offline
from jezero_summarizers.offline import OfflineSummarizer, project_slug

pytestmark = pytest.mark.needs_plugins  # this distribution must be installed


def summarize(segment):
    return OfflineSummarizer().summarize(segment)[0]


def texts(summary, type_):
    return [a.text for a in summary.atoms if a.type == type_]


def verbatim(text: str, transcript: str) -> bool:
    """In the transcript as written (an over-long line is cut and ends with an ellipsis)."""
    head = text.removesuffix("…").removesuffix(" …").rstrip()
    return head in transcript or extract.squash(head) in extract.squash(transcript)


def make_segment(blocks, cwd="/home/ana/src/shop", title=None, text=None, index=0) -> Segment:
    summarizer_samples.normalize(blocks)  # what a connector does: say what each tool call did
    session = Session(id="s1", agent="claude-code", blocks=blocks, cursor_key="k", cursor_value=1, cwd=cwd, title=title,
                      started_at=datetime(2026, 1, 2, tzinfo=timezone.utc), ended_at=datetime(2026, 1, 2, 1, tzinfo=timezone.utc))
    rendered = summarizer_samples.render(blocks) if text is None else text
    return Segment(uid="t:s1:0", source="t", session=session, index=index, blocks=blocks, text=rendered,
                   content_hash=hashlib.sha256(rendered.encode()).hexdigest(), occurred_at=session.ended_at)


# -- on the real samples ----------------------------------------------------------------------------


def test_c2_finds_the_type_error_its_command_file_and_fix(local_segments):
    segment = local_segments["C2"]
    s = summarize(segment)
    assert s.title == "please fix these (after `uv run ty check`)"
    assert "error[call-non-callable]: Object of type `_WithException[Unknown, <class 'Skipped'>]` is not callable" in texts(s, "error")
    assert any(t.startswith("warning[possibly-unbound-attribute]: Attribute `version`") for t in texts(s, "error"))
    assert "uv run ty check" in texts(s, "command")
    assert "test/test_cache.py" in texts(s, "file")  # relative to the session's folder
    assert any(t.startswith("Fixed possibly-unbound-attribute warning: Added null check") for t in texts(s, "fix"))
    assert "How was `error[call-non-callable]` fixed?" in s.questions
    assert "What was changed in test/test_cache.py and why?" in s.questions
    assert s.project == "claude-code-log" and s.language == "en"
    assert "Outcome: Both type checking issues have been resolved" in s.summary


def test_x2_finds_the_failing_test_the_command_the_files_and_the_setting(local_segments):
    segment = local_segments["X2"]
    s = summarize(segment)
    # "show tools" is too short to name the session: the first real request does.
    assert s.title == "let's update the defailt context compart to 90 in env var"
    assert "AssertionError: expected undefined to deeply equal { auto: true, prune: true, …(1) }" in texts(s, "error")
    assert 'npm test -- --run src/agents/plugins/__tests__/codemie-code-reasoning.test.ts -t "Compaction Config"' in texts(s, "command")
    assert "src/agents/plugins/opencode/opencode.plugin.ts" in texts(s, "file")
    assert any("`threshold: 0.9`" in t for t in texts(s, "config"))
    # Exploration errors (rg on a missing folder) lose to the failing test.
    assert not any(t.startswith("rg: ") for t in texts(s, "error"))
    assert not any(t.startswith(("sed -n", "rg ", "git status")) for t in texts(s, "command"))
    assert s.project == "codemie-code"


def test_x1_skips_scaffolding_and_says_how_far_it_got(local_segments):
    s = summarize(local_segments["X1"])
    assert s.title == "what is current repository about? summarize purpuse and explain goals"
    assert "AGENTS.md instructions" not in s.summary and "environment_context" not in s.summary
    assert "Last command: `sed -n '1,160p' README.md`" in s.summary  # the file stops mid-turn
    assert "README.md" in texts(s, "file")
    assert s.project == "codemie-code"


def test_c3_c4_keep_the_report_and_drop_the_looking_around(local_segments):
    c3, c4 = summarize(local_segments["C3"]), summarize(local_segments["C4"])
    assert c3.title.startswith("Use the Explore task in sub-agents with Haiku model")
    assert c4.title == "Give me a comprehensive overview of the code organization in the /workspace/claude-code-log project."
    assert any("converts Claude Code transcript JSONL files into readable HTML" in t for t in texts(c4, "fact"))
    assert not texts(c4, "command")  # ls, find, tree, head, git log: nothing worth an atom
    assert "Now I have a comprehensive understanding" not in c4.summary  # the lead-in is not the outcome
    assert c3.project == c4.project == "claude_p"


def test_c1_project_of_a_worktree_is_its_repository(local_segments):
    s = summarize(local_segments["C1"])
    assert s.title.startswith("Lately, I've noticed you being very tentative.")
    assert "What's the right way to fix the instructions?" in s.summary
    assert s.project == "example-project"  # cwd .../example-project/.worktrees/streaming


@pytest.mark.parametrize("name", list(summarizer_samples.ALL))
def test_errors_commands_and_files_are_copied_not_written(local_segments, name):
    segment = local_segments[name]
    s = summarize(segment)
    for atom in s.atoms:
        if atom.type in ("error", "command", "file"):
            assert verbatim(atom.text, segment.text), (atom.type, atom.text)
    assert summarize(segment) == s  # deterministic


def test_connector_read_c2_gives_the_same_atoms(samples_dir):
    sessions = summarizer_samples.connector_sessions("claude")
    if isinstance(sessions, str):
        pytest.skip(sessions)
    (c2,) = [x for x in sessions if x.id.startswith("326189cf")]
    s = summarize(summarizer_samples.segment(c2, source="claude"))
    assert "error[call-non-callable]: Object of type `_WithException[Unknown, <class 'Skipped'>]` is not callable" in texts(s, "error")
    assert "uv run ty check" in texts(s, "command")
    assert texts(s, "file").count("test/test_cache.py") == 1  # `path (2 edits)` of MultiEdit is the same file


def test_speed_bound_on_a_long_segment_and_on_hostile_text(local_segments):
    """A guard against a pathological pattern, not the benchmark (benchmarks/offline_speed.py):
    the bounds are ten times what the code needs on a busy machine."""
    summarizer = OfflineSummarizer()
    hostile = [
        Block("user", "text", "please look at this blob " + "A" * 60_000),
        Block("tool", "tool_result", ("error " * 10_000) + "\n" + ("x/" * 20_000), tool="Bash", is_error=True),
        Block("assistant", "text", "`" * 5_000 + "a.b." * 10_000),
        Block("tool", "tool_result", "\n".join(f"src/m{i}.py:{i}: error: bad thing {i}" for i in range(3000)), tool="Bash"),
    ]
    for segment in (local_segments["X2"], local_segments["C4"], make_segment(hostile)):
        start = time.process_time()
        summarizer.summarize(segment)
        assert time.process_time() - start < 0.5


# -- rules, on made-up sessions -----------------------------------------------------------------


def test_scaffolding_and_acknowledgements_never_make_the_title():
    blocks = [
        Block("user", "text", "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
        Block("user", "text", "# AGENTS.md instructions for /x\n<INSTRUCTIONS>be nice</INSTRUCTIONS>"),
        Block("user", "text", "ok"),
        Block("user", "text", "The checkout page returns a 500 when the cart has a discount code"),
        Block("assistant", "text", "The discount was applied twice; I removed the second call in cart.py and the page loads."),
        Block("user", "text", "continue"),
    ]
    s = summarize(make_segment(blocks))
    assert s.title == "The checkout page returns a 500 when the cart has a discount code"
    assert s.summary.startswith("Asked: The checkout page returns a 500")
    assert "Outcome: The discount was applied twice" in s.summary
    assert "continue" not in s.summary and "environment_context" not in s.summary


def test_the_tool_s_name_changes_nothing_only_what_the_connector_says_it_did():
    """The summarizer reads `action`, `command` and `paths`, never a tool's name: a shell tool
    called `sh` or `run_it` gives the same atoms as one called `Bash`."""
    def blocks(shell: str, editor: str) -> list[Block]:
        return [
            Block("user", "text", "run the migrations for the billing service please"),
            Block("assistant", "tool_call", "alembic upgrade head", tool=shell, action="shell", command="alembic upgrade head"),
            Block("tool", "tool_result", "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection refused",
                  tool=shell, is_error=True, action="shell"),
            Block("assistant", "tool_call", '{"file": "billing/env.py"}', tool=editor, action="edit",
                  paths=["/home/ana/src/shop/billing/env.py"]),
        ]

    def atoms(b):
        d = extract.digest(b, cwd="/home/ana/src/shop")
        return sorted((c.type, c.text, c.score) for c in d.atoms.by_key.values())

    first = atoms(blocks("Bash", "Edit"))
    assert first == atoms(blocks("sh", "patch_file")) == atoms(blocks(None, None))
    assert ("command", "alembic upgrade head") in [(t, x) for t, x, _ in first]
    assert ("file", "billing/env.py") in [(t, x) for t, x, _ in first]
    s = OfflineSummarizer().summarize(Segment(uid="t:s1:0", source="t", session=Session(
        id="s1", agent="x", blocks=[], cursor_key="k", cursor_value=1, cwd="/home/ana/src/shop"), index=0,
        blocks=blocks("sh", "patch_file"), text="", content_hash="", occurred_at=datetime(2026, 1, 2, tzinfo=timezone.utc)))[0]
    assert "alembic upgrade head" in texts(s, "command") and "billing/env.py" in texts(s, "file")
    assert any("connection refused" in t for t in texts(s, "error"))


def test_spanish_sessions_are_recorded_in_spanish_with_their_decisions():
    blocks = [
        Block("user", "text", "Quiero que la tienda envíe los pedidos a la cola de Redis, no a la base de datos"),
        Block("assistant", "text", "Vale. ¿Prefieres Redis Streams o listas?"),
        Block("user", "text", "Vamos a usar Redis Streams en lugar de listas, porque necesitamos reintentos."),
        Block("assistant", "tool_call", "pytest tests/test_orders.py -q", tool="Bash"),
        Block("tool", "tool_result", "3 passed in 0.41s", tool="Bash"),
        Block("assistant", "text", "Hecho: los pedidos se publican en el stream `orders` con un máximo de 512 MB de memoria para Redis."),
    ]
    s = summarize(make_segment(blocks))
    assert s.language == "es"
    assert s.summary.startswith("Pedido: Quiero que la tienda")
    assert "Resultado:" in s.summary
    assert "Vamos a usar Redis Streams en lugar de listas, porque necesitamos reintentos." in texts(s, "decision")
    assert any(q.startswith("¿Qué se decidió sobre") for q in s.questions)
    assert any("512 MB" in t for a in ("number", "config", "fact") for t in texts(s, a))


def test_english_decisions_numbers_and_todos():
    blocks = [
        Block("user", "text", "We need hosting for the docs site. Netlify costs $19/month per member, which is too much."),
        Block("assistant", "text", "Cloudflare Pages is free for this size and builds in about 30 s."),
        Block("user", "text", "Let's use Cloudflare Pages instead of Netlify."),
        Block("assistant", "tool_call", "npx wrangler pages deploy ./site", tool="Bash"),
        Block("tool", "tool_result", "Deployment complete", tool="Bash"),
        Block("assistant", "tool_call", "[completed] Move the docs to Cloudflare Pages\n[pending] Point docs.example.com at the new site", tool="TodoWrite"),
        Block("assistant", "text", "Deployed with `npx wrangler pages deploy`.\n\nNext steps:\n- Point docs.example.com at the new site\n- Remove the Netlify project"),
    ]
    s = summarize(make_segment(blocks))
    assert s.language == "en"
    assert "Let's use Cloudflare Pages instead of Netlify." in texts(s, "decision")
    assert any("$19/month" in t for t in texts(s, "number"))
    assert "Point docs.example.com at the new site" in texts(s, "todo")
    assert "npx wrangler pages deploy ./site" in texts(s, "command")
    assert "What was decided about Cloudflare Pages Netlify?" in s.questions or any("decided" in q for q in s.questions)


def test_a_short_request_carries_what_it_points_at():
    blocks = [
        Block("user", "tool_call", "npm run build", tool="Bash"),
        Block("tool", "tool_result", "src/app.ts:3:5 - error TS2322: Type 'string' is not assignable to type 'number'.", tool="Bash"),
        Block("user", "text", "fix it"),
        Block("assistant", "text", "Fixed the type of `count` in src/app.ts; the build passes now."),
    ]
    s = summarize(make_segment(blocks))
    assert s.title == "fix it (after `npm run build`)"
    assert any("error TS2322" in t for t in texts(s, "error"))
    assert "npm run build" in texts(s, "command")


def test_empty_and_blockless_segments_still_give_a_valid_summary():
    s = summarize(make_segment([], title=None, text=""))
    assert s.title and s.summary and len(s.questions) == 3 and s.atoms == []
    s = summarize(make_segment([], title="Refactor the exporter", text="", index=2))
    assert s.title == "Refactor the exporter (part 3)"
    # An older stored original without blocks: its text (minus header lines) is read as one request.
    s = summarize(make_segment([], text="[user]\nWhy does `make release` fail with ENOSPC on the CI runner?\n"))
    assert s.title == "Why does `make release` fail with ENOSPC on the CI runner?"
    assert any("ENOSPC" in t for t in texts(s, "error"))


def test_output_language_does_not_apply():
    """The offline summarizer cannot translate: it records the transcript's language."""
    built = offline.build(SummarizerConfig(output_language="es", model="ignored", max_in_flight=8))
    blocks = [Block("user", "text", "Why is the nightly backup job failing on the staging server?")]
    s = built.summarize(make_segment(blocks))[0]
    assert s.language == "en" and s.summary.startswith("Asked:")
    assert built.name == "offline" and built.model is None and built.max_in_flight == 1


@pytest.mark.parametrize(("cwd", "slug"), [
    ("/Users/dain/workspace/claude-code-log", "claude-code-log"),
    ("/src/experiments/claude_p", "claude_p"),
    ("/home/ana/src/Shop Front", "shop-front"),
    ("/home/ana/work/api/.claude/worktrees/agent-1a2b", "api"),
    ("/x/example-project/.worktrees/streaming", "example-project"),
    ("C:\\Users\\ana\\code\\Billing", "billing"),
    ("/home/ana", None),
    ("/", None),
    (None, None),
])
def test_project_slug_from_the_working_folder(cwd, slug):
    assert project_slug(cwd) == slug


def test_a_later_part_of_a_long_session_says_what_it_continues_and_what_it_did():
    first = [
        Block("user", "text", "Migrate the billing service from Flask to FastAPI"),
        Block("assistant", "text", "Starting with the routes."),
    ]
    later = [
        Block("assistant", "tool_call", "pytest tests/billing -q", tool="Bash"),
        Block("tool", "tool_result", "E   ImportError: cannot import name 'Blueprint' from 'fastapi'", tool="Bash", is_error=True),
        Block("assistant", "text", "The last Blueprint import is gone from billing/routes.py and the tests pass now."),
    ]
    segment = make_segment(later, index=3)
    segment.session.blocks = first + later  # the session holds every part's blocks
    s = summarize(segment)
    assert s.title.startswith("Migrate the billing service from Flask to FastAPI — ImportError")
    assert s.summary.startswith("Continues: Migrate the billing service from Flask to FastAPI.")
    assert "pytest tests/billing -q" in texts(s, "command")
