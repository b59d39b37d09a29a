"""Built-in project-hint resolvers. The source's own hints beat the model's guess: the configured
path rules answer first (tryfirst); when no plugin answers, the fallback chain runs (trylast):
the git repository of the working folder (the main repository for a worktree), then the project
a device sent (found by the same rules on the device), then a common root folder, then the
summarizer's guess, then the connector's default."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path, PurePosixPath, PureWindowsPath

from jezero.hookspecs import hookimpl
from jezero.models import ProjectHints, slug


def _parts(cwd: str) -> list[str]:
    path = PureWindowsPath(cwd) if re.match(r"^[A-Za-z]:\\", cwd) else PurePosixPath(cwd)
    return [p for p in path.parts if p not in ("/", "\\") and not p.endswith(":\\")]


def from_rules(cwd: str | None, rules) -> str | None:
    if not cwd:
        return None
    for rule in rules:
        pattern = os.path.expanduser(rule.path if hasattr(rule, "path") else rule[0])
        project = rule.project if hasattr(rule, "project") else rule[1]
        if fnmatch.fnmatchcase(cwd, pattern) or fnmatch.fnmatchcase(cwd, pattern.rstrip("/") + "/*"):
            return project
    return None


def from_git(cwd: str | None) -> str | None:
    """The repository's folder name; for a worktree, the main repository's."""
    if not cwd:
        return None
    try:
        here = Path(cwd)
        if not here.is_absolute() or not here.exists():
            return None
        for folder in (here, *here.parents):
            dot_git = folder / ".git"
            if dot_git.is_dir():
                return slug(folder.name)
            if dot_git.is_file():  # a worktree or submodule: "gitdir: /main/.git/worktrees/x"
                text = dot_git.read_text(errors="replace").strip()
                if text.startswith("gitdir:"):
                    gitdir = Path(text[7:].strip())
                    if not gitdir.is_absolute():
                        gitdir = (folder / gitdir).resolve()
                    if "worktrees" in gitdir.parts:
                        main_git = gitdir.parents[1]  # <main>/.git
                        return slug(main_git.parent.name)
                return slug(folder.name)
    except OSError:
        return None
    return None


def from_roots(cwd: str | None, roots: list[str]) -> str | None:
    """A session in <root>/<project>/... belongs to <project>. A root with no separator (e.g.
    "src") matches a folder of that name anywhere, so paths from other computers work too."""
    if not cwd:
        return None
    parts = _parts(cwd)
    for root in roots:
        if "/" in root or "\\" in root or root.startswith("~"):
            root_parts = _parts(os.path.expanduser(root))
            n = len(root_parts)
            if n and parts[:n] == root_parts and len(parts) > n:
                return slug(parts[n])
        else:
            for i, part in enumerate(parts[:-1]):
                if part == root:
                    return slug(parts[i + 1])
    return None


@hookimpl(tryfirst=True)
def resolve_project(hints: ProjectHints):
    return from_rules(hints.cwd, hints.rules)


class Fallbacks:
    """The last resolver to run, as its own plugin object so it can be ordered trylast."""

    @hookimpl(trylast=True)
    def resolve_project(self, hints: ProjectHints):
        return (
            from_git(hints.cwd)
            # A device resolved its session's project where the folder exists (its git
            # repository, the main one for a worktree): better than the server's guess from
            # the folder's name alone.
            or (slug(hints.device_project) if hints.device_project else None)
            or from_roots(hints.cwd, hints.roots)
            or hints.summarizer_guess
            or hints.default_project
        )
