"""A real PostgreSQL server for the tests of the PostgreSQL path (GPUPLAN_DATABASE_URL), from Debian's package.

``postgres_url()`` starts one per test session: ``initdb`` and ``pg_ctl`` (found on PATH or under
/usr/lib/postgresql/<version>/bin, where Debian puts them) in a fresh folder under /tmp, as the ``postgres``
user when the tests run as root (PostgreSQL refuses root), listening on a free loopback port, with trust
authentication and no fsync. Without the binaries the tests are skipped; under CI=true they fail (.ci/run
installs the package).
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

_STARTED: dict[str, str] = {}


def _binaries() -> Path | None:
    if found := shutil.which("initdb"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_url() -> str:
    """postgresql://gpuplan@127.0.0.1:<port>/postgres of a server started for this test session."""
    if "url" in _STARTED:
        return _STARTED["url"]
    bin_dir = _binaries()
    if bin_dir is None:
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL is not installed (apt-get install postgresql)")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    as_user: list[str] = []
    root = tempfile.mkdtemp(prefix="gpuplan-pg-")
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        import pwd

        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = f"{root}/data", _free_port()

    def run(*cmd: str) -> None:
        subprocess.run([*as_user, *cmd], check=True, capture_output=True, timeout=120)

    run(str(bin_dir / "initdb"), "-D", data, "-U", "gpuplan", "--auth=trust", "-E", "UTF8", "--no-sync")
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    run(str(bin_dir / "pg_ctl"), "-D", data, "-o", opts, "-l", f"{root}/server.log", "-w", "-t", "60", "start")

    def stop() -> None:
        cmd = [*as_user, str(bin_dir / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]
        subprocess.run(cmd, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)

    atexit.register(stop)
    _STARTED["url"] = f"postgresql://gpuplan@127.0.0.1:{port}/postgres"
    return _STARTED["url"]


def emptied(url: str) -> str:
    """The server's database with no pricing files table (each test starts from an empty store)."""
    import pg8000.dbapi

    port = int(url.rsplit("/", 1)[0].rsplit(":", 1)[1])
    con = pg8000.dbapi.connect(user="gpuplan", host="127.0.0.1", port=port, database="postgres")
    con.autocommit = True
    con.cursor().execute("DROP TABLE IF EXISTS pricing_files")
    con.close()
    return url
