"""Pricing files kept on the server by content hash, so that a link can name one (``pricefile=<key>``).

A file is kept under the sha256 of its normalised bytes (a UTF-8 byte-order mark dropped, ``\\r\\n`` line ends
written ``\\n``, trailing blank lines dropped): the same content has the same hash whoever uploads it, on any host.
A link carries the hash's first ``LINK_DIGITS`` hex digits, or more when another file kept here already has a
link of those digits (checked on every ``put``; the full hash is accepted too).

Where: an embedded SQLite database, ``pricing.sqlite3`` in the data folder (``GPUPLAN_DATA_DIR``, default
``./gpuplan-data``), or one PostgreSQL server that several hosts share (``GPUPLAN_DATABASE_URL=postgresql://
user:password@host:5432/db``; its driver, pg8000, is imported only then).

Limits, each refused or applied with a sentence saying so: a file of at most ``MAX_FILE_BYTES``; at most
``MAX_FILES`` files (putting one more removes the least recently used); a file unused for ``EXPIRY_DAYS`` days is
gone (a link to it then says so and the catalog's prices are used).

No streamlit here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from .csv_file import MAX_PRICING_BYTES

DATA_DIR_ENV = "GPUPLAN_DATA_DIR"
DATABASE_URL_ENV = "GPUPLAN_DATABASE_URL"
DEFAULT_DATA_DIR = "gpuplan-data"
SQLITE_FILE = "pricing.sqlite3"

MAX_FILE_BYTES = MAX_PRICING_BYTES  # 5 MB: what the pricing reader reads at all
MAX_FILES = 500  # the least recently used beyond these are removed
EXPIRY_DAYS = 90  # since the file was last put or opened by a link
LINK_DIGITS = 16  # hex digits of the hash in a link (64 bits)
TOUCH_EVERY_S = 3600.0  # a lookup records its use at most this often (one write an hour, not one per rerun)
DAY_S = 86_400.0
KEY_RE = re.compile(rf"[0-9a-f]{{{LINK_DIGITS},64}}")


class StoreError(ValueError):
    """A file this store will not keep, or a store it cannot reach: the reason, in words."""


@dataclass(frozen=True)
class StoredFile:
    sha256: str  # of the normalised bytes
    key: str  # what a link carries: a prefix of sha256 no other file kept here has as its link
    name: str  # the file's name or the link it was fetched from
    kind: str  # "upload", "link" or "catalogs"
    data: bytes  # the normalised bytes
    created_s: float  # Unix time first put
    last_used_s: float

    @property
    def size_bytes(self) -> int:
        return len(self.data)


def normalise(data: bytes | str) -> bytes:
    """The bytes that are hashed and kept: UTF-8 without a byte-order mark, ``\\n`` line ends, one final line end.
    Bytes that are not UTF-8 are kept as they are (the pricing reader reports them)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    text = text.lstrip("\ufeff").replace("\r\n", "\n").rstrip("\n")  # a lone CR is the CSV reader's to read
    return (text + "\n").encode("utf-8") if text else b""


def content_hash(data: bytes | str) -> str:
    return hashlib.sha256(normalise(data)).hexdigest()


def valid_key(key: str) -> bool:
    """Is this what a link's ``pricefile`` can hold: 16 to 64 lowercase hex digits."""
    return bool(KEY_RE.fullmatch(key or ""))


def missing_note(key: str) -> str:
    """What a page says when a link names a pricing file this server does not hold."""
    shown = key[:64]
    if not valid_key(key):
        return (
            f"This link's pricing file pricefile={shown!r} is not a pricing file's name here (16 to 64 hex digits): "
            "the answers use the catalog's prices. Upload the file on Data & pricing to use it."
        )
    return (
        f"This link names the pricing file {shown}, which this server does not hold (files unused for "
        f"{EXPIRY_DAYS} days expire, and beyond {MAX_FILES} files the least recently used go; or it was uploaded to "
        "another server): the answers use the catalog's prices. Upload the file on Data & pricing to use it again."
    )


class _Db:
    """One SQL database: connections and the statements that differ between SQLite and PostgreSQL."""

    param = "?"
    blob = "BLOB"
    real = "REAL"
    where = ""
    errors: tuple[type[Exception], ...] = (sqlite3.Error,)  # the driver's errors, reported as StoreError

    def connect(self) -> Any:
        raise NotImplementedError

    def exists(self) -> bool:
        return True

    def release(self, con: Any, failed: bool) -> None:
        con.close()


