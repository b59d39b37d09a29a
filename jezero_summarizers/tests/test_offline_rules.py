"""The offline summarizer's rules for errors, files, decisions, questions and the summary, each on a
small hand-written session: which line of a failed command is its error, what a pasted error gives,
what noise is left out, which paths of a command's output count."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

import pytest
from jezero.models import Block, Segment, Session

from jezero_summarizers import extract
from jezero_summarizers.offline import OfflineSummarizer

pytestmark = pytest.mark.needs_plugins  # this distribution must be installed


def segment(blocks, cwd="/home/ana/src/ledger") -> Segment:
    session = Session(id="r1", agent="claude-code", blocks=blocks, cursor_key="k", cursor_value=1, cwd=cwd,
                      started_at=datetime(2026, 3, 2, tzinfo=timezone.utc), ended_at=datetime(2026, 3, 2, 1, tzinfo=timezone.utc))
    text = "\n".join(f"[{b.role}]\n{b.text}" for b in blocks)
    return Segment(uid="t:r1:0", source="t", session=session, index=0, blocks=blocks, text=text,
                   content_hash=hashlib.sha256(text.encode()).hexdigest(), occurred_at=session.ended_at)


def summarize(blocks, **kw):
    return OfflineSummarizer().summarize(segment(blocks, **kw))[0]


def texts(summary, type_):
    return [a.text for a in summary.atoms if a.type == type_]


def run(command, output, failed=False, tool="Bash"):
    """A shell call and its output, as a connector gives them: what it did is in `action`."""
    return [Block("assistant", "tool_call", command, tool=tool, action="shell", command=command),
            Block("tool", "tool_result", output, tool=tool, is_error=failed, action="shell")]


TRACEBACK = """Traceback (most recent call last):
  File "/home/ana/src/ledger/jobs/export.py", line 41, in run
    rows = fetch(batch)
  File "/home/ana/src/ledger/.venv/lib/python3.12/site-packages/lakehouse/reader.py", line 9, in fetch
    raise SchemaDrift(msg)
