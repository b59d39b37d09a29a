"""What the person at the terminal reads when the library file itself is the problem: one line
saying what is wrong and how to recover, never a traceback. Used by `jezero.cli.main` around
every command, so each command need not guard each query."""

from __future__ import annotations

import errno
import re

import apsw

DAMAGED = (apsw.NotADBError, apsw.CorruptError)
READ_ONLY = (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError, apsw.AuthError)
_SURROGATE = re.compile("[\ud800-\udfff]")


def argument_problem(e: BaseException, argv: list[str]) -> str | None:
    """A one-line explanation when `e` comes from a command-line argument that is not UTF-8 text
    (Python keeps a byte of another encoding as a lone surrogate, which no SQLite text can hold:
    `--project $'\\xff'` failed with a UnicodeEncodeError traceback); None otherwise."""
    if not isinstance(e, UnicodeEncodeError):
        return None
    bad = [a for a in argv if _SURROGATE.search(a)]
    if not bad:
        return None
    shown = bad[0].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return f"the argument {shown!r} is not UTF-8 text (a byte of another encoding): give it in UTF-8"


def library_problem(e: BaseException, library: str) -> str | None:
    """A one-line explanation of a failure of the library file, or None when `e` is not one."""
    from jezero.store import StoreError

    if isinstance(e, StoreError):  # written for a person already (e.g. a database server unreachable)
        return str(e)
    if isinstance(e, DAMAGED):
        return (f"the library {library} is damaged or not a Jezero library ({e}); nothing was changed. To "
                "recover: move the file aside (keep it) and run `jezero run` to rebuild it from the transcripts, "
                "or put back a backup")
    if isinstance(e, apsw.FullError) or (isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EFBIG)):
        return (f"no space left to write the library {library} ({e}); what was written before is kept and the "
                "rest will be read again next run: free some space and run again")
    if isinstance(e, READ_ONLY) or (isinstance(e, OSError) and e.errno in (errno.EACCES, errno.EPERM, errno.EROFS)):
        return (f"cannot write the library {library} or its folder: read-only or not yours ({e}); nothing was "
                "changed. Make both writable for this user, or set storage.path to a writable place")
    if isinstance(e, apsw.SQLError) and "no such table" in str(e):
        # A reader of an empty file (made by `touch`, a copy cut short), or of another program's
        # database: readers write nothing, so only a writer can make it a library.
        return (f"the library {library} is empty or not a Jezero library ({e}); nothing was changed. `jezero run` "
                "makes an empty file a library; for another program's database, set storage.path elsewhere")
    if isinstance(e, apsw.BusyError):
        return f"the library {library} is locked by another process ({e}); try again in a moment"
    if isinstance(e, apsw.IOError):
        return (f"the library {library} could not be read or written ({e}): check the disk and the file's "
                "permissions, then run again")
    return None
