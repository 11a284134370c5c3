"""The pricing store (gpuplan_core/pricing/store.py): files by content hash, in SQLite and in a real PostgreSQL
server (tests/postgres.py starts one; skipped without Debian's package, failed under CI=true)."""

from __future__ import annotations

import hashlib

import pytest

from gpuplan_core.pricing.csv_file import load_pricing_text
from gpuplan_core.pricing.store import (
    DATA_DIR_ENV,
    DATABASE_URL_ENV,
    DAY_S,
    EXPIRY_DAYS,
    LINK_DIGITS,
    MAX_FILE_BYTES,
    MAX_FILES,
    SQLITE_FILE,
    PricingStore,
    StoreError,
    content_hash,
    missing_note,
    normalise,
    open_store,
    valid_key,
)
from tests.postgres import emptied, postgres_url


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0  # 2027-01-15

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgresql"])
def make(request, tmp_path):
    """make(**limits) -> a fresh, empty store on the backend of this parameter, and the clock it reads."""
    clock = Clock()
    if request.param == "sqlite":
        url, folder = "", tmp_path / "data"
    else:
        url, folder = emptied(postgres_url()), None

    def _make(**limits) -> PricingStore:
        return open_store(url, folder, clock=clock, **limits)

    _make.clock = clock
    _make.backend = request.param
    return _make


def csv_text(seed_row, n: int = 1, crlf: bool = False) -> str:
    """The seed file's header and n offers (the AWS p6-b200 row under ids team-0, team-1, ...)."""
    header, row = seed_row
    rows = [header] + [row.replace(row.split(",", 1)[0], f"team-{i}", 1) for i in range(n)]
    return ("\r\n" if crlf else "\n").join(rows) + "\n"


def test_a_file_comes_back_as_it_was_put(make, seed_row):
    store, text = make(), csv_text(seed_row, 2)
    kept = store.put(text.encode(), "team.csv", "upload")
    sha = hashlib.sha256(text.encode()).hexdigest()  # already normalised: LF line ends, one final newline
    assert (kept.sha256, kept.key, kept.name, kept.kind) == (sha, sha[:LINK_DIGITS], "team.csv", "upload")
    assert len(kept.key) == 16 and valid_key(kept.key)
    for key in (kept.key, sha):  # the link's 16 digits, or the whole hash
        got = store.get(key)
        assert got is not None and got.data == text.encode() and got.size_bytes == len(text.encode())
        assert (got.name, got.kind, got.created_s) == ("team.csv", "upload", make.clock.now)
    assert store.count() == 1


def test_the_same_content_has_the_same_hash_and_is_kept_once(make, seed_row):
    store = make()
    plain = csv_text(seed_row)
    windows = "\ufeff" + csv_text(seed_row, crlf=True) + "\r\n\r\n"  # BOM, CRLF, trailing blank lines
    assert normalise(windows.encode()) == plain.encode() and content_hash(windows) == content_hash(plain)
    a, b = store.put(plain, "a.csv"), store.put(windows.encode(), "b.csv")
    assert a.sha256 == b.sha256 and a.key == b.key and store.count() == 1
    assert b.name == "a.csv"  # the first name stays
    other = store.put(csv_text(seed_row, 2))
    assert other.sha256 != a.sha256 and store.count() == 2


def test_a_file_over_the_size_limit_is_refused_with_the_limit(make, seed_row):
    store = make(max_file_bytes=1_000)
    big = csv_text(seed_row, 20).encode()
    assert len(big) > 1_000
    with pytest.raises(StoreError, match=rf"is {len(big):,} bytes; this server keeps files of at most 1,000 bytes"):
        store.put(big)
    with pytest.raises(StoreError, match="empty"):
        store.put(b"\r\n\n")
    assert store.count() == 0
    assert MAX_FILE_BYTES == 5_000_000  # the pricing reader's own limit (README)


def test_beyond_the_count_limit_the_least_recently_used_goes(make, seed_row):
    store = make(max_files=3)
    keys = []
    for n in range(1, 4):
        keys.append(store.put(csv_text(seed_row, n)).key)
        make.clock.now += 7200
    assert store.get(keys[0]) is not None  # opened by a link 2 h after its last use: used now, so the newest
    make.clock.now += 7200
    keys.append(store.put(csv_text(seed_row, 4)).key)
    assert store.count() == 3
    assert store.get(keys[1]) is None  # the least recently used of the four
    assert all(store.get(k) is not None for k in (keys[0], keys[2], keys[3]))
    assert MAX_FILES == 500