lakehouse.errors.SchemaDrift: column amount changed from decimal to text"""


# -- which line is the error ----------------------------------------------------------------------


def test_a_traceback_gives_its_exception_line_whatever_the_exception_is_called():
    s = summarize([Block("user", "text", "The nightly export job crashes since Monday."),
                   *run("python -m jobs.export --day 2026-03-01", TRACEBACK, failed=True),
                   Block("assistant", "text", "Fixed: the export casts amount back to decimal before writing.")])
    errors = texts(s, "error")
    assert errors[0] == "lakehouse.errors.SchemaDrift: column amount changed from decimal to text"
    assert not any(e.startswith(("Traceback", "File ")) for e in errors)
    assert "How was `SchemaDrift: column amount changed from decimal to text` fixed?" in s.questions
    # a project frame of the traceback names a file; an installed package's frame does not
    assert "jobs/export.py" in texts(s, "file")
    assert not any("site-packages" in f for f in texts(s, "file"))


def test_a_chained_traceback_puts_the_exception_that_surfaced_first():
    chained = ("Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n    d['k']\nKeyError: 'k'\n\n"
               "The above exception was the direct cause of the following exception:\n\n" + TRACEBACK)
    lines = extract.error_lines(chained)
    assert [e.text for e in lines][:2] == ["KeyError: 'k'", "lakehouse.errors.SchemaDrift: column amount changed from decimal to text"]
    assert max(lines, key=lambda e: e.strength).text.startswith("lakehouse.errors.SchemaDrift")


def test_a_failed_command_gives_its_error_line_not_the_header_before_it():
    output = ("Resolving dependencies\nINFO  [deps] Using lock file deps.lock\n"
              "INFO  [deps] error budget: 3 retries\n"
              "[!] Unable to satisfy the requirement \"libfoo (>= 2.0)\" for target app")
    s = summarize([Block("user", "text", "deps install is broken on the build box"), *run("deps install", output, failed=True)])
    assert texts(s, "error") == ['[!] Unable to satisfy the requirement "libfoo (>= 2.0)" for target app']


def test_without_error_marks_the_line_that_says_what_went_wrong_stands_in():
    output = "Analyzing project\nChecking lock file\nlock file mismatch: expected 3 entries, found 4\nProcess exited with code 1"
    assert extract.failure_line(output) == "lock file mismatch: expected 3 entries, found 4"
    output = "Analyzing project\nChecking lock file\nsee deps.lock for the entries\nExit code: 2"
    assert extract.failure_line(output) == "see deps.lock for the entries"  # the last line that says anything
    s = summarize([Block("user", "text", "the lock check fails in CI"),
                   *run("deps check", "Analyzing project\nlock file mismatch: expected 3 entries, found 4", failed=True)])
    assert texts(s, "error") == ["lock file mismatch: expected 3 entries, found 4"]


def test_an_error_pasted_in_the_prompt_is_an_atom_and_reaches_the_title():
    prompt = ("The settings page goes blank when I open it a second time. Console:\n\n"
              "Error: Maximum update depth exceeded.\n\n"
              "    at SettingsPanel (src/settings/SettingsPanel.tsx:40:7)\n    at renderWithHooks (react-dom.js:1)")
    s = summarize([Block("user", "text", prompt),
                   Block("assistant", "text", "Fixed the effect in src/settings/SettingsPanel.tsx that set state on every render.")])
    assert "Error: Maximum update depth exceeded." in texts(s, "error")
    assert "Error: Maximum update depth exceeded" in s.title
    assert "at SettingsPanel" not in s.summary  # the pasted stack stays out of the summary
    assert s.questions[0] == "How was `Error: Maximum update depth exceeded.` fixed?"


def test_a_pasted_traceback_does_not_fill_the_summary():
    prompt = f"Exports fail every night. Sentry shows:\n\nInternal Server Error: /exports/\n{TRACEBACK}"
    s = summarize([Block("user", "text", prompt), Block("assistant", "text", "The exporter now casts amount to decimal.")])
    assert s.summary.startswith("Asked: Exports fail every night. Sentry shows: lakehouse.errors.SchemaDrift: column amount")
    assert 'File "' not in s.summary and "Traceback" not in s.summary and "Internal Server Error" not in s.summary
    assert "SchemaDrift" in s.title


# -- noise -----------------------------------------------------------------------------------------


def test_log_lines_that_differ_only_in_timestamp_and_ids_are_one_error():
    log = "\n".join([
        "2026-03-01 02:00:01,112 ERROR   [worker] amqp.exceptions.ChannelClosed: (404) NOT_FOUND - no queue 'exports'",
        "2026-03-01 02:00:07,931 INFO    [worker] Task jobs.export[4f2a91c0] received",
        "2026-03-01 02:00:09,404 ERROR   [worker] amqp.exceptions.ChannelClosed: (404) NOT_FOUND - no queue 'exports'",
        "02:01:12 ERROR   [worker] amqp.exceptions.ChannelClosed: (404) NOT_FOUND - no queue 'exports'",
        "2026-03-01 02:02:00,001 INFO    [worker] error budget left: 2",
    ])
    s = summarize([Block("user", "text", "exports stopped going out"), *run("docker compose logs worker", log)])
    assert texts(s, "error") == ["amqp.exceptions.ChannelClosed: (404) NOT_FOUND - no queue 'exports'"]
    assert extract.error_key("2026-03-01 02:00:01,112 ERROR [w] Task x[4f2a91c0] lost") == \
        extract.error_key("2026-03-02 09:10:11,000 ERROR [w] Task x[77b3e0d1] lost")


def test_warnings_summaries_and_deprecations_do_not_take_the_error_places():
    build = "\n".join([
        "   Compiling ledger v0.4.0",
        "warning: unused variable: `total`", "warning: unused import: `std::fmt`", "warning: field `id` is never read",
        "WARNING: The option 'legacy-resolver' is deprecated and will be removed.",
        "error[E0308]: mismatched types",
        "============ 1 failed, 41 passed, 2 warnings in 3.20s ============",
        "test result: FAILED. 41 passed; 1 failed; 0 ignored",
    ])
    errors = texts(summarize([Block("user", "text", "the ledger crate stopped building"), *run("cargo build", build, failed=True)]), "error")
    assert errors[0] == "error[E0308]: mismatched types"
    assert sum(e.startswith("warning") for e in errors) == 1
    assert not any("deprecated" in e or "passed" in e for e in errors)


def test_a_message_wrapped_over_two_lines_is_kept_whole():
    output = ("error: could not find a linker named `mold` in the search path or\n"
              "       in the directories listed by MOLD_PATH.\n\n"
              "  --> .cargo/config.toml:3:1")
    assert [e.text for e in extract.error_lines(output)] == [
        "error: could not find a linker named `mold` in the search path or in the directories listed by MOLD_PATH."]


def test_a_pytest_failure_is_kept_once_with_its_test_id():
    output = ("E       AssertionError: assert 199 == 200\n"
              "tests/test_totals.py:12: AssertionError\n"
              "FAILED tests/test_totals.py::test_rounding - AssertionError: assert 199 == 200\n"
              "===== 1 failed, 9 passed in 0.52s =====")
    errors = texts(summarize([Block("user", "text", "totals are off by one cent"), *run("pytest -q", output, failed=True)]), "error")
    assert len([e for e in errors if "assert 199 == 200" in e]) == 1
    assert not any("passed" in e for e in errors)


# -- files a command's output names ----------------------------------------------------------------


def test_a_file_only_a_grep_printed_is_kept_below_the_touched_ones():
    grep = ("templates/mail/receipt.txt:4:Paid at {{ paid_at|date:'H:i' }}\n"
            "templates/mail/receipt.html:22:<td>{{ paid_at|date:'H:i' }}</td>")
    s = summarize([
        Block("user", "text", "Receipts show the payment time in UTC instead of local time."),
        *run("grep -rn 'paid_at' templates/mail/", grep),
        Block("assistant", "tool_call", "/home/ana/src/ledger/billing/mail.py", tool="Edit", action="edit",
              paths=["/home/ana/src/ledger/billing/mail.py"]),
        Block("assistant", "text", "billing/mail.py now renders receipts inside timezone.override(customer.tz)."),
    ])
    files = texts(s, "file")
    assert files[0] == "billing/mail.py"
    assert "templates/mail/receipt.html" in files and "templates/mail/receipt.txt" in files


def test_git_status_and_diff_stat_name_files_and_a_long_listing_does_not():
    stat = " .github/workflows/deploy.yml | 4 ++--\n ops/runner.tf | 12 +++++++-----\n 2 files changed, 9 insertions(+), 7 deletions(-)"
    listing = "\n".join(f"./src/module_{i}/part_{i}.py" for i in range(30))
    s = summarize([Block("user", "text", "Move the deploy job to the new runner pool."),
                   *run("sed -i 's/pool-a/pool-b/' .github/workflows/deploy.yml ops/runner.tf && git diff --stat", stat),
                   *run("find . -name '*.py'", listing)])
    files = texts(s, "file")
    assert ".github/workflows/deploy.yml" in files and "ops/runner.tf" in files
    assert not any("module_" in f for f in files)
    assert extract.output_paths("a/b.py\n[... 74 characters cut ...]\nrs/half.py\nc/d.py\n") == ["c/d.py"]


def test_paths_in_prose_keep_dot_folders_and_drop_qualified_names():
    assert extract.mentioned_paths("see .github/workflows/ci.yml and app/money.py::round_money") == [
        ".github/workflows/ci.yml", "app/money.py"]
    assert extract.strip_markdown("**Use** `prefetch_related('variants__prices')` in __init__.py") == \
        "Use `prefetch_related('variants__prices')` in __init__.py"


# -- decisions, numbers and questions --------------------------------------------------------------


def test_a_comparison_is_not_a_decision_and_the_stated_outcome_is():
    s = summarize([
        Block("user", "text", "Invoices take forever to render, move them off the old renderer."),
        *run("pytest tests/test_render.py -q", "12 passed in 0.8s"),
        Block("assistant", "text", "Invoice rendering now uses Typst through `render_invoice`. "
                                   "Renders take 0.4 s instead of 9 s."),
    ])
    decisions = texts(s, "decision")
    assert "Invoice rendering now uses Typst through `render_invoice`." in decisions
    assert not any("instead of 9" in d for d in decisions)
    assert any(q.startswith("What was decided about") and "Typst" in q for q in s.questions)


def test_questions_name_what_the_title_does_not_instead_of_filler():
    s = summarize([
        Block("user", "text", "Receipts show the payment time in UTC instead of local time."),
        *run("pytest tests/test_mail.py -q", "7 passed in 0.3s"),
        Block("assistant", "text", "The mailer runs in a Celery worker, so no timezone is active; `timezone.override` "
                                   "around `render_receipt` fixes it, with `customer.tz` as the zone."),
        Block("assistant", "text", "Receipts now render in the customer's zone via `timezone.override` in billing/mail.py."),
    ])
    assert 3 <= len(s.questions) <= 6
    # names the item lacks first (the answer's functions), then those the title lacks
    assert s.questions[0] == "What was found about render_receipt and customer.tz?"
    assert s.questions[1] == "What was found about timezone.override and billing/mail.py?"
    # a question that only repeats an atom ("What does `pytest ...` do here?") only fills up to three
    assert not any(q.startswith("What does `") for q in s.questions)


def test_a_sentence_about_an_error_is_not_an_error_message():
    prose = "Programs that build big lists run out of memory, and the connection refused message is gone."
    assert extract.error_lines(prose, prose=True) == []
    assert [e.text for e in extract.error_lines("Why does `make` fail with ENOSPC on the runner?", prose=True)] == [
        "Why does `make` fail with ENOSPC on the runner?"]
    pasted = "Deploys stopped this morning:\n    fatal: could not read Username for 'https://git.example.com'"
    assert [e.text for e in extract.error_lines(pasted, prose=True)] == [
        "fatal: could not read Username for 'https://git.example.com'"]
    after_colon = 'Payments fail from the cluster:\nPost "https://api.example.com/v1/pay": dial tcp: i/o timeout'
    assert [e.text for e in extract.error_lines(after_colon, prose=True)] == [
        'Post "https://api.example.com/v1/pay": dial tcp: i/o timeout']


# -- what people stated, across the whole segment ----------------------------------------------------


def chat(lines):
    """A chat written as a transcript: Ines's lines are the user turns, Raf's the answers, each
    opening with the speaker's name."""
    return [Block("user" if who == "Ines" else "assistant", "text", f"{who}: {text}") for who, text in lines]


