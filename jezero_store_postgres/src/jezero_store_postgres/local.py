"""A throwaway PostgreSQL server on this machine, for the tests and the benchmarks: `initdb` into
a temporary folder, `pg_ctl start` on 127.0.0.1 and a free port, `stop` removes it all.

PostgreSQL refuses to run as root (CI runs as root), so as root the server runs as an
unprivileged user (`nobody`, through `setpriv`) that owns the temporary folder. The binaries
come from the machine: Debian's `postgresql` package (`/usr/lib/postgresql/<version>/bin`,
installed by `.ci/run`) or any `initdb` on PATH. Nothing here is used by a real deployment,
which points `[storage] url_env` at its own server.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

# Durability is not what a throwaway server is for: without fsync a test run's server starts and
# writes several times faster, and a crash loses only the test's own data.
FAST_SETTINGS = ("-c fsync=off -c full_page_writes=off -c synchronous_commit=off "
                 "-c max_connections=200 -c shared_buffers=128MB")
UNPRIVILEGED = "nobody"


class NoServer(RuntimeError):
    """No PostgreSQL server can be started here (the reason is the message)."""


def binaries() -> Path:
    """The folder holding initdb, pg_ctl and postgres; NoServer when there is none."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if os.path.exists(os.path.join(folder, "initdb")):
            return Path(folder)
    raise NoServer("no PostgreSQL server binaries (initdb) on PATH or in /usr/lib/postgresql/*/bin; "
                   "install Debian's `postgresql` package (.ci/run does) to run the postgres backend's tests")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """One server: `start()`, then `url(dbname)` and `create_database(name)`; `stop()` at the end."""

    def __init__(self, user: str = "jezero"):
        self.user = user
        self.bin = binaries()
        self.root = Path(tempfile.mkdtemp(prefix="jezero-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                import pwd

                pw = pwd.getpwnam(UNPRIVILEGED)
            except KeyError:
                raise NoServer(f"running as root and there is no user {UNPRIVILEGED!r} to run PostgreSQL as") from None
            if not shutil.which("setpriv"):
                raise NoServer("running as root and `setpriv` (util-linux) is missing: PostgreSQL refuses root")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self._as = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]
        os.chmod(self.root, 0o700)

    def _run(self, *args: str, timeout: float = 60) -> None:
        proc = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LC_ALL": "C"})
        if proc.returncode != 0:
            raise NoServer(f"{Path(args[0]).name} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-800:]}")

    def start(self) -> "LocalServer":
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user, "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync", timeout=120)
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 {FAST_SETTINGS}"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "60",
                  "-o", opts, "start", timeout=90)
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