class _Sqlite(_Db):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = f"SQLite at {path}"

    def exists(self) -> bool:
        return self.path.exists()

    def connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the pricing database ({self.where}): {exc}") from None
        con.execute("PRAGMA busy_timeout = 30000")
        return con


class _Postgres(_Db):
    param = "%s"
    blob = "BYTEA"
    real = "DOUBLE PRECISION"

    def __init__(self, url: str) -> None:
        u = urlsplit(url)
        if u.scheme not in ("postgresql", "postgres") or not u.hostname:
            raise StoreError(f"{DATABASE_URL_ENV} must look like postgresql://user:password@host:5432/database")
        self.kw = {
            "user": unquote(u.username or "postgres"),
            "password": unquote(u.password) if u.password else None,
            "host": u.hostname,
            "port": u.port or 5432,
            "database": unquote(u.path.lstrip("/")) or None,
        }
        self.where = f"PostgreSQL at {u.hostname}:{u.port or 5432}/{self.kw['database'] or ''}"
        self._local = threading.local()

    def connect(self) -> Any:
        """This thread's connection, opened on first use and kept (a connection costs a round of authentication)."""
        import pg8000.dbapi  # only when a PostgreSQL server is configured

        self.errors = (pg8000.dbapi.Error,)
        if (con := getattr(self._local, "con", None)) is not None:
            return con
        try:
            self._local.con = pg8000.dbapi.connect(timeout=30, **self.kw)
        except (OSError, pg8000.dbapi.Error) as exc:
            raise StoreError(f"cannot reach the pricing database ({self.where}): {exc}") from None
        return self._local.con

    def release(self, con: Any, failed: bool) -> None:
        if failed:  # a broken connection is not used again
            self._local.con = None
            with contextlib.suppress(Exception):
                con.close()


