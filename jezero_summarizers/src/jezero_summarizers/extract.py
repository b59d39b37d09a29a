"""What can be lifted from a transcript without a model: the requests, the outcome, and candidate
atoms (errors, commands, files, decisions, fixes, settings, numbers, todos), each copied verbatim
from the blocks and scored. Pure functions over blocks; the offline summarizer composes them.

Everything here reads `Block`s as connectors make them: a shell tool call's text is the command
(or its JSON input), a file tool's text is the path (or its JSON input), a tool result carries the
tool's name and `is_error`. Nothing depends on how the pipeline renders a segment's text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from jezero.models import Block

ATOM_TEXT_LIMIT = 300  # below the schema's 400: an atom is a line to find, not a paragraph
# Prose read for decisions, fixes, settings, numbers and paths: the requests first, then the final
# answer, then the other answers from the newest back. A segment that is all discussion would
# otherwise cost three times a typical one; twelve atoms never need more than this.
PROSE_CHARS = 24_000
ERROR_LINE_LIMIT = 240

# Tool names, lower-cased, by what their calls and results hold.
SHELL_TOOLS = {
    "bash", "shell", "shell_command", "exec_command", "local_shell", "container.exec", "run_terminal_cmd",
    "run_shell_command", "execute_command", "run_command", "terminal", "powershell",
}
EDIT_TOOLS = {
    "edit", "multiedit", "write", "notebookedit", "apply_patch", "str_replace_editor", "str_replace_based_edit_tool",
    "create_file", "write_file", "edit_file", "replace", "replace_in_file", "insert_edit_into_file",
}
READ_TOOLS = {"read", "notebookread", "view", "read_file", "ls", "list_dir", "glob", "grep", "view_image", "search"}
TODO_TOOLS = {"todowrite", "todo_write", "update_plan", "write_todos", "todoread"}
# Results that are reports or file contents, not program output: error words in them are prose or code.
QUIET_RESULT_TOOLS = READ_TOOLS | EDIT_TOOLS | TODO_TOOLS | {"task", "agent", "webfetch", "websearch", "web_search"}

# -- text helpers -------------------------------------------------------------------------------

_WS = re.compile(r"\s+")
FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_MD_LEAD = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,2}[.)]\s+|\[[ xX]\]\s+)+")
_MD_EMPH = re.compile(r"\*\*|__")
_MD_LINK = re.compile(r"\[([^\]\n]{1,200})\]\([^)\s]{1,500}\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z¿¡\"'`(\[])")
_INTERJECTION = re.compile(
    r"^(?:perfect|great|excellent|done|awesome|good news|all set|ok(?:ay)?|alright|sure|"
    r"perfecto|genial|listo|hecho|excelente|vale)\b[!.,:]*\s*",
    re.I,
)
_TOKEN = re.compile(r"[^\W\d_][\w.'’-]*[\w]|[^\W\d_]", re.U)

# "a", "no" and "de" occur in both languages and decide nothing, so neither list has them.
STOPWORDS_EN = frozenset(
    "the and is are was were to of in that it for with this you what how be not on can we have has do does "
    "will would should there their they an at from by or but if i i'm i've it's me my your our us so as "
    "all any some when where which who why these those then than them been being into about also just "
    "please could can't don't let's let what's that's there's here's i'd i'll you're we're doesn't isn't "
    "won't didn't wasn't aren't you'll we'll".split()
)
STOPWORDS_ES = frozenset(
    "el la los las que y en un una es por para con se lo como más pero del al está están qué cómo esto "
    "eso hay muy también ya quiero hacer puedes sobre cuando donde porque tiene son ser fue era le les nos "
    "mi tu su sus este esta estos estas hasta desde todo todos vamos hay necesito podemos ahora así sin "
    "entre cuál cual quién".split()
)
# Words too common in coding sessions to say what one is about.
FILLER = frozenset(
    "file files code let now need check run running using use used make sure want like just thanks thank "
    "here there ok okay yes also get got see look looks try trying going able new way thing things fix "
    "fixed fixes something anything everything help work works working done update updated change changed "
    "add added create created first next last still really actually well good great perfect right one two "
    "test tests issue issues error errors problem problems project session summary summarize explain give "
    "show tell find found following follow without within across each other more most much many very "
    "hola gracias favor archivo código usar hacer".split()
)
_ACKS = frozenset(
    "ok okay k yes y yep yeah no nope continue go go on go ahead proceed do it thanks thank you thx sure "
    "great perfect lgtm next done good nice cool sí si vale dale sigue continúa continua adelante gracias "
    "hazlo perfecto listo bien".split()
)
# Text an agent or its harness puts in the user's turn: instructions, context, slash commands,
# hook output. Connectors drop or mark most of it; what reaches a summarizer as a "prompt" is
# skipped here too. A prompt that merely starts with an HTML tag is not scaffolding.
_SCAFFOLDING = (
    "# AGENTS.md instructions", "Caveat: The messages below were generated",
    "This session is being continued from a previous conversation", "[Request interrupted", "[image", "Warmup",
)
_SCAFFOLDING_TAG = re.compile(
    r"<(?:environment_context|user_instructions|permissions instructions|INSTRUCTIONS|turn_aborted|"
    r"subagent_notification|skill|collaboration_mode|personality_spec|command-name|command-message|command-args|"
    r"command-contents|local-command-stdout|local-command-stderr|local-command-caveat|system-reminder|bash-input|"
    r"bash-stdout|bash-stderr|task-notification|user-prompt-submit-hook|session-start-hook|ide_opened_file|"
    r"ide_selection|ide_diagnostics|user-memory-input)[\s>]"
)


def squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary with an ellipsis."""
    text = squash(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-—(") + "…"


def cut(text: str, limit: int) -> str:
    """`text` as written when it fits (verbatim matters for errors and commands), else clipped."""
    return text if len(text) <= limit and "\n" not in text else clip(text, limit)


def content_words(text: str) -> list[str]:
    return [
        w for w in (t.lower().replace("’", "'") for t in _TOKEN.findall(text))
        if len(w) > 1 and w not in STOPWORDS_EN and w not in STOPWORDS_ES and w not in FILLER
    ]


_SPECIFIC = re.compile(r"[`/\d]|[A-Za-z0-9][_.][A-Za-z0-9]|[a-z][A-Z]|[A-Z]{2}")


def is_specific(text: str) -> bool:
    """Names something: a `code span`, a path, a digit, an identifier (`a_b`, `a.b`, camelCase) or
    an acronym."""
    return bool(_SPECIFIC.search(text))


def strip_markdown(line: str) -> str:
    return _MD_LINK.sub(r"\1", _MD_EMPH.sub("", _MD_LEAD.sub("", line.strip()))).strip()


def sentences(text: str, headings: bool = True) -> Iterator[str]:
    """Prose sentences of a message: code blocks and tables left out, markdown marks removed
    (and headings, unless asked for)."""
    for line in FENCE.sub("\n", text).splitlines():
        line = line.strip()
        if not line or line.startswith("|") or not any(c.isalnum() for c in line):
            continue
        if not headings and line.startswith("#"):
            continue
        line = strip_markdown(line)
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                yield part


def is_scaffolding(text: str) -> bool:
    head = text.lstrip()
    return not head or head.startswith(_SCAFFOLDING) or bool(_SCAFFOLDING_TAG.match(head))


def is_ack(text: str) -> bool:
    return squash(re.sub(r"[^\w\s']", " ", text.lower())) in _ACKS


# -- languages ----------------------------------------------------------------------------------


def detect_language(user_texts: Iterable[str], assistant_texts: Iterable[str]) -> str | None:
    """"en" or "es" by stopword counts (what the person typed counts double), None without
    enough prose to tell. Other languages are not told apart."""
    en = es = 0
    for weight, texts in ((2, user_texts), (1, assistant_texts)):
        budget = 8_000  # enough to decide; keeps a long segment fast
        for text in texts:
            sample = FENCE.sub(" ", text[:budget]).lower()
            budget -= len(sample)
            for w in _TOKEN.findall(sample):
                if w in STOPWORDS_EN:
                    en += weight
                elif w in STOPWORDS_ES:
                    es += weight
            if budget <= 0:
                break
    if en + es < 3:
        return None
    return "es" if es > en else "en"


# -- candidates ---------------------------------------------------------------------------------


@dataclass
class Candidate:
    type: str
    text: str
    score: float
    order: int  # where it first appeared: ties go to the earlier one


@dataclass
class Candidates:
    """Atom candidates by type, de-duplicated on their normalised text; a repeat raises the score."""

    by_key: dict[tuple[str, str], Candidate] = field(default_factory=dict)

    def add(self, type_: str, text: str, score: float, order: int) -> None:
        text = text.strip()
        if len(text) < 3:
            return
        if len(text) > ATOM_TEXT_LIMIT:
            text = clip(text, ATOM_TEXT_LIMIT)
        key = (type_, squash(text).lower().strip(" .:;,`"))
        seen = self.by_key.get(key)
        if seen is None:
            self.by_key[key] = Candidate(type_, text, score, order)
        else:
            best = max(seen.score, score)
            seen.score = best + (0.5 if best >= 1.0 else 0.0)  # a repeated trivial `ls` stays trivial

    def of(self, type_: str) -> list[Candidate]:
        found = [c for c in self.by_key.values() if c.type == type_]
        return sorted(found, key=lambda c: (-c.score, c.order))


# -- errors -------------------------------------------------------------------------------------

_ERRNO = r"E(?:NOENT|ACCES|PERM|EXIST|NOSPC|ADDRINUSE|CONNREFUSED|CONNRESET|TIMEDOUT|NOTFOUND|AI_AGAIN|MFILE|NOTDIR|ISDIR|PIPE|NOMEM|NOTEMPTY)"
_ERROR_STRONG = re.compile(
    r"^\s*(?:error|fatal|panic)(?:\[[^\]\n]{1,80}\])?\s*:"  # error: / error[E0382]: / fatal: / panic:
    r"|\b[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b(?=:|\s*$)"  # ValueError: ... / a bare AssertionError
    r"|^\s*(?:FAILED|FAIL|ERROR|ERR!)\b"  # pytest, jest, go test
    r"|\bnpm ERR!|\berror TS\d+|:\d+(?::\d+)?:\s*(?:fatal )?error\b"  # npm, tsc, gcc/clang
    rf"|\b{_ERRNO}\b"
    r"|No such file or directory|Permission denied|command not found|Segmentation fault|Cannot find module"
    r"|Module not found|Could not resolve|Connection refused|Unable to locate|is not recognized as",
    re.M,
)
_ERROR_WEAK = re.compile(
    r"^\s*warning(?:\[[^\]\n]{1,80}\])?\s*:|\bfailed(?: to\b|:)|\b[1-9]\d* (?:failed|errors?)\b",
    re.M | re.I,
)
_CODE_LINE = re.compile(r"^(?:(?:except|raise|catch|throw|import|from|def|class|if|elif|return|const|let|var)\b|#|//|\d+\s*[→|:])")
_ERROR_NOISE = re.compile(
    r"doesn't want to proceed|tool use was rejected|has not been read yet|interrupted by user|"
    r"^\s*WARN\b.*pre-release|[;{]\s*$",  # the last: a line of code quoted by a search
    re.I,
)
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?|exit code:?|exit status)\s*(-?\d+)")
_BOX = re.compile(r"^[\s│|>•*]+")


# Cheap tests run first: most output has none of these words, and `in` on the whole block is far
# faster than the patterns above (the offline summarizer must take 100 segments of 60k characters
# a second). Only the lines holding a hint are matched against the patterns.
_HINT_WORDS = (
    "error", "exception", "fail", "fatal", "panic", "denied", "no such file", "not found", "refused", "warning",
    "segmentation", "unable to", "not recognized", "cannot find", "err!",
) + tuple(f"e{code.lower()}" for code in _ERRNO[4:-1].split("|"))  # enoent, eacces, ...
MAX_ERROR_LINES = 80  # hint lines looked at per block: the head and the tail of a long log


def error_lines(text: str) -> Iterator[tuple[str, float]]:
    """(line, strength) for every line of program output that reports an error, in order."""
    low = text.lower()
    if not any(w in low for w in _HINT_WORDS):
        return
    if len(low) != len(text):  # a few characters change length when lower-cased
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    starts = set()
    for word in _HINT_WORDS:
        i = low.find(word)
        while i >= 0:
            starts.add(low.rfind("\n", 0, i) + 1)
            i = low.find(word, i + len(word))
    starts = sorted(starts)
    if len(starts) > MAX_ERROR_LINES:
        starts = starts[: MAX_ERROR_LINES * 3 // 4] + starts[-MAX_ERROR_LINES // 4:]
    for start in starts:
        end = text.find("\n", start)
        raw = text[start: end if end >= 0 else len(text)][:2000]
        strong = _ERROR_STRONG.search(raw)
        if not strong and not _ERROR_WEAK.search(raw):
            continue
        line = _BOX.sub("", raw).strip()
        if not line or _CODE_LINE.match(line) or _ERROR_NOISE.search(line):
            continue
        yield cut(line, ERROR_LINE_LIMIT), (3.0 if strong else 1.5)


# Status lines a harness wraps around output (Codex unified exec): they say that a command
# failed, not how.
_STATUS_LINE = re.compile(
    r"^(?:Process (?:running with session ID|exited with code)|Chunk ID:|Wall time:|Original token count:|"
    r"Output:|Exit code:?\s*-?\d+$|\(no output\)$)"
)


def first_line(text: str) -> str | None:
    """The first line of a failed tool's output that says something."""
    for raw in text.splitlines()[:50]:
        line = _BOX.sub("", raw).strip()
        if line and not _ERROR_NOISE.search(line) and not line.startswith("WARN") and not _STATUS_LINE.match(line):
            return cut(line, ERROR_LINE_LIMIT)
    return None


def exit_code(text: str) -> int | None:
    m = _EXIT.search(text[:400]) or _EXIT.search(text[-400:])
    return int(m.group(1)) if m else None


def short_error(text: str) -> str:
    """The searchable core of an error line: an exception name, a code, a failing test file, or
    the line's head."""
    m = re.match(r"\s*(FAIL(?:ED)?)\s+(\S+)", text)
    if m:
        name = m.group(2).split("::")[0].rsplit("/", 1)[-1]
        return f"{m.group(1)} {name}"
    m = re.search(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception))\b(?::\s*(.*))?", text)
    if m:
        rest = clip(m.group(2) or "", 60)
        return f"{m.group(1)}: {rest}" if rest else m.group(1)
    m = re.match(r"\s*((?:error|warning|fatal)\[[^\]]+\])", text, re.I) or re.search(rf"\b({_ERRNO})\b", text)
    if m:
        return m.group(1)
    m = re.search(r"\b(?:error|fatal)\b[\w \[\]-]{0,24}:.*", text, re.I)  # `a.ts:3:5 - error TS2322: ...` -> from "error"
    return clip(m.group(0) if m and m.start() > 0 else text, 80)


# -- commands -----------------------------------------------------------------------------------

_SHELLS = {"bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell", "cmd", "cmd.exe"}
_TRIVIAL = {
    "ls", "cat", "head", "tail", "sed", "nl", "pwd", "echo", "find", "rg", "grep", "wc", "tree", "cd", "which",
    "file", "stat", "less", "more", "true", "sleep", "awk", "sort", "uniq", "date", "whoami", "env", "printenv",
    "type", "dir", "du", "df",
}
_GIT_READ = {"status", "diff", "log", "show", "branch", "rev-parse", "remote", "blame", "ls-files", "fetch"}
_BUILD = re.compile(
    r"\b(?:pytest|tox|nox|test|tests|build|install|run|make|cargo|go|npm|pnpm|yarn|bun|uv|pip|poetry|docker|"
    r"kubectl|helm|terraform|ansible|alembic|migrate|deploy|mvn|gradle|dotnet|rake|bundle|mix|tsc|eslint|ruff|"
    r"mypy|pyright|ty|jest|vitest|playwright|systemctl|psql|sqlite3|curl|ssh|rsync|brew|apt|apt-get)\b"
)
_GIT_WRITE = re.compile(r"\bgit\s+(?:commit|push|merge|rebase|checkout|switch|reset|revert|cherry-pick|tag|stash|clone|pull)\b")


def shell_command(text: str) -> str | None:
    """The command of a shell tool call: the text itself, or `command` / `cmd` of a JSON input
    (an argv list `bash -lc "<script>"` is unwrapped to the script)."""
    t = text.strip()
    if t.startswith("{"):
        try:
            data = json.loads(t)
        except ValueError:
            data = None
        if isinstance(data, dict):
            value = data.get("command", data.get("cmd"))
            if isinstance(value, list):
                argv = [str(a) for a in value]
                shell = argv[0].replace("\\", "/").rsplit("/", 1)[-1] if argv else ""
                value = argv[-1] if len(argv) == 3 and shell in _SHELLS else " ".join(argv)
            if not isinstance(value, str):
                return None
            t = value.strip()
    return t or None


_SHELL_TOKEN = re.compile(r"""'[^']*'?|"(?:\\.|[^"\\])*"?|&&|\|\||[;|\n]|[^'"&|;\n]+|&""")
_OPERATORS = {"&&", "||", ";", "|", "\n"}


def chain(command: str) -> list[str]:
    """The simple commands of a command line, split at `&&`, `||`, `;`, `|` outside quotes."""
    parts, current = [], []
    for m in _SHELL_TOKEN.finditer(command[:2000]):
        token = m.group()
        if token in _OPERATORS:
            parts.append("".join(current))
            current = []
        else:
            current.append(token)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def command_weight(command: str) -> float:
    """How much a command tells about a session: builds, tests, installs and deploys a lot; a
    look at a file (ls, cat, sed -n, rg, git status) almost nothing. A chain weighs what its
    heaviest part weighs."""
    return max((_part_weight(part.split()) for part in chain(command)), default=0.0)


def _part_weight(words: list[str]) -> float:
    i = 0  # skip to the program: past `sudo`, `VAR=value`, `timeout N`, `cd X`
    while i < len(words):
        w = words[i]
        if w in ("sudo", "time", "nohup", "exec", "env", "command") or ("=" in w and not w.startswith("-")):
            i += 1
        elif w in ("cd", "timeout"):
            i += 2
        else:
            break
    if i >= len(words):
        return 0.0
    program = words[i].rsplit("/", 1)[-1]
    if program == "git":
        sub = words[i + 1] if i + 1 < len(words) else ""
        if _GIT_WRITE.search(" ".join(words[i:i + 2])):
            return 2.0
        return 0.0 if sub in _GIT_READ or sub.startswith("-") else 1.0
    if program in _TRIVIAL:
        return 0.0
    return 2.0 if _BUILD.search(" ".join(words[i:i + 3])) else 1.0


def command_atom(command: str) -> str:
    """Verbatim; a long script keeps its first line."""
    if len(command) <= ATOM_TEXT_LIMIT:
        return command
    head = command.strip().splitlines()[0]
    return clip(head, ATOM_TEXT_LIMIT - 2) + (" …" if not head.endswith("…") else "")


# -- files --------------------------------------------------------------------------------------

_CODE_EXT = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|rb|java|kt|kts|c|h|cc|cpp|hpp|cs|php|swift|m|scala|lua|r|jl|dart|ex|exs|erl|"
    "md|rst|toml|yaml|yml|json|jsonl|ini|cfg|conf|sql|sh|bash|zsh|ps1|html|css|scss|vue|svelte|lock|txt|env|tf|"
    "proto|xml|gradle|ipynb|csv|dockerfile|mk"
)
_PATH_PIECE = re.compile(r"(?:~/|\.{1,2}/|/)?(?:[\w@+-][\w@.+-]*/)*[\w@+-][\w@.+-]*\.([A-Za-z][A-Za-z0-9]{0,7})")
_PIECES = re.compile(r"[\s()\[\]{}<>\"'`,;|=*]+")
_CODE_EXTS = frozenset(_CODE_EXT.split("|"))
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$|#L\d+(?:-L?\d+)?$")
_EDITS_SUFFIX = re.compile(r"\s+\(\d+ edits?\)$")