def test_a_file_unused_for_the_expiry_is_gone(make, seed_row):
    store = make()
    a, b = store.put(csv_text(seed_row, 1)), store.put(csv_text(seed_row, 2))
    make.clock.now += (EXPIRY_DAYS - 1) * DAY_S
    assert store.get(a.key) is not None  # used on day 89: lives 90 days from now
    make.clock.now += 1 * DAY_S + 1
    assert store.get(b.key) is None  # 90 days and a second unused
    assert store.get(a.key) is not None and store.count() == 1
    make.clock.now += EXPIRY_DAYS * DAY_S + 1
    assert store.get(a.key) is None and store.count() == 0
    assert EXPIRY_DAYS == 90


def test_a_link_prefix_shared_with_another_file_gets_more_digits(make, seed_row):
    store, text = make(), csv_text(seed_row)
    sha = content_hash(text)
    twin = sha[:LINK_DIGITS] + ("0" if sha[LINK_DIGITS] != "0" else "1") + "f" * 47  # same 16 digits, not sha
    with store._cursor() as cur:  # a file already kept whose link is those 16 digits
        cur.execute(
            store._sql("INSERT INTO pricing_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
            (twin, sha[:LINK_DIGITS], "twin.csv", "upload", 1, b"x", make.clock.now, make.clock.now),
        )
    kept = store.put(text, "team.csv")
    assert kept.key == sha[: LINK_DIGITS + 1]
    assert store.get(sha[:LINK_DIGITS]).name == "twin.csv"  # each link still opens its own file
    assert store.get(kept.key).name == "team.csv" and store.get(sha).name == "team.csv"


def test_a_malformed_row_is_still_reported_row_by_row(make, corpus):
    raw = (corpus / "negative_price.csv").read_bytes()  # CRLF line ends: kept with LF ones
    assert raw.count(b"\r\n") == 3
    before = load_pricing_text(raw)
    assert [str(e) for e in before.errors] == [
        "line 3 (offer aws-p5-48xl-use1-od), column price_per_gpu_hour_usd: -6.88 is not allowed; allowed: above 0 "
        "(> 0 USD per GPU-hour)",
        "line 3 (offer aws-p5-48xl-use1-od), column price_per_node_hour_usd: -55.04 is not allowed; allowed: above 0 "
        "(> 0 USD per node-hour)",
    ]
    store = make()
    got = store.get(store.put(raw, "negative_price.csv").key)
    assert b"\r" not in got.data
    after = load_pricing_text(got.data)
    assert [str(e) for e in after.errors] == [str(e) for e in before.errors]  # same lines, columns, messages
    assert [o.offer_id for o in after.offers] == [o.offer_id for o in before.offers] == ["aws-p6-b200-48xl-use1-od"]


def test_a_key_that_names_no_file(make):
    store = make()
    for key in ("0" * 16, "0123456789abcdef0123", "not-a-hash", "ABCDEF0123456789", "", "0" * 15):
        assert store.get(key) is None
    assert not valid_key("0" * 15) and not valid_key("0" * 65) and valid_key("0" * 64)
    note = missing_note("0123456789abcdef")
    assert "0123456789abcdef" in note and "does not hold" in note and "catalog's prices" in note
    assert "90 days" in note and "500 files" in note
    assert "not a pricing file's name" in missing_note("<script>")


def test_sqlite_lives_in_the_data_folder_and_a_lookup_creates_nothing(tmp_path, monkeypatch, seed_row):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "here"))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    store = open_store()
    assert store.get("0" * 16) is None and store.count() == 0 and not (tmp_path / "here").exists()
    store.put(csv_text(seed_row))
    assert (tmp_path / "here" / SQLITE_FILE).is_file() and store.where == f"SQLite at {tmp_path / 'here' / SQLITE_FILE}"
    assert open_store().get(content_hash(csv_text(seed_row))) is not None  # another host process, same folder


def test_a_postgresql_url_that_cannot_be_used_says_why():
    with pytest.raises(StoreError, match="postgresql://user:password@host:5432/database"):
        open_store("mysql://x@y/z")
    store = open_store("postgresql://nobody@127.0.0.1:9/none")  # nothing listens on port 9
    with pytest.raises(StoreError, match=r"cannot reach the pricing database \(PostgreSQL at 127.0.0.1:9/none\)"):
        store.get("0" * 16)
