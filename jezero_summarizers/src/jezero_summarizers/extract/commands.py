"""Shell commands: how much a command tells about a session (a build or a test run a lot, a look
at a file nothing), and the command as an atom."""

from __future__ import annotations

import re

from .text import ATOM_TEXT_LIMIT, one_line


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
_LISTS_PATHS = re.compile(r"(?:^|[|;&(]\s*|\bxargs\s+)(?:sudo\s+)?(?:grep|egrep|rg|ag|ack|find|fd|ls|tree|git|locate)\b")
_GIT_WRITE = re.compile(r"\bgit\s+(?:commit|push|merge|rebase|checkout|switch|reset|revert|cherry-pick|tag|stash|clone|pull)\b")


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
    return one_line(head, ATOM_TEXT_LIMIT - 2) + (" …" if not head.endswith("…") else "")
