"""Network fetches, treated as hostile: an allow-list of hosts, a strict model-id pattern, timeouts,
a response size cap, no redirects off the allowed hosts. Offline, callers fall back to bundled data.

Two fetches: a Hugging Face ``config.json`` by model id, and a pricing CSV by URL (the project's own
columns, or a SkyPilot catalog ``vms.csv``), each from its own allow-list.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

import requests

ALLOWED_HOSTS = {"huggingface.co", "hf.co"}
# Where published pricing files live: GitHub (SkyPilot's catalog, a team's own repository or gist) and
# Hugging Face datasets. Anything else is refused before a request is made.
PRICING_HOSTS = {"raw.githubusercontent.com", "gist.githubusercontent.com", "huggingface.co"}
SKYPILOT_PATH = re.compile(r"/catalogs/v\d+/([a-z0-9_-]+)/vms\.csv$")
MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
MAX_BYTES = 2_000_000
TIMEOUT_S = (3.05, 10)
MAX_REDIRECTS = 3


class FetchError(Exception):
    """A fetch that did not give usable data; the message is for the user."""


def check_model_id(model_id: str) -> str:
    mid = (model_id or "").strip()
    if not MODEL_ID.match(mid) or ".." in mid:
        raise FetchError(f"model id {model_id[:80]!r} is not of the form owner/name (letters, digits, '.', '_', '-')")
    return mid


def fetch_bytes(
    url: str,
    allowed_hosts: set[str] = ALLOWED_HOSTS,
    max_bytes: int = MAX_BYTES,
    timeout=TIMEOUT_S,
    session: requests.Session | None = None,
) -> bytes:
    """GET with every redirect checked against the allow-list and the body capped while streaming."""
    s = session or requests.Session()
    for _ in range(MAX_REDIRECTS + 1):
        host = (urlparse(url).hostname or "").lower()
        if urlparse(url).scheme not in ("https", "http") or host not in allowed_hosts:
            raise FetchError(f"refused to fetch from {host or url[:60]!r}: not an allowed host")
        try:
            r = s.get(url, timeout=timeout, allow_redirects=False, stream=True)
        except requests.Timeout:
            raise FetchError(f"{host} did not answer in time") from None
        except requests.RequestException:
            raise FetchError(f"could not reach {host} (offline?)") from None
        with r:
            if r.is_redirect or r.status_code in (301, 302, 303, 307, 308):
                url = requests.compat.urljoin(url, r.headers.get("location", ""))
                continue
            if r.status_code == 404:
                raise FetchError(f"{host} has no such file (404)")
            if r.status_code != 200:
                raise FetchError(f"{host} answered {r.status_code}")
            declared = r.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise FetchError(f"response larger than {max_bytes:,} bytes")
            body = bytearray()
            try:
                for chunk in r.iter_content(65536):
                    body += chunk
                    if len(body) > max_bytes:
                        raise FetchError(f"response larger than {max_bytes:,} bytes")
            except requests.RequestException:
                raise FetchError(f"{host} broke off the response") from None
            return bytes(body)
    raise FetchError("too many redirects")


def fetch_hf_config(model_id: str, base_url: str = "https://huggingface.co", **kw) -> str:
    """The text of a public model's config.json (validated by the caller with model_from_hf_config)."""
    mid = check_model_id(model_id)
    data = fetch_bytes(f"{base_url}/{mid}/resolve/main/config.json", **kw)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FetchError("config.json is not UTF-8 text") from None


def fetch_pricing(url: str, allowed_hosts: set[str] = PRICING_HOSTS, max_bytes: int | None = None, **kw):
    """A pricing CSV from a URL, parsed: a ``PricingReport`` whose every bad row is reported, as for an
    upload. A SkyPilot catalog file (``.../catalogs/v8/<cloud>/vms.csv``, told apart by its header) goes
    through the SkyPilot importer with the cloud from its path. Raises FetchError when nothing could be
    fetched (host not allowed, offline, too large, not text)."""
    from .csv_file import MAX_PRICING_BYTES, load_pricing_text
    from .skypilot import import_skypilot_vms

    url = (url or "").strip()
    if len(url) > 2000:
        raise FetchError("the URL is longer than 2,000 characters")
    parts = urlparse(url)
    loopback = parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost")  # local test servers
    if parts.scheme != "https" and not loopback:
        raise FetchError(f"only https:// links can be loaded (got {url[:60]!r})")
    body = fetch_bytes(url, allowed_hosts=allowed_hosts, max_bytes=max_bytes or MAX_PRICING_BYTES, **kw)
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FetchError("the file is not UTF-8 text (is it a spreadsheet? publish it as CSV)") from None
    header = text.split("\n", 1)[0]
    if "InstanceType" in header and "AcceleratorName" in header:
        m = SKYPILOT_PATH.search(parts.path)
        if not m:
            raise FetchError("a SkyPilot vms.csv is read with its cloud from the path: .../catalogs/v8/<cloud>/vms.csv")
        return import_skypilot_vms(text, m.group(1), source=url)
    return load_pricing_text(text)


# SkyPilot's public catalogs: one vms.csv per cloud, refreshed by its maintainers (prices with today's date).
SKYPILOT_CATALOG = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8"
SKYPILOT_CLOUDS = ("aws", "gcp", "azure", "lambda", "runpod", "nebius", "vast", "cudo", "fluidstack", "paperspace")
CATALOG_MAX_BYTES = 60_000_000  # a hyperscaler's vms.csv lists every instance type in every region


def fetch_skypilot_catalogs(
    clouds: tuple[str, ...] = SKYPILOT_CLOUDS, base: str = SKYPILOT_CATALOG, **kw
) -> tuple[list, list[str]]:
    """Today's GPU offers from SkyPilot's public catalogs, cloud by cloud: (offers, a note per cloud that could
    not be read). Each offer keeps the catalog file as its source and today as its retrieval date."""
    offers, notes = [], []
    for cloud in clouds:
        url = f"{base}/{cloud}/vms.csv"
        try:
            report = fetch_pricing(url, max_bytes=CATALOG_MAX_BYTES, **kw)
        except FetchError as exc:
            notes.append(f"{cloud}: {exc}")
            continue
        offers += report.offers
        if not report.offers:
            notes.append(f"{cloud}: no GPU offers in the catalog")
    return offers, notes