def tool_paths(text: str) -> list[str]:
    """Paths a file tool's call names: its text (`path`, `path (3 edits)`), the `file_path` /
    `path` / `notebook_path` of a JSON input, or the files of an apply_patch."""
    t = text.strip()
    found = [a or b for a, b in _PATCH_FILE.findall(t)]
    if found:
        return [p.strip() for p in found]
    if t.startswith("{"):
        try:
            data = json.loads(t)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in ("file_path", "path", "notebook_path", "filename", "target_file"):
                if isinstance(data.get(key), str):
                    return [data[key]]
            return []
    first = _EDITS_SUFFIX.sub("", t.splitlines()[0]) if t else ""
    return [first] if first and len(first) < 500 and any(c in first for c in "/\\.") else []


def norm_path(path: str, cwd: str | None) -> str | None:
    p = _EDITS_SUFFIX.sub("", path.strip()).strip("`'\"()[]<>,;")
    p = _LINE_SUFFIX.sub("", p).rstrip(".:")
    if not p or len(p) > ATOM_TEXT_LIMIT or "://" in p:
        return None
    if cwd:
        for sep in ("/", "\\"):
            root = cwd.rstrip(sep) + sep
            if p.startswith(root) and len(p) > len(root):
                return p[len(root):]
    return p


