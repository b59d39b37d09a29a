"""The `offline` summarizer: no model, no key, no network, same answer every time.

It extracts rather than writes. The title is the first real request; the summary is the requests
and the final outcome; the atoms are lines copied from the transcript (error messages, commands,
files, stated decisions and fixes, settings, numbers, todos); the questions are templates filled
with those atoms. It records the language the transcript is in and cannot translate, so
`summarizer.output_language` does not apply to it. See README.md."""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath

from jezero.config import SummarizerConfig
from jezero.models import MAX_ATOMS, SUMMARY_MAX_CHARS, TITLE_MAX_CHARS, Block, Segment, Session, Summary, Usage

from jezero_summarizers import extract
from jezero_summarizers.extract import Candidate, Digest, clip, content_words, sentences, short_error, squash

DESCRIPTION = "no model: title, summary and atoms extracted from the transcript (the default)"

# Atom types in the order they are picked and shown. Errors, fixes and decisions first: they are
# what a later search most often quotes. Caps keep one busy type (40 commands) from taking every
# place, so an item stays findable by its error, its command, its file and its decision alike.
ATOM_ORDER = ("error", "fix", "decision", "command", "file", "config", "number", "todo", "fact")
ATOM_CAPS = {"error": 3, "fix": 2, "decision": 3, "command": 3, "file": 3, "config": 2, "number": 2, "todo": 2, "fact": 2}
MIN_SCORE = 0.5  # below this a candidate is noise (a bare `ls`, a vague sentence)
PROSE = {"decision", "fix", "config", "number", "todo", "fact"}  # sentences, which can overlap