class PricingStore:
    """Pricing files by content hash in one SQL database (``open_store`` picks it from the environment)."""

    def __init__(
        self,
        db: _Db,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_files: int = MAX_FILES,
        expiry_days: float = EXPIRY_DAYS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db, self.clock = db, clock
        self.max_file_bytes, self.max_files, self.expiry_days = max_file_bytes, max_files, expiry_days
        self._ready = False

    @property
    def where(self) -> str:
        return self.db.where

    def _sql(self, text: str) -> str:
        return text.replace("?", self.db.param)

    @contextlib.contextmanager
    def _cursor(self) -> Iterator[Any]:
        """One transaction: committed when the block ends, rolled back on an error."""
        con, failed = self.db.connect(), True
        try:
            cur = con.cursor()
            if not self._ready:
                cur.execute(
                    f"CREATE TABLE IF NOT EXISTS pricing_files (sha256 TEXT PRIMARY KEY, link_key TEXT NOT NULL "
                    f"UNIQUE, name TEXT NOT NULL, kind TEXT NOT NULL, size_bytes INTEGER NOT NULL, data "
                    f"{self.db.blob} NOT NULL, created_s {self.db.real} NOT NULL, last_used_s {self.db.real} NOT NULL)"
                )
                cur.execute("CREATE INDEX IF NOT EXISTS pricing_files_last_used ON pricing_files (last_used_s)")
                con.commit()
                self._ready = True
            yield cur
            con.commit()
            failed = False
        except BaseException as exc:
            with contextlib.suppress(Exception):
                con.rollback()
            if isinstance(exc, self.db.errors):
                raise StoreError(f"the pricing database ({self.where}) failed: {exc}") from exc
            raise
        finally:
            self.db.release(con, failed)

    def put(self, data: bytes | str, name: str = "", kind: str = "upload") -> StoredFile:
        """Keep a file (or mark a file kept already as used now); returns it with the key its link carries.
        Raises StoreError for a file over the size limit or an empty one."""
        body = normalise(data)
        if len(body) > self.max_file_bytes:
            raise StoreError(
                f"the pricing file is {len(body):,} bytes; this server keeps files of at most "
                f"{self.max_file_bytes:,} bytes, so it cannot be put in a link"
            )
        if not body.strip():
            raise StoreError("the pricing file is empty")
        sha, now, name = hashlib.sha256(body).hexdigest(), self.clock(), (name or "pricing file")[:200]
        with self._cursor() as cur:
            cur.execute(self._sql("DELETE FROM pricing_files WHERE last_used_s < ?"), (now - self._expiry_s(),))
            cur.execute(self._sql("SELECT link_key FROM pricing_files WHERE sha256 = ?"), (sha,))
            row = cur.fetchone()
            if row is None:
                key = self._free_key(cur, sha)
                cur.execute(
                    self._sql("INSERT INTO pricing_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                    (sha, key, name, kind, len(body), body, now, now),
                )
            else:
                key = row[0]
                cur.execute(self._sql("UPDATE pricing_files SET last_used_s = ? WHERE sha256 = ?"), (now, sha))
            cur.execute("SELECT COUNT(*) FROM pricing_files")
            extra = int(cur.fetchone()[0]) - self.max_files
            if extra > 0:  # the least recently used go (never the one just put)
                cur.execute(
                    self._sql(
                        "DELETE FROM pricing_files WHERE sha256 IN (SELECT sha256 FROM pricing_files WHERE "
                        "sha256 <> ? ORDER BY last_used_s, created_s LIMIT ?)"
                    ),
                    (sha, extra),
                )
            cur.execute(self._sql(f"SELECT {_COLUMNS} FROM pricing_files WHERE sha256 = ?"), (sha,))
            return _stored(cur.fetchone())

    def get(self, key: str) -> StoredFile | None:
        """The file a link names (its link key, or its full hash); None when this store does not hold it (never
        kept here, removed as the least recently used, or expired: an expired file is removed now)."""
        if not valid_key(key) or not self.db.exists():
            return None
        now = self.clock()
        with self._cursor() as cur:
            cur.execute(self._sql(f"SELECT {_COLUMNS} FROM pricing_files WHERE link_key = ? OR sha256 = ?"), (key, key))
            row = cur.fetchone()
            if row is None:
                return None
            found = _stored(row)
            if found.last_used_s < now - self._expiry_s():
                cur.execute(self._sql("DELETE FROM pricing_files WHERE sha256 = ?"), (found.sha256,))
                return None
            if now - found.last_used_s > TOUCH_EVERY_S:
                cur.execute(self._sql("UPDATE pricing_files SET last_used_s = ? WHERE sha256 = ?"), (now, found.sha256))
            return found

    def count(self) -> int:
        if not self.db.exists():
            return 0
        with self._cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM pricing_files")
            return int(cur.fetchone()[0])

    def _expiry_s(self) -> float:
        return self.expiry_days * DAY_S

    def _free_key(self, cur: Any, sha: str) -> str:
        """The shortest prefix of sha, from LINK_DIGITS digits on, that no file kept here has as its link."""
        lo = sha[:LINK_DIGITS]
        query = "SELECT link_key FROM pricing_files WHERE link_key >= ? AND link_key <= ?"  # every key from lo on
        cur.execute(self._sql(query), (lo, lo + "g"))
        taken = {r[0] for r in cur.fetchall()}
        return next(sha[:n] for n in range(LINK_DIGITS, 65) if sha[:n] not in taken)


_COLUMNS = "sha256, link_key, name, kind, data, created_s, last_used_s"


def _stored(row: tuple) -> StoredFile:
    sha, key, name, kind, data, created, used = row
    return StoredFile(sha, key, name, kind, bytes(data), float(created), float(used))


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def open_store(database_url: str | None = None, folder: str | Path | None = None, **limits: Any) -> PricingStore:
    """The store this server uses: PostgreSQL when ``GPUPLAN_DATABASE_URL`` (or ``database_url``) is set, else
    SQLite in the data folder (``GPUPLAN_DATA_DIR`` or ``folder``; created on the first file put)."""
    url = database_url if database_url is not None else os.environ.get(DATABASE_URL_ENV, "")
    if url:
        return PricingStore(_Postgres(url), **limits)
    return PricingStore(_Sqlite(Path(folder or data_dir()) / SQLITE_FILE), **limits)


_OPENED: dict[tuple[str, str], PricingStore] = {}


def server_store() -> PricingStore:
    """``open_store()`` for the environment as it is now, opened once per database (the app's store)."""
    place = (os.environ.get(DATABASE_URL_ENV, ""), str(data_dir()))
    if place not in _OPENED:
        _OPENED[place] = open_store(*place)
    return _OPENED[place]