def mentioned_paths(text: str) -> list[str]:
    """Paths named in prose or a command: `dir/name.ext`, or a bare `name.ext` with a code or
    config extension. URLs and versions are not paths."""
    found = []
    for piece in _PIECES.split(text):
        if "." not in piece or "://" in piece or len(piece) > ATOM_TEXT_LIMIT:
            continue
        piece = _LINE_SUFFIX.sub("", piece.rstrip(".:!?*")).rstrip(".:")
        m = _PATH_PIECE.fullmatch(piece)
        if m and ("/" in piece or m.group(1).lower() in _CODE_EXTS):
            found.append(piece)
    return found


# -- statements in prose: decisions, fixes, settings, numbers, todos -------------------------------

# A stated choice. Strong markers say so outright; weak ones ("instead of", "rather than") are as
# common in explanations as in choices, so they count only from the person or the final answer.
_DECISION = re.compile(
    r"\blet'?s (?:use|go with|switch|stick with|keep|drop|move to|adopt|replace|not)\b"
    r"|\bwe(?:'ll| will| should| are going to|'re going to) (?:use|go with|switch|keep|stick|adopt|move|drop)\b"
    r"|\b(?:decided|decide to)\b|\bthe decision (?:is|was)\b|\bdecision:"
    r"|\b(?:won'?t|will not|don'?t|do not) use\b"
    r"|\bvamos a (?:usar|utilizar|ir con|quedarnos|cambiar|dejar)\b|\bvamos con\b|\bdecid(?:imos|í|ido|ió|ieron)\b"
    r"|\busaremos\b|\bmejor (?:usar|utilizar)\b|\bnos quedamos con\b|\bopt(?:amos|é) por\b"
    r"|\bla decisión (?:es|fue)\b|\bno (?:usar|vamos a usar)\b",
)
_WEAK_DECISION = re.compile(
    r"\bgo(?:ing)? with\b|\binstead of\b|\brather than\b|\bswitch(?:ed|ing)? (?:to|from)\b|\bopt(?:ed|ing)? for\b"
    r"|\b(?:chose|chosen)\b|\ben (?:lugar|vez) de\b",
)
_NARRATION = re.compile(
    r"^(?:let me|i'll|i will|i'm going to|now i|next,? i|voy a|déjame)\b", re.I
)
_FIX = re.compile(
    r"\b(?:fixed|resolved|solved|the fix (?:is|was)|root cause|caused by|this fixes|that fixed|now (?:passes|works|pass)"
    r"|the (?:problem|issue|bug|error) (?:was|is) (?:that|caused|due)|was due to"
    r"|arreglad[oa]s?|solucionad[oa]s?|corregid[oa]s?|se arregló|se solucionó|la causa (?:era|es)"
    r"|el (?:problema|error|fallo) (?:era|estaba))\b",
)
_CONFIG_SPAN = re.compile(r"`([A-Za-z_][\w.-]{0,60}(?:\s*=\s*|:\s+)[^`\n]{1,80})`")
_ENV_ASSIGN = re.compile(r"(?<![\w$-])([A-Z][A-Z0-9_]{2,}=(?:\"[^\"\n]{0,80}\"|'[^'\n]{0,80}'|[^\s;&|]{1,80}))")
_SET_TO = re.compile(r"\bset (?:the )?`?[\w.-]+`? (?:to|=)\s*\S|\bconfigur(?:ed|e) `|\bestablec(?:er|imos|ido) `?[\w.-]+`? (?:a|en)\b")
_NUMBER = re.compile(
    r"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmMbB]\b)?(?:\s?/\s?[A-Za-z]+)?"
    r"|(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:%|(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|"
    r"months?|KB|MB|GB|TB|KiB|MiB|GiB|kB|tokens|rps|req/s|qps|fps|px|USD|EUR|dollars|euros|x|"
    r"segundos?|minutos?|horas?|días?|semanas?|meses)\b))"
)
_TODO_LINE = re.compile(r"^\s*(?:[-*]\s*)?\[ \]\s+(.+)|\b(?:TODO|FIXME)\b[:\s]+(.+)|\bpendiente[s]?:\s*(.+)", re.M)
_NEXT_STEPS = re.compile(r"next steps?|follow[- ]ups?|remaining|still to do|open questions|próximos pasos|pendientes?")
_PLAN_LINE = re.compile(r"^\s*\[(\w[\w -]*)\]\s+(.+)$")
_DONE = {"completed", "complete", "done", "finished"}


