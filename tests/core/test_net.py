"""Network code against a local HTTP server (loopback only): slow, huge, malformed, redirects, errors."""

import http.server
import json
import threading
import time

import pytest

from gpuplan_core.catalog import HFConfigError, model_from_hf_config
from gpuplan_core.model import params_total
from gpuplan_core.net import FetchError, check_model_id, fetch_bytes, fetch_hf_config

CONFIG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
}


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
