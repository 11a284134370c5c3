"""Network code against a local HTTP server (loopback only): slow, huge, malformed, redirects, errors."""

import http.server
import json
import threading
import time

import pytest

from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.model.arch import params_total
from gpuplan_core.model.hf_config import HFConfigError, model_from_hf_config
from gpuplan_core.pricing.fetch import FetchError, check_model_id, fetch_bytes, fetch_hf_config, fetch_pricing
from tests.configs import LLAMA_3_1_8B_CONFIG

PRICING_PATH = DATA_DIR / "pricing.csv"

PRICES_CSV = "\n".join(PRICING_PATH.read_text().splitlines()[:4]) + "\n"  # header + 3 bundled offers
SKYPILOT_LAMBDA = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice
gpu_1x_h100_sxm5,H100,1,26,225,3.29,us-east-1,,
gpu_8x_h100_sxm5,H100,8,208,1800,23.92,us-east-1,,
"""

CONFIG = LLAMA_3_1_8B_CONFIG


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, code, body=b"", headers=None):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802
        p = self.path
        if p.startswith("/meta/llama/resolve/main/config.json"):
            self._send(200, json.dumps(CONFIG).encode())
        elif p.startswith("/slow/"):
            time.sleep(2)
            self._send(200, b"{}")
        elif p.startswith("/huge/"):
            self._send(200, b"x" * 3_000_000)
        elif p.startswith("/chunked-huge/"):
            self.send_response(200)
            self.end_headers()
            for _ in range(40):
                self.wfile.write(b"y" * 100_000)
        elif p.startswith("/bad/json/resolve/main/config.json"):
            self._send(200, b"{not json")
        elif p.startswith("/away/"):
            self._send(302, headers={"Location": "http://evil.example/config.json"})
        elif p.startswith("/home/"):
            self._send(302, headers={"Location": "/meta/llama/resolve/main/config.json"})
        elif p.startswith("/loop/"):
            self._send(302, headers={"Location": "/loop/again"})
        elif p == "/team/prices.csv":
            self._send(200, PRICES_CSV.encode())
        elif p == "/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv" or p == "/somewhere/vms.csv":
            self._send(200, SKYPILOT_LAMBDA.encode())
        elif p == "/team/garbage.csv":
            self._send(200, b"just,some\nthing,else\n")
        elif p == "/team/binary.csv":
            self._send(200, bytes(range(256)) * 10)
        elif p == "/team/huge.csv":
            self._send(200, b"a,b,c\n" * 1_000_000)
        elif p.startswith("/boom/"):
            self._send(500, b"oops")
        else:
            self._send(404, b"no")


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # clients hang up on purpose (size caps, timeouts)
        pass


@pytest.fixture(scope="module")
def server():
    srv = QuietServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


LOCAL = {"allowed_hosts": {"127.0.0.1"}}


def test_fetch_config_and_build_the_model(server):
    text = fetch_hf_config("meta/llama", base_url=server, **LOCAL)
    assert params_total(model_from_hf_config(text)) == 8_030_261_248


@pytest.mark.parametrize(
    "path,match",
    [
        ("/nothing/here", "404"),
        ("/boom/x", "500"),
        ("/huge/x", "larger than"),
        ("/chunked-huge/x", "larger than"),
        ("/away/x", "not an allowed host"),
        ("/loop/x", "too many redirects"),
    ],
)
def test_hostile_responses_are_refused(server, path, match):
    with pytest.raises(FetchError, match=match):
        fetch_bytes(server + path, max_bytes=2_000_000, **LOCAL)


def test_redirect_within_allowed_host_is_followed(server):
    assert json.loads(fetch_bytes(server + "/home/x", **LOCAL))["hidden_size"] == 4096


def test_slow_server_times_out(server):
    start = time.time()
    with pytest.raises(FetchError, match="did not answer in time"):
        fetch_bytes(server + "/slow/x", timeout=(0.5, 0.5), **LOCAL)
    assert time.time() - start < 2


def test_malformed_json_is_a_clear_error(server):
    text = fetch_hf_config("bad/json", base_url=server, **LOCAL)
    with pytest.raises(HFConfigError, match="not valid JSON"):
        model_from_hf_config(text)


def test_unreachable_host_is_offline_message():
    with pytest.raises(FetchError, match="could not reach|did not answer"):
        fetch_bytes("http://127.0.0.1:9/config.json", timeout=(0.5, 0.5), **LOCAL)


def test_default_allow_list_refuses_other_hosts():
    with pytest.raises(FetchError, match="not an allowed host"):
        fetch_bytes("https://example.com/config.json")
    with pytest.raises(FetchError, match="not an allowed host"):
        fetch_bytes("file:///etc/passwd")


@pytest.mark.parametrize("mid", ["../etc/passwd", "a/b/c", "meta llama", "owner/..", "x" * 300, "", "owner/name?x=1"])
def test_model_id_pattern(mid):
    with pytest.raises(FetchError, match="owner/name"):
        check_model_id(mid)
    assert check_model_id("meta-llama/Llama-3.1-8B") == "meta-llama/Llama-3.1-8B"


def test_pricing_from_a_link_in_the_projects_columns(server):
    r = fetch_pricing(server + "/team/prices.csv", **LOCAL)
    assert r.ok and r.rows_read == 3
    bundled = PRICING_PATH.read_text().splitlines()[1].split(",")[0]
    assert r.offers[0].offer_id == bundled


def test_pricing_from_a_skypilot_catalog_link_takes_the_cloud_from_the_path(server):
    url = server + "/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv"
    r = fetch_pricing(url, **LOCAL)
    assert {o.provider for o in r.offers} == {"lambda"}
    by_gpus = {o.gpus_per_node: o for o in r.offers}
    assert by_gpus[8].price_per_node_hour_usd == pytest.approx(23.92)
    assert by_gpus[1].price_per_gpu_hour_usd == pytest.approx(3.29)
    assert all(o.source == url for o in r.offers)
    with pytest.raises(FetchError, match="catalogs/v8/<cloud>/vms.csv"):
        fetch_pricing(server + "/somewhere/vms.csv", **LOCAL)


def test_a_malformed_pricing_link_is_reported_row_by_row_not_raised(server):
    r = fetch_pricing(server + "/team/garbage.csv", **LOCAL)
    assert not r.offers and r.errors
    assert "missing" in str(r.errors[0])


@pytest.mark.parametrize(
    "path,match",
    [
        ("/team/binary.csv", "not UTF-8"),
        ("/team/huge.csv", "larger than 5,000,000 bytes"),
        ("/away/x", "not an allowed host"),
        ("/nothing/here", "404"),
        ("/boom/x", "500"),
    ],
)
def test_hostile_pricing_links_are_refused(server, path, match):
    with pytest.raises(FetchError, match=match):
        fetch_pricing(server + path, **LOCAL)


@pytest.mark.parametrize(
    "url,match",
    [
        ("https://example.com/prices.csv", "not an allowed host"),
        ("http://raw.githubusercontent.com/a/b/c.csv", "only https://"),
        ("file:///etc/passwd", "only https://"),
        ("javascript:alert(1)", "only https://"),
        ("https://raw.githubusercontent.com/" + "a" * 2100, "longer than 2,000"),
    ],
)
def test_pricing_links_outside_the_allow_list_are_refused_before_any_request(url, match):
    with pytest.raises(FetchError, match=match):
        fetch_pricing(url)


def test_skypilot_catalogs_in_one_call_keep_what_loads_and_say_what_did_not(server):
    """The Data page's "today's prices": each cloud's vms.csv; a cloud that cannot be read is named, the others
    are kept (here: lambda is served, gcp is a 404)."""
    from gpuplan_core.pricing.fetch import fetch_skypilot_catalogs

    base = f"{server}/skypilot-org/skypilot-catalog/master/catalogs/v8"
    offers, notes = fetch_skypilot_catalogs(("lambda", "gcp"), base=base, **LOCAL)
    assert offers and {o.provider for o in offers} == {"lambda"}
    assert all(o.source.endswith("/catalogs/v8/lambda/vms.csv") for o in offers)
    assert len(notes) == 1 and notes[0].startswith("gcp: ")


def test_skypilot_catalogs_offline_say_so_for_every_cloud():
    from gpuplan_core.pricing.fetch import fetch_skypilot_catalogs

    offers, notes = fetch_skypilot_catalogs(("aws", "lambda"), base="http://127.0.0.1:9/x", timeout=(0.5, 0.5), **LOCAL)
    assert offers == [] and [n.split(":")[0] for n in notes] == ["aws", "lambda"]
