"""The `offline` summarizer: no model, no key, no network, same answer every time.

It extracts rather than writes. The title is the first real request; the summary is the requests
and the final outcome; the atoms are lines copied from the transcript (error messages, commands,
files, stated decisions and fixes, settings, numbers, todos); the questions are templates filled
with those atoms. It records the language the transcript is in and cannot translate, so
`summarizer.output_language` does not apply to it. See README.md."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

from jezero.plugin import (MAX_ATOMS, SUMMARY_MAX_CHARS, TITLE_MAX_CHARS, Block, Segment, Session, SummarizerConfig,
                           Summary, Usage, slug)

from jezero_summarizers import extract
from jezero_summarizers.extract import Candidate, Digest, content_words, one_line, sentences, short_error, squash

DESCRIPTION = "no model: title, summary and atoms extracted from the transcript (the default)"

# Atom types in the order they are picked and shown. Errors, fixes and decisions first: they are
# what a later search most often quotes. Caps keep one busy type (40 commands) from taking every
# place, so an item stays findable by its error, its command, its file and its decision alike.
ATOM_ORDER = ("error", "fix", "decision", "command", "file", "config", "number", "todo", "fact")
ATOM_CAPS = {"error": 3, "fix": 2, "decision": 3, "command": 3, "file": 3, "config": 2, "number": 2, "todo": 2, "fact": 2}
# Places left over after the caps go to the next best candidates, up to these: an item with one
# error and one command has room for the files a grep found.
OVERFLOW_CAPS = {"error": 4, "fix": 2, "decision": 3, "command": 4, "file": 6, "config": 3, "number": 2, "todo": 3, "fact": 2}
# Then what people stated (extract/salient.py) fills the places still free: in a conversation
# between people there are no errors, commands or files, and the facts said are all there is to find.
SAID_CAPS = {**OVERFLOW_CAPS, "fact": 8}
MIN_SCORE = 0.5  # below this a candidate is noise (a bare `ls`, a vague sentence)
MIN_SCORES = {"file": 0.3}  # a path a command's output lists (extract.OUTPUT_PATH_SCORE) still counts
PROSE = {"decision", "fix", "config", "number", "todo", "fact"}  # sentences, which can overlap

_LABELS = {
    "en": {
        "asked": "Asked", "then": "Also", "continues": "Continues", "outcome": "Outcome", "last": "Last command", "after": "after",
        "error": "How was `{}` fixed?", "file": "What was changed in {} and why?", "file_seen": "What is {} for?",
        "command": "What does `{}` do here?",
        "decision": "What was decided about {}?", "config": "How is {} configured?",
        "found": "What was found about {}?", "and": "and", "session": "this session",
        "said": "What did {} say about {}?",
        "fallback": ("What was asked in {}?", "What was the outcome of {}?", "Which files and commands did {} involve?"),
        "empty": "No conversation text in this segment.",
    },
    "es": {
        "asked": "Pedido", "then": "También", "continues": "Continúa", "outcome": "Resultado", "last": "Último comando", "after": "tras",
        "error": "¿Cómo se arregló `{}`?", "file": "¿Qué se cambió en {} y por qué?", "file_seen": "¿Para qué sirve {}?",
        "command": "¿Qué hace `{}` aquí?",
        "decision": "¿Qué se decidió sobre {}?", "config": "¿Cómo se configura {}?",
        "found": "¿Qué se encontró sobre {}?", "and": "y", "session": "esta sesión",
        "said": "¿Qué dijo {} sobre {}?",
        "fallback": ("¿Qué se pidió en {}?", "¿Cuál fue el resultado de {}?", "¿Qué archivos y comandos usó {}?"),
        "empty": "Este segmento no tiene texto de conversación.",
    },
}
_QUESTION = re.compile(r"(?:^|(?<=[.!?\n]))\s*([^.?!\n]{8,150}\?)")
_HEADER = re.compile(r"^\[[a-z_]+(?: [^\]\n]*)?\]\s*$", re.M)
_GENERIC_DIRS = {
    "", "/", "~", "src", "app", "code", "repos", "repo", "work", "projects", "project", "tmp", "temp", "home", "users",
    "workspace", "workspaces", "dev", "git", "github", "documents", "desktop", "root", "var", "opt", "mnt", "private",
}
_WORKTREE_MARKERS = {".worktrees", "worktrees", ".claude"}


class OfflineSummarizer:
    name = "offline"
    model = None
    # CPU-bound pure Python: more threads would only queue on the GIL.
    max_in_flight = 1

    def summarize(self, segment: Segment) -> tuple[Summary, Usage]:
        blocks = segment.blocks or _blocks_from_text(segment.text)
        session = segment.session
        d = extract.digest(blocks, cwd=session.cwd)
        labels = _LABELS.get(d.language or "en", _LABELS["en"])
        strong = [r for r in d.requests if not r.weak]
        atoms = select_atoms(d, one_line(_request_line(strong[0], labels), 300) if strong else "")
        project = project_slug(session.cwd)
        title = _title(d, session, segment.index, labels, atoms)
        text = _summary(d, session, segment.index, labels, title)
        shown = "\n".join([title, text, *(a.text for a in atoms)])
        summary = Summary(
            title=title,
            summary=text,
            questions=_questions(d, atoms, project, labels, shown, title),
            atoms=[{"type": a.type, "text": a.text} for a in atoms],
            project=project,
            language=d.language or "en",
        )
        return summary, Usage(input_tokens=0, output_tokens=0, cost_usd=0.0)


def build(config: SummarizerConfig) -> OfflineSummarizer:
    """Needs nothing from the config: model, key, base_url and output_language do not apply."""
    return OfflineSummarizer()


# -- fields ---------------------------------------------------------------------------------------


def select_atoms(d: Digest, title: str = "") -> list[Candidate]:
    """Up to MAX_ATOMS candidates, one type at a time in ATOM_ORDER (best first within a type),
    so the types share the places; places left over then go to the next best of any type, up to
    OVERFLOW_CAPS. Shown grouped by type. A sentence that is the whole request (`title`), an error
    already in a longer one, the same file twice, and more than one warning or build verdict are
    left out."""
    pools = {t: [c for c in d.atoms.of(t) if c.score >= MIN_SCORES.get(t, MIN_SCORE)] for t in ATOM_ORDER}
    # A look at a file (`ls`, `sed -n`) is kept only when the session ran nothing else.
    if any(c.score >= 1.0 for c in pools["command"]):
        pools["command"] = [c for c in pools["command"] if c.score >= 1.0]
    all_files = [o.text.lower() for o in d.atoms.of("file")]
    title_key = squash(title).lower()
    picked: list[Candidate] = []
    seen: set[str] = set()
    prose: set[str] = set()
    errors: list[str] = []
    taken = dict.fromkeys(ATOM_ORDER, 0)
    taken_tags: dict[str, int] = {}
    files: list[str] = []

    def fits(c: Candidate) -> bool:
        key = squash(c.text).lower()
        # The same sentence can qualify twice (a fix with a number): keep it once. A bare file
        # name is kept only when no path of that name is there.
        if key in seen or (c.type in PROSE and len(key) > 20 and (any(key in s for s in prose) or key == title_key)):
            return False
        if c.type == "file" and "/" not in key and any(o.endswith("/" + key) for o in all_files):
            return False
        if c.type == "file" and any(key.endswith("/" + f) or f.endswith("/" + key) for f in files):
            return False  # `/app/checkout/webhooks.py` in a traceback, `checkout/webhooks.py` in the prose
        if c.type == "file":
            files.append(key)
        if c.type == "error":
            ekey = extract.error_key(c.text)
            if c.tag in ("warning", "generic") and taken_tags.get(c.tag, 0) >= 1:
                return False  # one build verdict and one warning are enough
            if any(ekey in e or e in ekey for e in errors if min(len(e), len(ekey)) > 20):
                return False  # `AssertionError: x` and `FAILED t.py::test - AssertionError: x`
            errors.append(ekey)
            taken_tags[c.tag] = taken_tags.get(c.tag, 0) + 1
        seen.add(key)
        if c.type in PROSE:
            prose.add(key)
        return True

    for caps in (ATOM_CAPS, OVERFLOW_CAPS, SAID_CAPS):
        while len(picked) < MAX_ATOMS:
            progress = False
            for t in ATOM_ORDER:
                pool = pools[t]
                while pool and taken[t] < caps[t]:
                    c = pool.pop(0)
                    if not fits(c):
                        continue
                    picked.append(c)
                    taken[t] += 1
                    progress = True
                    break
                if len(picked) >= MAX_ATOMS:
                    break
            if not progress:
                break
    return sorted(picked, key=lambda c: (ATOM_ORDER.index(c.type), -c.score, c.order))


def _request_line(request: extract.Request, labels: dict) -> str:
    """The request as one line of prose: the first sentence when it is long, with the command
    or error it refers to when it is only a few words ("please fix these"), and the error the
    person pasted (not the traceback or log around it)."""
    prose = squash(extract.strip_markdown(extract.request_prose(request.text, errors=True)))
    error = short_error(request.error) if request.error else None
    if not prose:
        prose = error or squash(extract.strip_markdown(request.text))
        error = None
    text = prose
    if len(text) > TITLE_MAX_CHARS:
        first = next(iter(sentences(prose)), text)
        if len(first) >= TITLE_MAX_CHARS // 2 and len(content_words(first)) >= 3:
            text = first
    if error and _head(error) not in text.lower() and _head(request.error) not in text.lower():
        text = f"{text} {error}" if text.endswith((".", ":", "!", "?", "…")) else f"{text}: {error}"
    if request.weak and request.context:
        ctx = one_line(request.context, 80)
        text = f"{text.rstrip('.!')} ({labels['after']} `{ctx}`)" if "\n" not in request.context else text
    return text


def _head(error: str) -> str:
    """The start of an error line, to tell whether a text already quotes it."""
    return squash(error).lower().rstrip("…")[:40]


def _title(d: Digest, session: Session, index: int, labels: dict, atoms: list[Candidate]) -> str:
    strong = [r for r in d.requests if not r.weak]
    if strong:
        return one_line(_request_line(strong[0], labels), TITLE_MAX_CHARS)
    if index > 0:
        # A later part of a long session, where nobody asked anything new: what the session was
        # for, and what this part is about. Parts must not all read "Fix the build (part N)".
        base = _session_request(session, labels) or session.title
        detail = _detail(d, atoms)
        if base and detail:
            return one_line(f"{one_line(base, 64)} — {detail}", TITLE_MAX_CHARS)
        if base or detail:
            part = f" (part {index + 1})"
            return one_line(base or detail, TITLE_MAX_CHARS - len(part)) + part
    if d.requests and not session.title:
        return one_line(_request_line(d.requests[0], labels), TITLE_MAX_CHARS)
    if session.title:
        part = f" (part {index + 1})" if index else ""
        return one_line(session.title, TITLE_MAX_CHARS - len(part)) + part
    if d.outcome_sentences:
        return one_line(d.outcome_sentences[0], TITLE_MAX_CHARS)
    if d.last_command:
        return one_line(f"$ {d.last_command}", TITLE_MAX_CHARS)
    project = project_slug(session.cwd)
    return one_line(f"{session.agent} session" + (f" in {project}" if project else ""), TITLE_MAX_CHARS)


def _session_request(session: Session, labels: dict) -> str | None:
    """The first real request of the whole session (the segment may hold none of it)."""
    weak = None
    for block in session.blocks:
        if block.role != "user" or block.kind != "text":
            continue
        text = block.text or ""
        if extract.is_scaffolding(text) or extract.is_ack(text):
            continue
        if len(text) >= 80 or len(content_words(text)) >= 3:
            return _request_line(extract.Request(text, 0, False, None), labels)
        weak = weak or squash(text)
    return weak


def _detail(d: Digest, atoms: list[Candidate]) -> str | None:
    """What one part of a session is about, in a few words: its main error, edited file,
    command or outcome."""
    for type_ in ("error", "fix", "decision"):
        for a in atoms:
            if a.type == type_:
                return one_line(short_error(a.text) if type_ == "error" else a.text, 60)
    edited = [a.text for a in atoms if a.type == "file" and a.text in d.edited]
    if edited:
        return one_line(edited[0], 60)
    commands = [a.text for a in atoms if a.type == "command" and "\n" not in a.text]
    if commands:
        return one_line(f"`{commands[0]}`", 60)
    if d.outcome_sentences:
        return one_line(d.outcome_sentences[0], 60)
    return None


def _summary(d: Digest, session: Session, index: int, labels: dict, title: str) -> str:
    """The first real request, up to two more, and the final answer: what a reader needs to
    tell whether this is the session they are looking for."""
    parts: list[str] = []
    strong = [r for r in d.requests if not r.weak]
    first = strong[0] if strong else (d.requests[0] if d.requests else None)
    base = _session_request(session, labels) or session.title if not strong and index > 0 else None
    if base:  # a later part of a long session: what it continues, and whatever was said in it
        parts.append(f"{labels['continues']}: {one_line(base, 200)}")
        others = d.requests
    elif first is not None:
        parts.append(f"{labels['asked']}: {one_line(_request_line(first, labels), 300)}")
        others = [r for r in d.requests if r is not first]
    else:
        others = []
    more = [one_line(_request_line(r, labels), 120) for r in others][:2]
    if more:
        parts.append(f"{labels['then']}: " + "; ".join(more))
    head = " ".join(p if p.endswith((".", "?", "!", "…")) else p + "." for p in parts)
    prose = " ".join(d.outcome_sentences)
    if prose:
        room = SUMMARY_MAX_CHARS - len(head) - len(labels["outcome"]) - 4
        if room > 40:
            head = f"{head} {labels['outcome']}: {one_line(prose, room)}".strip()
    elif d.last_command:
        room = SUMMARY_MAX_CHARS - len(head) - len(labels["last"]) - 6
        if room > 20:
            head = f"{head} {labels['last']}: `{one_line(d.last_command, min(room, 200))}`".strip()
    return one_line(head or title or labels["empty"], SUMMARY_MAX_CHARS)


def _questions(d: Digest, atoms: list[Candidate], project: str | None, labels: dict, shown: str = "",
               title: str = "") -> list[str]:
    """Three to six questions the way someone would ask for this session, each naming what it is
    about: its error, the person's own question, the decision, the edited file, the setting, and
    the names the session used that the title, summary and atoms (`shown`) do not carry. Questions
    about a file that was only looked at or a command that worked say nothing the atoms do not:
    they only fill up to three."""
    by_type: dict[str, list[Candidate]] = {}
    for a in atoms:
        by_type.setdefault(a.type, []).append(a)
    out: list[str] = []

    def ask(template: str, value: str, limit: int = 6) -> None:
        if "`{}`" in template:
            value = value.replace("`", "")  # no code span inside a code span
        q = template.format(value)
        if q.lower() not in (x.lower() for x in out) and len(out) < limit:
            out.append(q)

    errors = sorted(by_type.get("error", []), key=lambda a: a.tag not in ("", "weak"))  # real errors first
    errors = [a for a in errors if a.tag not in ("warning", "generic")] or errors[:1]
    for a in errors[:1]:
        ask(labels["error"], short_error(a.text))
    # A question the person asked is how the next person will ask it.
    for request in d.requests:
        asked = [
            q.strip() for q in _QUESTION.findall(extract.request_prose(request.text[:2000]))
            if len(content_words(q)) >= 2 and not any(c in q for c in "\"“”`")
        ]
        if asked:
            ask("{}", asked[0][0].upper() + asked[0][1:])
            break
    for a in by_type.get("decision", [])[:1]:
        topic = _topic(a.text, labels)
        if topic:
            ask(labels["decision"], topic)
    edited = [a.text for a in by_type.get("file", []) if a.text in d.edited]
    for f in edited[:1]:
        ask(labels["file"], f if len(f) <= 60 else PurePosixPath(f).name)

    def lacking() -> str:
        return (shown + "\n" + "\n".join(out)).lower()

    known = _names(d)
    names = _terms(known, lacking())
    if names:
        ask(labels["found"], _join(names, labels))
    for a in errors[1:2]:
        if not a.tag:  # a second error only when it is one in its own right
            ask(labels["error"], short_error(a.text))
    for a in by_type.get("config", [])[:1]:
        key = re.search(r"`([A-Za-z_][\w.-]*)\s*[:=]|\b([A-Z][A-Z0-9_]{2,})=", a.text)
        if key:
            ask(labels["config"], f"`{key.group(1) or key.group(2)}`")
    # What the people in a chat stated (salient.py), asked as the next person would: who said it
    # and what it was about. Only where speakers are named: in an agent's session the statements
    # are the atoms' prose, and the questions above already name what it is about.
    for st in [st for st in d.said if st.speaker][:2]:
        topic = _topic(st.text, labels)
        if topic:
            ask(labels["said"].replace("{}", st.speaker, 1), topic)
    # Up to three: the names the session used that the title lacks (even if the summary or an
    # atom has them: a question is how someone asks), then what the atoms say, then the session.
    for lack in (lacking(), title):
        while len(out) < 3:
            more = _terms(known, (lack + "\n" + "\n".join(out)).lower())
            if not more:
                break
            ask(labels["found"], _join(more, labels))
    shown_files = [a.text for a in by_type.get("file", [])]
    for f in shown_files[:1]:
        ask(labels["file_seen"], f if len(f) <= 60 else PurePosixPath(f).name, 3)
    for a in by_type.get("command", [])[:1]:
        if "\n" not in a.text and len(a.text) <= 100:
            ask(labels["command"], a.text, 3)
    subject = project or labels["session"]
    for template in labels["fallback"]:
        ask(template, subject, 3)
    return out


TERMS_CHARS = 12_000  # prose read for distinctive terms: enough to rank them, bounded for speed
_WORD = re.compile(r"`([^`\s]{3,40})`|((?<![\w/~.])[/~.]?[A-Za-z][A-Za-z0-9]*(?:[._/-][A-Za-z0-9]+)*)")
# A name rather than a word: `snake_case`, `a.b`, `a/b`, camelCase, an acronym, a digit, or two
# hyphens (`react-native-mmkv`; one hyphen is as often English: `top-level`, `server-side`).
_IDENT = re.compile(r"[_./]|[a-z][A-Z]|^[A-Z]{2,}|^[A-Z][a-z]+[A-Z]|\d|-.*-")


@dataclass
class _Name:
    shown: str  # as first written
    person: int = 0  # times the person wrote it
    agent: int = 0  # times the agent did


def _names(d: Digest) -> dict[str, _Name]:
    """The names in the requests (without what was pasted) and the answers, with their counts:
    words in backticks, with `_ . /`, inner capitals, a digit or two hyphens (components,
    functions, settings, paths, products). Read once per segment, ranked by _terms as often as
    needed."""
    names: dict[str, _Name] = {}
    texts = [(extract.request_prose(r.text), True) for r in d.requests] + [(t, False) for t in d.assistant_texts]
    stop = extract.STOPWORDS_EN | extract.STOPWORDS_ES | extract.FILLER
    budget = TERMS_CHARS
    for text, person in texts:
        if budget <= 0:
            break
        text = text[: min(budget, 4000)]
        budget -= len(text)
        for (code, plain), n in Counter(_WORD.findall(text)).items():  # counted in C: words repeat
            if not code and plain.isalpha() and (plain.islower() or plain[1:].islower()):
                continue  # a plain word ("cache", "Cache"): most of them, so ruled out first
            word = (code or plain).strip(".,:;")
            low = word.lower()
            if len(low) < 4 or low in stop or not (code or _IDENT.search(word)):
                continue
            w = names.get(low)
            if w is None:
                w = names[low] = _Name(word)
            if person:
                w.person += n
            else:
                w.agent += n
    return names


def _terms(names: dict[str, _Name], lacking: str) -> list[str]:
    """Up to three names of the session that `lacking` (what is already said, lower-cased) does
    not hold, the most used first (what the person wrote counts twice)."""
    scored = [(-(2 * w.person + w.agent), n, w.shown) for n, (low, w) in enumerate(names.items()) if low not in lacking]
    return [shown for _, _, shown in sorted(scored)[:3]]


_NAME_RUN = re.compile(r"(?<!^)(?<![.!?]\s)\b((?:[A-Z][\w.-]*[\w])(?:\s+[A-Z][\w.-]*[\w])*)")
_LITERALS = frozenset("True False None Null NULL TRUE FALSE".split())
_MARKERS = frozenset(
    "instead rather lugar vez decided decide decision decidimos usar use using let's lets we'll vamos going "
    "switch switched chose chosen opt opted mejor usaremos".split()
)


def _topic(sentence: str, labels: dict) -> str | None:
    """What a decision is about: its names (capitalised words not opening the sentence: the
    products and tools chosen between), else its code spans, else its identifiers, else its
    first content words."""
    names = [n for n in dict.fromkeys(_NAME_RUN.findall(sentence)) if n.lower() not in _MARKERS and n not in _LITERALS]
    if names:
        return _join(names[:3], labels)
    code = re.findall(r"`([^`]{2,40})`", sentence)
    if code:
        return _join([f"`{c}`" for c in dict.fromkeys(code)][:2], labels)
    idents = [w for w in re.findall(r"[\w.-]*[_./][\w./-]*\w", sentence) if not w[0].isdigit()]
    if idents:
        return _join(list(dict.fromkeys(idents))[:2], labels)
    words = [w for w in re.findall(r"[A-Za-z][\w.-]*[A-Za-z0-9]", sentence) if content_words(w) and w.lower() not in _MARKERS]
    return " ".join(list(dict.fromkeys(words))[:4]) or None


def _join(items: list[str], labels: dict) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {labels['and']} {items[-1]}"


def project_slug(cwd: str | None) -> str | None:
    """A guess from the working folder: its last meaningful component, as a slug. A worktree
    (`repo/.worktrees/x`, `repo/.claude/worktrees/x`) counts as its repository."""
    if not cwd:
        return None
    path = PureWindowsPath(cwd) if "\\" in cwd and "/" not in cwd else PurePosixPath(cwd)
    parts = [p for p in path.parts if p not in ("/", "\\") and not p.endswith((":", ":\\"))]
    for i, part in enumerate(parts):
        if part.lower() in _WORKTREE_MARKERS:
            parts = parts[:i]
            break
    if len(parts) >= 2 and parts[0].lower() in ("users", "home") and len(parts) == 2:
        return None  # a home folder names a person, not a project
    for part in reversed(parts):
        name = slug(part)
        if name and name not in _GENERIC_DIRS:
            return name
    return None


def _blocks_from_text(text: str) -> list[Block]:
    """A segment without blocks (an older stored original): its text, minus header lines, as
    one user block."""
    body = _HEADER.sub("", text or "").strip()
    return [Block("user", "text", body)] if body else []