def todo_items(text: str) -> list[tuple[str, bool]]:
    """(item, done) from a todo / plan tool call: `[status] content` lines, or the JSON input
    (`todos` with `content`, or `plan` with `step`)."""
    t = text.strip()
    items: list[tuple[str, bool]] = []
    if t.startswith("{"):
        try:
            data = json.loads(t)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for entry in data.get("todos") or data.get("plan") or []:
                if isinstance(entry, dict):
                    content = entry.get("content") or entry.get("step") or entry.get("text")
                    if isinstance(content, str) and content.strip():
                        items.append((content.strip(), str(entry.get("status", "")).lower() in _DONE))
            return items
    for line in t.splitlines():
        m = _PLAN_LINE.match(line)
        if m:
            items.append((m.group(2).strip(), m.group(1).strip().lower() in _DONE))
    return items


# -- the digest ---------------------------------------------------------------------------------


@dataclass
class Request:
    text: str
    order: int
    weak: bool  # a few words ("please fix these"): needs its context to mean anything
    context: str | None  # the command or error the person was looking at, for a weak request


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


_SESSION_ID = re.compile(r"session(?:_id| ID)?\"?\s*[:=]?\s*(\d+)")
_NARRATION_LEAD = re.compile(r"^(?:now |next,? |ok(?:ay)?,? |perfect[!.,]? |great[!.,]? )?(?:let me|i'll|i will|i'm going to|i have|i now have|i've got)\b", re.I)


