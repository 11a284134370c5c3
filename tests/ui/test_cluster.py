"""``python -m gpuplan_ui.serve --replicas N`` (gpuplan_ui/cluster.py): what it reads from its arguments and the
nginx configuration it writes from deploy/nginx.conf. The cluster itself runs in tests/e2e/test_failover.py."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from gpuplan_ui import cluster


def test_replicas_port_and_address_are_read_in_both_spellings_and_the_rest_passes_through():
    plan = cluster.plan_from(
        ["--replicas", "3", "--server.port=9000", "--server.address", "127.0.0.1", "--theme.base=dark"], env={}
    )
    assert plan == cluster.Plan(3, "127.0.0.1", 9000, ("--theme.base=dark",))
    plan = cluster.plan_from(["--replicas=2", "--server.headless", "true"], env={})
    assert plan == cluster.Plan(2, "", 8501, ("--server.headless", "true"))  # Streamlit's default port


def test_the_environment_sets_replicas_and_port_when_no_option_does():
    env = {"GPUPLAN_REPLICAS": "4", "STREAMLIT_SERVER_PORT": "8600"}
    assert cluster.plan_from([], env=env) == cluster.Plan(4, "", 8600, ())
    assert cluster.plan_from(["--replicas", "1"], env=env).replicas == 1  # the option wins
    assert cluster.plan_from([], env={}).replicas == 1


@pytest.mark.parametrize("raw", ["0", "33", "two", "", "1.5", "-1"])
def test_a_bad_replica_count_names_the_option_and_what_it_allows(raw):
    with pytest.raises(SystemExit) as e:
        cluster.plan_from(["--replicas", raw], env={})
    assert str(e.value) == f"gpuplan: --replicas must be a whole number from 1 to 32 (got {raw!r})."


def test_a_bad_port_names_it():
    with pytest.raises(SystemExit, match=r"--server.port must be a whole number from 1 to 65535 \(got '70000'\)"):
        cluster.plan_from(["--replicas", "2", "--server.port", "70000"], env={})


def test_the_option_is_taken_out_once_whatever_its_spelling():
    assert cluster.take_option(["a", "--replicas", "2", "b", "--replicas=3"], "--replicas") == ("3", ["a", "b"])
    assert cluster.take_option(["--replicas"], "--replicas") == (None, ["--replicas"])  # no value: left for streamlit


def _render(tmp_path, ports=(41001, 41002, 41003), listen="127.0.0.1:8600"):
    template = cluster.NGINX_CONF.read_text()
    return cluster.nginx_config(template, [f"127.0.0.1:{p}" for p in ports], listen, tmp_path)


def test_the_config_lists_every_replica_once_and_keeps_the_sticky_hash(tmp_path):
    conf = _render(tmp_path)
    servers = re.findall(r"^\s*server (\S+) max_fails=1 fail_timeout=10s;$", conf, re.M)
    assert servers == ["127.0.0.1:41001", "127.0.0.1:41002", "127.0.0.1:41003"]
    assert "app1" not in conf and "app2" not in conf
    assert "hash $cookie__streamlit_xsrf consistent;" in conf
    assert re.search(r"^\s*listen 127\.0\.0\.1:8600;$", conf, re.M)
    assert "worker_processes 1;" in conf


def test_the_config_keeps_its_files_in_the_work_folder(tmp_path):
    conf = _render(tmp_path)
    assert "/var/lib/nginx" not in conf and "/run/" not in conf and "/var/log" not in conf
    assert f"pid {tmp_path}/nginx.pid;" in conf
    for d in cluster.TEMP_DIRS:
        assert (tmp_path / d).is_dir()
        assert f"{tmp_path}/{d};" in conf


def test_nginx_accepts_the_config(tmp_path):
    nginx = cluster.nginx_binary()
    if nginx is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nginx is not installed (apt-get install nginx)")
        pytest.skip("nginx is not installed")
    (tmp_path / "nginx.conf").write_text(_render(tmp_path, listen=str(cluster.free_port())))
    done = subprocess.run([nginx, "-t", "-c", str(tmp_path / "nginx.conf")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


def test_without_nginx_more_than_one_replica_says_what_to_install(monkeypatch):
    monkeypatch.setattr(cluster, "nginx_binary", lambda: None)
    with pytest.raises(SystemExit, match=r"apt-get install nginx\), or run one process: --replicas 1"):
        cluster.serve_replicas(cluster.Plan(2, "", 8501, ()))