ROUTINE = [("Ines", "Hi there"), ("Raf", "Hey"),
           ("Ines", "The tram was slow today. I have a yoga class on Tuesday, as usual."),
           ("Raf", "We ate soup and read. My sister phoned, nothing new."),
           ("Ines", "I have a yoga class on Thursday, as usual. The tram was slow again."),
           ("Raf", "Work is dull, the printer jammed twice.")]


def test_a_fact_said_once_in_the_middle_of_a_chat_is_kept_and_a_routine_is_not():
    lines = [*ROUTINE * 3, ("Raf", "Big news: we adopted a three-legged cat from the shelter! We named her Quince."),
             *ROUTINE * 3, ("Ines", "Bye for now")]
    s = summarize(chat(lines), cwd="/home/ines/chats/raf")
    facts = texts(s, "fact")
    assert "Big news: we adopted a three-legged cat from the shelter!" in facts
    assert "We named her Quince." in facts
    assert not any("yoga" in f for f in facts)  # said again with another day: a routine, not news
    assert not any(f.startswith(("Raf:", "Ines:")) for f in facts)  # the speaker's name is not the fact
    assert "What did Raf say about Quince?" in s.questions  # who said it, and what it named


def test_a_date_or_a_new_job_stated_late_in_a_long_chat_is_kept():
    lines = [*ROUTINE * 8, ("Ines", "I accepted the offer from Lantern Robotics, I start there on the 3rd of March."),
             *ROUTINE * 2]
    facts = texts(summarize(chat(lines), cwd="/home/ines/chats/raf"), "fact")
    assert facts[0] == "I accepted the offer from Lantern Robotics, I start there on the 3rd of March."


def test_questions_hedges_and_small_talk_state_nothing():
    lines = [("Ines", "Maybe one day we will move to Porto, who knows."), ("Raf", "Did you book the trip to Oslo?"),
             ("Ines", "Haha, the cat knocked a glass over again."), ("Raf", "Sorry, slow reply today.")]
    assert texts(summarize(chat(lines), cwd="/home/ines/chats/raf"), "fact") == []


def test_statements_fill_only_the_places_the_other_atoms_leave():
    """In an agent's session the errors, commands and files come first; no speaker is named, so
    no question about what someone said."""
    s = summarize([Block("user", "text", "The nightly export job crashes since Monday."),
                   *run("python -m jobs.export --day 2026-03-01", TRACEBACK, failed=True),
                   Block("assistant", "text", "Fixed: the export casts amount back to decimal before writing. "
                                              "I moved the cast to jobs/export.py on the 2nd of March.")])
    assert texts(s, "error") and s.atoms[0].type == "error"
    assert not any(q.startswith("What did") for q in s.questions)