def digest(blocks: list[Block], cwd: str | None = None) -> Digest:
    d = Digest()
    atoms = d.atoms
    pending: list[str] = []  # shell commands waiting for their result
    running: dict[str, str] = {}  # unified exec: session id -> the command still running in it
    polled: list[str | None] = []  # the command each write_stdin call reads from
    errored: set[str] = set()
    last_todo: str | None = None
    context: str | None = None  # what the person last saw: for a short request that follows
    assistant: list[tuple[int, str]] = []

    def add_file(raw: str, score: float, order: int, edited: bool = False) -> None:
        path = norm_path(raw, cwd)
        if path:
            atoms.add("file", path, score, order)
            if edited and path not in d.edited:
                d.edited.append(path)

    def add_errors(text: str, order: int, bonus: float, is_error: bool) -> bool:
        nonlocal context
        found = False
        for line, strength in error_lines(text):
            atoms.add("error", line, strength + bonus, order)
            found = True
            context = context or line
        if is_error and not found:
            line = first_line(text)
            if line:
                atoms.add("error", line, 1.5 + bonus, order)
                found = True
        return found

    for order, block in enumerate(blocks):
        text = block.text or ""
        tool = (block.tool or "").lower()
        is_shell = tool in SHELL_TOOLS or ("shell" in tool and tool != "write_stdin")
        if block.kind == "text" and block.role == "user":
            if is_scaffolding(text):
                continue
            d.user_texts.append(text)
            if is_ack(text):
                continue
            weak = len(text) < 80 and len(content_words(text)) < 3
            d.requests.append(Request(text, order, weak, context if weak else None))
            context = None
            add_errors(text, order, 1.0, False)  # a pasted error is what the person cares about
            for raw in mentioned_paths(text):
                add_file(raw, 1.0, order)
        elif block.kind == "text" and block.role == "assistant":
            d.assistant_texts.append(text)
            assistant.append((order, text))
        elif block.kind == "tool_call":
            if tool == "write_stdin":
                m = _SESSION_ID.search(text)
                polled.append(running.get(m.group(1)) if m else None)
            elif is_shell:
                command = shell_command(text)
                if not command:
                    continue
                weight = command_weight(command) + (1.0 if block.role == "user" else 0.0)
                atoms.add("command", command_atom(command), weight, order)
                pending.append(command)
                d.last_command = context = command
                for raw in mentioned_paths(command):
                    add_file(raw, 0.5, order)
                for m in _ENV_ASSIGN.finditer(command):
                    atoms.add("config", m.group(1), 1.0, order)
            elif tool in EDIT_TOOLS:
                for raw in tool_paths(text):
                    add_file(raw, 4.0, order, edited=True)
            elif tool in READ_TOOLS and tool not in ("grep", "glob", "search"):
                for raw in tool_paths(text):
                    add_file(raw, 1.5, order)
            elif tool in TODO_TOOLS:
                last_todo = text
        elif block.kind == "tool_result":
            if tool in QUIET_RESULT_TOOLS and not block.is_error:
                continue
            command = None
            if tool == "write_stdin":
                command = polled.pop(0) if polled else None
            elif (is_shell or not tool) and pending:
                command = pending.pop(0)
                m = re.search(r"Process running with session ID (\d+)", text[:400])
                if m:
                    running[m.group(1)] = command
            # Output of a look around (rg, cat, ls) quotes code and logs: its "errors" are rarely
            # the session's; output of a build or a test run is where they are.
            weight = command_weight(command) if command else 1.0
            bonus = (1.0 if block.is_error else 0.0) + (1.0 if block.role == "user" else 0.0)
            bonus += -1.5 if weight == 0.0 else (0.5 if weight >= 2.0 else 0.0)
            bad = add_errors(text, order, bonus, block.is_error)
            code = exit_code(text) if (is_shell or tool == "write_stdin") else None
            if command and (block.is_error or bad or (code is not None and code != 0)):
                errored.add(command)

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
    prose = [(r.order, r.text, 2.0, False, False) for r in d.requests]
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

    d.language = detect_language(d.user_texts, d.assistant_texts)
    return d


