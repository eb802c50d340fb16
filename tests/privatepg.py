"""A PostgreSQL server of the test's own, which the test stops and starts (a real outage).

`initdb` and `pg_ctl` in a temporary folder on a free loopback port, trust authentication, no
fsync. PostgreSQL refuses to run as root: as root (CI) the server runs as the `postgres` user,
else `nobody`. Tests skip when the binaries are missing (`pg_ctl` is looked up on PATH and in
/usr/lib/postgresql/*/bin).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def postgres_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl, or None."""
    found = shutil.which("pg_ctl")
    candidates = [str(Path(found).resolve().parent)] if found else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if (Path(folder) / "pg_ctl").is_file() and (Path(folder) / "initdb").is_file():
            return Path(folder)
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_user() -> str | None:
    """Whom to run the server as: None when not root (as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


class PrivatePostgres:
    """One PostgreSQL cluster in a temporary folder; `stop()` and `start()` are the outage."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.user = _server_user()
        # Not under pytest's tmp_path: its folders are root's alone, and the server runs as another user.
        self.root = Path(tempfile.mkdtemp(prefix="vllm-digest-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self.start()

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "-t", "60", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def running(self) -> bool:
        status = subprocess.run(
            [str(self.binaries / "pg_ctl"), "-D", str(self.data), "status"],
            capture_output=True,
            text=True,
            user=self.user,
            check=False,
        )
        return status.returncode == 0

    def close(self) -> None:
        if self.running():
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [str(self.binaries / program), *args],
            capture_output=True,
            text=True,
            check=True,
            cwd=self.root,
            user=self.user,
            timeout=120,
        )
