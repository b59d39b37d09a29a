"""The digest of a segment's blocks: the requests, the outcome and the atom candidates. It reads
blocks as connectors make them, by what each tool call did (`action`, `command`, `paths`), never
by a tool's name."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jezero.plugin import Block

from .candidates import Candidates
from .commands import _LISTS_PATHS, command_atom, command_weight
from .errors import WEAK, ErrorLine, error_lines, exit_code, failure_line, request_prose
from .files import OUTPUT_PATH_SCORE, OUTPUT_PATHS_FOCUSED, is_vendor_path, mentioned_paths, norm_path, output_paths
from .salient import Statement, statements
from .statements import _ENV_ASSIGN, _statements, todo_items
from .text import (_INTERJECTION, FENCE, content_words, detect_language, is_ack, is_scaffolding, is_specific,
                   sentences)

# Prose read for decisions, fixes, settings, numbers and paths: the requests first, then the final
# answer, then the other answers from the newest back. A segment that is all discussion would
# otherwise cost three times a typical one; twelve atoms never need more than this.
PROSE_CHARS = 24_000
# Results that are reports or file contents, not program output: error words in them are prose or code.
QUIET_ACTIONS = frozenset({"read", "edit", "write", "search", "plan", "subagent", "fetch"})


@dataclass
class Request:
    text: str
    order: int
    weak: bool  # a few words ("please fix these"): needs its context to mean anything
    context: str | None  # the command or error the person was looking at, for a weak request
    error: str | None = None  # the main error line the person pasted into it


@dataclass
class Digest:
    requests: list[Request] = field(default_factory=list)
    outcome: str | None = None  # the last substantive assistant text
    last_command: str | None = None
    user_texts: list[str] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    atoms: Candidates = field(default_factory=Candidates)
    edited: list[str] = field(default_factory=list)
    outcome_sentences: list[str] = field(default_factory=list)
    language: str | None = None
    said: list[Statement] = field(default_factory=list)  # what people stated, best first (salient.py)


_NARRATION_LEAD = re.compile(r"^(?:now |next,? |ok(?:ay)?,? |perfect[!.,]? |great[!.,]? )?(?:let me|i'll|i will|i'm going to|i have|i now have|i've got)\b", re.I)


def digest(blocks: list[Block], cwd: str | None = None) -> Digest:
    d = Digest()
    atoms = d.atoms
    pending: list[str] = []  # shell commands waiting for their result
    errored: set[str] = set()
    last_todo: str | None = None
    context: str | None = None  # what the person last saw: for a short request that follows
    assistant: list[tuple[int, str]] = []

    def add_file(raw: str, score: float, order: int, edited: bool = False, repeat: bool = True) -> None:
        path = norm_path(raw, cwd)
        if path and (score >= 1.5 or not is_vendor_path(path)):  # an installed package's file, unless opened
            atoms.add("file", path, score, order, repeat=repeat)
            if edited and path not in d.edited:
                d.edited.append(path)

    def add_errors(text: str, order: int, bonus: float, failed: bool, prose: bool = False) -> str | None:
        """The errors of one message or output; returns the main one (None if it reports none).
        For a failed command whose output has no error's marks, the line that says what went
        wrong stands in."""
        nonlocal context
        best: ErrorLine | None = None
        for e in error_lines(text, prose):
            atoms.add("error", e.text, e.strength + bonus, order, e.tag)
            if e.tag != "warning" and (best is None or e.strength > best.strength):
                best = e
        if failed and (best is None or best.strength < WEAK):
            line = failure_line(text)
            if line:
                atoms.add("error", line, WEAK + bonus, order)
                best = ErrorLine(line, WEAK)
        if best is not None:
            context = context or best.text
        return best.text if best else None

    for order, block in enumerate(blocks):
        text = block.text or ""
        # What the connector says the call did; a result without one is output of unknown origin,
        # read like a shell's.
        action = block.action or ""
        shell = action == "shell"
        if block.kind == "text" and block.role == "user":
            if is_scaffolding(text):
                continue
            d.user_texts.append(text)
            if is_ack(text):
                continue
            weak = len(text) < 80 and len(content_words(text)) < 3
            request = Request(text, order, weak, context if weak else None)
            d.requests.append(request)
            context = None
            request.error = add_errors(text, order, 1.0, False, prose=True)  # a pasted error is what the person cares about
            for raw in mentioned_paths(request_prose(text)):
                add_file(raw, 1.0, order)
            paths = output_paths(text) if "\n" in text else ()  # the frames of a pasted traceback, a pasted grep
            for raw in paths if len(paths) <= OUTPUT_PATHS_FOCUSED else ():
                add_file(raw, OUTPUT_PATH_SCORE, order, repeat=False)
        elif block.kind == "text" and block.role == "assistant":
            d.assistant_texts.append(text)
            assistant.append((order, text))
        elif block.kind == "tool_call":
            if shell:
                command = (block.command or "").strip()
                if not command:
                    continue  # a poll of a command already running, or nothing run
                weight = command_weight(command) + (1.0 if block.role == "user" else 0.0)
                atoms.add("command", command_atom(command), weight, order)
                pending.append(command)
                d.last_command = context = command
                for raw in mentioned_paths(command):
                    add_file(raw, 0.5, order)
                for m in _ENV_ASSIGN.finditer(command):
                    atoms.add("config", m.group(1), 1.0, order)
            elif action in ("edit", "write"):
                for raw in block.paths:
                    add_file(raw, 4.0, order, edited=True)
            elif action in ("read", "search"):
                for raw in block.paths:
                    add_file(raw, 1.5, order)
            elif action == "plan":
                last_todo = text
        elif block.kind == "tool_result":
            if action == "search" and not block.is_error:
                paths = output_paths(text)
                for raw in paths if len(paths) <= OUTPUT_PATHS_FOCUSED else ():  # a long listing is no finding
                    add_file(raw, OUTPUT_PATH_SCORE, order, repeat=False)
            if action in QUIET_ACTIONS and not block.is_error:
                continue
            command = None
            if block.command:  # the connector knows which command this is the output of
                command = block.command
            elif (shell or not action) and pending:
                command = pending.pop(0)
            # Output of a look around (rg, cat, ls) quotes code and logs: its "errors" are rarely
            # the session's; output of a build or a test run is where they are.
            weight = command_weight(command) if command else 1.0
            bonus = (1.0 if block.is_error else 0.0) + (1.0 if block.role == "user" else 0.0)
            bonus += -1.5 if weight == 0.0 else (0.5 if weight >= 2.0 else 0.0)
            code = exit_code(text) if shell else None
            failed = block.is_error or (code is not None and code != 0)
            bad = add_errors(text, order, bonus, failed)
            if command and (failed or bad):
                errored.add(command)
            # Paths a search or a listing prints (grep, find, ls, git status / diff), and those of a
            # failure (a failing test, a traceback's frames): named by the output, not touched, so
            # below every other source. A build log, an install, a file's contents are not read for them.
            if (shell or not action) and (failed or bad or _LISTS_PATHS.search(command or "")):
                paths = output_paths(text)
                for raw in paths if len(paths) <= OUTPUT_PATHS_FOCUSED else ():  # a long listing is no finding
                    add_file(raw, OUTPUT_PATH_SCORE, order, repeat=False)

    for command in errored:  # a failing build or test is what the session was about; a failing `rg` is not
        weight = command_weight(command)
        atoms.add("command", command_atom(command), weight + (1.5 if weight > 0 else 0.0), 0)

    # The outcome: the last assistant message that says something, without its lead-in
    # ("Now I have a comprehensive understanding. Let me compile the final report:").
    final_order = None
    for order, text in reversed(assistant):
        if len(content_words(text)) >= 5:
            d.outcome, final_order = text, order
            break
    if d.outcome:
        d.outcome_sentences = []
        for sentence in sentences(d.outcome, headings=False):
            sentence = _INTERJECTION.sub("", sentence)
            if not d.outcome_sentences and (_NARRATION_LEAD.match(sentence) or len(sentence) < 3):
                continue
            d.outcome_sentences.append(sentence)

    # (order, text, weight, is the final answer, look for paths): the paths of the requests and
    # of the final answer are counted elsewhere, with more weight.
    prose = [(r.order, request_prose(r.text), 2.0, False, False) for r in d.requests]
    prose += [(o, t, 2.0, True, False) for o, t in assistant if o == final_order]
    prose += [(o, t, 1.0, False, True) for o, t in reversed(assistant) if o != final_order]
    budget = PROSE_CHARS
    for order, text, weight, final, paths in prose:
        if budget <= 0:
            break
        text = text[:budget]
        budget -= len(text)
        _statements(atoms, text, order, weight, final)
        if paths:
            for raw in mentioned_paths(FENCE.sub(" ", text)):
                add_file(raw, 0.5, order)

    for s in d.outcome_sentences:
        if len(content_words(s)) >= 5 and is_specific(s) and s.endswith((".", "!")):
            atoms.add("fact", s, 1.5, final_order or 0)
            break
    if d.outcome:
        for raw in mentioned_paths(FENCE.sub(" ", d.outcome)):
            add_file(raw, 1.5, final_order or 0)

    if last_todo:
        for item, done in todo_items(last_todo):
            atoms.add("fact" if done else "todo", item, 0.8 if done else 2.0, len(blocks))

    # What was stated anywhere in the segment (a fact said once in the middle of a long chat):
    # the person's words without what they pasted, and the answers.
    said = sorted([(r.order, request_prose(r.text)) for r in d.requests] + assistant)
    d.said = statements(said)
    for st in d.said:
        atoms.add("fact", st.text, st.score, st.order, tag="said")

    d.language = detect_language(d.user_texts, d.assistant_texts)
    return d