# (name, words one of which the pattern needs, pattern): `in` on the lower-cased message rules
# most patterns out before they run. The prose patterns are written in lower case and run on
# lower-cased text: `re` is about three times slower with IGNORECASE.
_GATES = (
    ("decision", ("let", "we'll", "we will", "we should", "going to", "decid", "decision", "n't use", "not use",
                  "vamos", "usaremos", "mejor ", "nos quedamos", "opt", "no usar"), _DECISION),
    ("weak", ("go with", "going with", "instead of", "rather than", "switch", "opt", "chose", "lugar de", "vez de"),
     _WEAK_DECISION),
    ("fix", ("fix", "resolv", "solv", "root cause", "caused by", "now pass", "now work", "due to", "problem",
             "issue", "bug", "error", "arreglad", "solucionad", "corregid", "arregló", "solucionó", "la causa",
             "el problema", "el fallo"), _FIX),
    ("config", ("`",), _CONFIG_SPAN),
    ("set", ("set ", "configur", "establec"), _SET_TO),
    ("number", None, _NUMBER),
    ("env", ("=",), _ENV_ASSIGN),
    ("next", ("next step", "follow", "remaining", "still to do", "open question", "próximos", "pendiente"), _NEXT_STEPS),
)


_CASED = {"config", "number", "env"}  # patterns that look at case: run on the text as written
_DIGIT = re.compile(r"\d")