_LABELS = {
    "en": {
        "asked": "Asked", "then": "Also", "continues": "Continues", "outcome": "Outcome", "last": "Last command", "after": "after",
        "error": "How was `{}` fixed?", "file": "What was changed in {} and why?", "file_seen": "What is {} for?",
        "command": "What does `{}` do here?",
        "decision": "What was decided about {}?", "config": "How is {} configured?", "terms": "What was done about {}?",
        "and": "and", "session": "this session",
        "fallback": ("What was asked in {}?", "What was the outcome of {}?", "Which files and commands did {} involve?"),
        "empty": "No conversation text in this segment.",
    },
    "es": {
        "asked": "Pedido", "then": "También", "continues": "Continúa", "outcome": "Resultado", "last": "Último comando", "after": "tras",
        "error": "¿Cómo se arregló `{}`?", "file": "¿Qué se cambió en {} y por qué?", "file_seen": "¿Para qué sirve {}?",
        "command": "¿Qué hace `{}` aquí?",
        "decision": "¿Qué se decidió sobre {}?", "config": "¿Cómo se configura {}?", "terms": "¿Qué se hizo con {}?",
        "and": "y", "session": "esta sesión",
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
        atoms = select_atoms(d)
        project = project_slug(session.cwd)
        title = _title(d, session, segment.index, labels, atoms)
        summary = Summary(
            title=title,
            summary=_summary(d, session, segment.index, labels, title),
            questions=_questions(d, atoms, project, labels),
            atoms=[{"type": a.type, "text": a.text} for a in atoms],
            project=project,
            language=d.language or "en",
        )
        return summary, Usage(input_tokens=0, output_tokens=0, cost_usd=0.0)


def build(config: SummarizerConfig) -> OfflineSummarizer:
    """Needs nothing from the config: model, key, base_url and output_language do not apply."""
    return OfflineSummarizer()


# -- fields ---------------------------------------------------------------------------------------


def select_atoms(d: Digest) -> list[Candidate]:
    """Up to MAX_ATOMS candidates, one type at a time in ATOM_ORDER (best first within a type),
    so the types share the places; then shown grouped by type."""
    pools = {t: [c for c in d.atoms.of(t) if c.score >= MIN_SCORE] for t in ATOM_ORDER}
    # A look at a file (`ls`, `sed -n`) is kept only when the session ran nothing else.
    if any(c.score >= 1.0 for c in pools["command"]):
        pools["command"] = [c for c in pools["command"] if c.score >= 1.0]
    picked: list[Candidate] = []
    seen: set[str] = set()
    prose: set[str] = set()
    taken = dict.fromkeys(ATOM_ORDER, 0)
    while len(picked) < MAX_ATOMS:
        progress = False
        for t in ATOM_ORDER:
            pool = pools[t]
            while pool and taken[t] < ATOM_CAPS[t]:
                c = pool.pop(0)
                key = squash(c.text).lower()
                # The same sentence can qualify twice (a fix with a number): keep it once. A
                # bare file name is kept only when no path of that name is there.
                if key in seen or (t in PROSE and len(key) > 20 and any(key in s for s in prose)):
                    continue
                if t == "file" and "/" not in key and any(
                    o.text.lower().endswith("/" + key) for o in d.atoms.of("file")
                ):
                    continue
                seen.add(key)
                if t in PROSE:
                    prose.add(key)
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
    or error it refers to when it is only a few words ("please fix these")."""
    text = squash(extract.strip_markdown(request.text))
    if len(text) > TITLE_MAX_CHARS:
        first = next(iter(sentences(request.text)), text)
        if len(first) >= TITLE_MAX_CHARS // 2 and len(content_words(first)) >= 3:
            text = first
    if request.weak and request.context:
        ctx = clip(request.context, 80)
        text = f"{text.rstrip('.!')} ({labels['after']} `{ctx}`)" if "\n" not in request.context else text
    return text


def _title(d: Digest, session: Session, index: int, labels: dict, atoms: list[Candidate]) -> str:
    strong = [r for r in d.requests if not r.weak]
    if strong:
        return clip(_request_line(strong[0], labels), TITLE_MAX_CHARS)
    if index > 0:
        # A later part of a long session, where nobody asked anything new: what the session was
        # for, and what this part is about. Parts must not all read "Fix the build (part N)".
        base = _session_request(session, labels) or session.title
        detail = _detail(d, atoms)
        if base and detail:
            return clip(f"{clip(base, 64)} — {detail}", TITLE_MAX_CHARS)
        if base or detail:
            part = f" (part {index + 1})"
            return clip(base or detail, TITLE_MAX_CHARS - len(part)) + part
    if d.requests and not session.title:
        return clip(_request_line(d.requests[0], labels), TITLE_MAX_CHARS)
    if session.title:
        part = f" (part {index + 1})" if index else ""
        return clip(session.title, TITLE_MAX_CHARS - len(part)) + part
    if d.outcome_sentences:
        return clip(d.outcome_sentences[0], TITLE_MAX_CHARS)
    if d.last_command:
        return clip(f"$ {d.last_command}", TITLE_MAX_CHARS)
    project = project_slug(session.cwd)
    return clip(f"{session.agent} session" + (f" in {project}" if project else ""), TITLE_MAX_CHARS)


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
                return clip(short_error(a.text) if type_ == "error" else a.text, 60)
    edited = [a.text for a in atoms if a.type == "file" and a.text in d.edited]
    if edited:
        return clip(edited[0], 60)
    commands = [a.text for a in atoms if a.type == "command" and "\n" not in a.text]
    if commands:
        return clip(f"`{commands[0]}`", 60)
    if d.outcome_sentences:
        return clip(d.outcome_sentences[0], 60)
    return None


def _summary(d: Digest, session: Session, index: int, labels: dict, title: str) -> str:
    """The first real request, up to two more, and the final answer: what a reader needs to
    tell whether this is the session they are looking for."""
    parts: list[str] = []
    strong = [r for r in d.requests if not r.weak]
    first = strong[0] if strong else (d.requests[0] if d.requests else None)
    base = _session_request(session, labels) or session.title if not strong and index > 0 else None
    if base:  # a later part of a long session: what it continues, and whatever was said in it
        parts.append(f"{labels['continues']}: {clip(base, 200)}")
        others = d.requests
    elif first is not None:
        parts.append(f"{labels['asked']}: {clip(_request_line(first, labels), 300)}")
        others = [r for r in d.requests if r is not first]
    else:
        others = []
    more = [clip(_request_line(r, labels), 120) for r in others][:2]
    if more:
        parts.append(f"{labels['then']}: " + "; ".join(more))
    head = " ".join(p if p.endswith((".", "?", "!", "…")) else p + "." for p in parts)
    prose = " ".join(d.outcome_sentences)
    if prose:
        room = SUMMARY_MAX_CHARS - len(head) - len(labels["outcome"]) - 4
        if room > 40:
            head = f"{head} {labels['outcome']}: {clip(prose, room)}".strip()
    elif d.last_command:
        room = SUMMARY_MAX_CHARS - len(head) - len(labels["last"]) - 6
        if room > 20:
            head = f"{head} {labels['last']}: `{clip(d.last_command, min(room, 200))}`".strip()
    return clip(head or title or labels["empty"], SUMMARY_MAX_CHARS)


def _questions(d: Digest, atoms: list[Candidate], project: str | None, labels: dict) -> list[str]:
    by_type: dict[str, list[Candidate]] = {}
    for a in atoms:
        by_type.setdefault(a.type, []).append(a)
    out: list[str] = []

    def ask(template: str, value: str) -> None:
        if "`{}`" in template:
            value = value.replace("`", "")  # no code span inside a code span
        q = template.format(value)
        if q.lower() not in (x.lower() for x in out) and len(out) < 6:
            out.append(q)

    for a in by_type.get("error", [])[:2]:
        ask(labels["error"], short_error(a.text))
    shown = [a.text for a in by_type.get("file", [])]
    edited = [f for f in shown if f in d.edited]
    for f in (edited or shown)[:1]:
        ask(labels["file" if edited else "file_seen"], f if len(f) <= 60 else PurePosixPath(f).name)
    for a in by_type.get("decision", [])[:1]:
        topic = _topic(a.text, labels)
        if topic:
            ask(labels["decision"], topic)
    for a in by_type.get("command", [])[:1]:
        if "\n" not in a.text and len(a.text) <= 100:
            ask(labels["command"], a.text)
    for a in by_type.get("config", [])[:1]:
        key = re.search(r"`([A-Za-z_][\w.-]*)\s*[:=]|\b([A-Z][A-Z0-9_]{2,})=", a.text)
        if key:
            ask(labels["config"], f"`{key.group(1) or key.group(2)}`")
    # A question the person asked is how the next person will ask it.
    for request in d.requests:
        asked = [
            q.strip() for q in _QUESTION.findall(extract.FENCE.sub(" ", request.text[:2000]))
            if len(content_words(q)) >= 2 and not any(c in q for c in "\"“”`")
        ]
        if asked and len(out) < 5:
            ask("{}", asked[0][0].upper() + asked[0][1:])
            break
    terms = _terms(d)
    if terms and len(out) < 4:
        ask(labels["terms"], _join(terms[:3], labels))
    subject = project or labels["session"]
    for template in labels["fallback"]:
        if len(out) >= 3:
            break
        ask(template, subject)
    return out


TERMS_CHARS = 12_000  # prose read for distinctive terms: enough to rank them, bounded for speed
_WORD = re.compile(r"`([^`\s]{3,40})`|((?<![\w/~])[/~]?[A-Za-z][A-Za-z0-9]*(?:[._/-][A-Za-z0-9]+)*)")
_IDENT = re.compile(r"[_./-]|[a-z][A-Z]|^[A-Z]{2,}")


def _terms(d: Digest) -> list[str]:
    """Distinctive words of the requests and the answers: names (with `_ . - /`, capitals, or in
    backticks) count double, and a plain word must come back to count at all."""
    counts: dict[str, float] = {}
    shown: dict[str, str] = {}
    texts = [(r.text, 2.0) for r in d.requests] + [(t, 0.5) for t in d.assistant_texts]
    stop = extract.STOPWORDS_EN | extract.STOPWORDS_ES | extract.FILLER
    budget = TERMS_CHARS
    for text, weight in texts:
        if budget <= 0:
            break
        text = text[: min(budget, 4000)]
        budget -= len(text)
        for code, plain in _WORD.findall(text):
            word = code or plain
            low = word.lower()
            if len(low) < 4 or low in stop:
                continue
            ident = bool(code) or bool(_IDENT.search(word))
            counts[low] = counts.get(low, 0.0) + weight * (2.0 if ident else 1.0)
            shown.setdefault(low, word)
    ranked = sorted(counts, key=lambda k: -counts[k])
    return [shown[k] for k in ranked if counts[k] >= 3.0][:3]


_NAME_RUN = re.compile(r"(?<!^)(?<![.!?]\s)\b((?:[A-Z][\w.-]*[\w])(?:\s+[A-Z][\w.-]*[\w])*)")
_MARKERS = frozenset(
    "instead rather lugar vez decided decide decision decidimos usar use using let's lets we'll vamos going "
    "switch switched chose chosen opt opted mejor usaremos".split()
)


def _topic(sentence: str, labels: dict) -> str | None:
    """What a decision is about: its code spans, else its names (capitalised words not opening
    the sentence), else its first content words."""
    code = re.findall(r"`([^`]{2,40})`", sentence)
    if code:
        return _join([f"`{c}`" for c in dict.fromkeys(code)][:2], labels)
    names = [n for n in dict.fromkeys(_NAME_RUN.findall(sentence)) if n.lower() not in _MARKERS]
    if names:
        return _join(names[:3], labels)
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
        slug = re.sub(r"[^a-z0-9._-]+", "-", part.lower()).strip("-._")[:63]
        if slug and slug not in _GENERIC_DIRS:
            return slug
    return None


def _blocks_from_text(text: str) -> list[Block]:
    """A segment without blocks (an older stored original): its text, minus header lines, as
    one user block."""
    body = _HEADER.sub("", text or "").strip()
    return [Block("user", "text", body)] if body else []
