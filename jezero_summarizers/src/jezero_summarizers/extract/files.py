"""File paths: those named in prose or a command, those a command's output lists, relative to the
session's folder, without installed packages and system folders."""

from __future__ import annotations

import re

from .text import ATOM_TEXT_LIMIT


_CODE_EXT = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|rb|java|kt|kts|c|h|cc|cpp|hpp|cs|php|swift|m|scala|lua|r|jl|dart|ex|exs|erl|"
    "md|rst|toml|yaml|yml|json|jsonl|ini|cfg|conf|sql|sh|bash|zsh|ps1|html|css|scss|vue|svelte|lock|txt|env|tf|"
    "proto|xml|gradle|ipynb|csv|dockerfile|mk"
)
_PATH_PIECE = re.compile(r"(?:~/|\.{1,2}/|/)?(?:\.?[\w@+-][\w@.+-]*/)*[\w@+-][\w@.+-]*\.([A-Za-z][A-Za-z0-9]{0,7})")
_PIECES = re.compile(r"[\s()\[\]{}<>\"'`,;|=*]+")
_CODE_EXTS = frozenset(_CODE_EXT.split("|"))
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$|#L\d+(?:-L?\d+)?$")
_EDITS_SUFFIX = re.compile(r"\s+\(\d+ edits?\)$")


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
    config extension (`path::name`, a test id or a qualified name, names the path). URLs and
    versions are not paths."""
    found = []
    for piece in _PIECES.split(text):
        if "." not in piece or "://" in piece or len(piece) > ATOM_TEXT_LIMIT:
            continue
        if "::" in piece:
            piece = piece.split("::", 1)[0]
        piece = _LINE_SUFFIX.sub("", piece.rstrip(".:!?*")).rstrip(".:")
        m = _PATH_PIECE.fullmatch(piece)
        if m and ("/" in piece or m.group(1).lower() in _CODE_EXTS):
            found.append(piece)
    return found


# A path at the head of a line of output: grep -n (`path:12:`), git status and diff --stat, find,
# a failing test (`FAILED path::test`, `FAIL path (1.2 s)`), the frames of a Python traceback.
# Not a passing suite or a progress line (`PASS path`, `path ....  [ 40%]`): every run lists those.
_OUTPUT_PATH = re.compile(
    r"^[ \t]*(?:[MADRCU?!]{1,2}[ \t]+|(?:modified|new file|deleted|renamed|both modified):[ \t]+|\+\+\+ b/|--- a/|"
    r"diff --git a/|File \"|(FAILED|FAIL|ERROR)[ \t]+)?"
    r"((?:\.{1,2}/|/)?(?:\.?[\w@+-][\w@.+-]*/)+[\w@+-][\w@.+-]*\.[A-Za-z][A-Za-z0-9]{0,7}"
    r"|[\w@+-][\w@.+-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?=:\d))"
    r"(?:[ \t]*$|[:(,\"]|::|[ \t]+\||(?(1)[ \t]|(?!)))",
)
# Installed packages, caches and system folders: in a traceback or a listing, never the session's.
_VENDOR_DIRS = frozenset(
    "site-packages dist-packages node_modules .venv venv .cargo .rustup .gradle .m2 .npm .cache __pycache__ .git .tox "
    ".mypy_cache .pytest_cache".split()
)
_SYSTEM_ROOTS = ("/usr/", "/lib/", "/lib64/", "/proc/", "/sys/", "/nix/", "/System/", "<")


def is_vendor_path(path: str) -> bool:
    """In an installed package, a cache or a system folder: never the session's own file."""
    return path.startswith(_SYSTEM_ROOTS) or ("/" in path and not _VENDOR_DIRS.isdisjoint(path.split("/")[:-1]))


_VERSION = re.compile(r"\d\.\d")
OUTPUT_PATH_SCORE = 0.4  # below a path the agent edited, read, ran or named
OUTPUT_PATHS_FOCUSED = 8  # more paths than this in one output is a listing, not a finding
OUTPUT_PATH_CHARS = 8000


def output_paths(text: str) -> list[str]:
    """Distinct paths that a command's output lists at the head of its lines (grep, find, git,
    failing tests, traceback frames), without installed packages and system folders."""
    head = text[:OUTPUT_PATH_CHARS]
    if "." not in head:
        return []
    cut_at = head.find(" characters cut ...]")
    if cut_at >= 0:  # the lines on either side of a cut are pieces of lines
        before, after = head.rfind("\n", 0, head.rfind("\n", 0, cut_at)), head.find("\n", head.find("\n", cut_at) + 1)
        head = head[:max(before, 0)] + ("\n" + head[after + 1:] if after >= 0 else "")
    found: dict[str, None] = {}
    for line in head.splitlines():  # a match per line: far faster than `^` in MULTILINE mode
        if "." not in line:
            continue
        m = _OUTPUT_PATH.match(line)
        if m is None:
            continue
        path = m.group(2)
        if "/" not in path and path.rsplit(".", 1)[-1].lower() not in _CODE_EXTS:
            continue
        if m.group(0).lstrip().startswith('File "') and not path.endswith(".py"):
            continue  # a compiled module's frame (`pyarrow/_dataset.pyx`)
        if is_vendor_path(path) or _VERSION.search(path.rsplit("/", 1)[-1]):
            continue  # a version (`pkg-1.2.3.tar.gz`), not a file of the project
        found[path] = None
        if len(found) > OUTPUT_PATHS_FOCUSED:
            break  # a listing: the caller counts it as one
    return list(found)