def _statements(atoms: Candidates, text: str, order: int, weight: float, final: bool) -> None:
    """Decisions, fixes, settings, numbers and todos stated in one message's prose. Each pattern
    runs once on the whole message first: most messages state none of these."""
    body = FENCE.sub("\n", text)
    low = body.lower()
    found = {
        name for name, keys, rx in _GATES
        if (keys is None or any(k in low for k in keys)) and rx.search(body if name in _CASED else low)
    }
    if not final:
        found.discard("next")
    if "weak" in found and weight < 2.0:
        found.discard("weak")  # an explanation mid-session, not a choice
    if found:
        after_heading = False
        for sentence in sentences(body):
            s = _INTERJECTION.sub("", sentence)
            sl = s.lower()
            if len(s) < 12:
                after_heading = "next" in found and bool(_NEXT_STEPS.search(sl))
                continue
            question = s.endswith("?")
            if after_heading and not question:
                atoms.add("todo", s, 1.5 + weight, order)
                continue
            after_heading = "next" in found and s.endswith(":") and bool(_NEXT_STEPS.search(sl))
            if question or _NARRATION.match(s):
                continue
            specific = 0.5 if is_specific(s) else 0.0
            if "decision" in found and _DECISION.search(sl):
                atoms.add("decision", s, weight + 1.0 + specific, order)
            elif "weak" in found and _WEAK_DECISION.search(sl):
                atoms.add("decision", s, weight - 1.0 + specific, order)
            elif "fix" in found and (m := _FIX.search(sl)) and m.start() < 40:
                atoms.add("fix", s, weight - 0.5 + 2 * specific, order)
            elif ("config" in found and _CONFIG_SPAN.search(s)) or ("set" in found and _SET_TO.search(sl)):
                atoms.add("config", s, weight, order)
            elif "number" in found and _DIGIT.search(s) and _NUMBER.search(s):
                atoms.add("number", s, weight - 0.5 + specific, order)
            if "env" in found:
                for m in _ENV_ASSIGN.finditer(s):
                    atoms.add("config", m.group(1), weight, order)
    if "todo" in low or "fixme" in low or "[ ]" in body or "pendiente" in low:
        for m in _TODO_LINE.finditer(body):
            item = next(g for g in m.groups() if g)
            atoms.add("todo", strip_markdown(item), weight + 0.5, order)
