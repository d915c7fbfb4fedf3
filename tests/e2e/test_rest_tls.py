"""TLS of the REST endpoint (Flink's ``security.ssl.rest.*``) on a standalone cluster started as a user starts it:
HTTPS with a PEM keystore and a job submitted and followed over it, mutual TLS with PKCS#12 stores, and the clear
errors of a client that lacks the truststore, a client certificate or speaks plain HTTP, and of a wrong password.

The certificates are a throw-away CA's (``tests/tls_certificates.py``); the cluster comes from
``tests/standalone_cluster.py`` (every process killed at the end, whatever happened).
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import psutil
import pytest
from standalone_cluster import committed, running_cluster, strom, write_sums_job
from tls_certificates import STORE_PASSWORD, TRUST_PASSWORD, Pki, make_pki

from strom.config import Configuration
from strom.deploy.standalone.rest_client import RestClientError, RestClusterClient
from strom.runtime.net.ssl_utils import create_rest_client_ssl_context


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _d(**options: object) -> list[str]:
    """``-D security.ssl.rest.<key>=<value>`` arguments (``security.ssl.rest.enabled=true`` first)."""
    pairs = {"enabled": "true", **{k.replace("_", "-"): str(v) for k, v in options.items()}}
    return [a for k, v in pairs.items() for a in ("-D", f"security.ssl.rest.{k}={v}")]


def _conf(**options: object) -> Configuration:
    args = _d(**options)
    return Configuration(dict(a.split("=", 1) for a in args[1::2]))


def _port(url: str) -> str:
    return url.rsplit(":", 1)[1]


@pytest.mark.timeout(240)
def test_https_serves_the_cli_the_rest_client_and_a_job_and_refuses_what_lacks_the_truststore(
    pki: Pki, tmp_path: Path
) -> None:
    server = _d(keystore=pki.server_pem, truststore=pki.ca_pem)[1::2]  # a PEM keystore: key + chain
    with running_cluster(tmp_path / "cluster", *server, taskmanagers=1) as cluster:
        url = cluster.rest_url
        assert url.startswith("https://127.0.0.1:")
        trusting = _d(truststore=pki.ca_p12, truststore_password=TRUST_PASSWORD)  # a PKCS#12 truststore
        port = _port(url)

        # the REST client, the dashboard and the CLI over HTTPS with the truststore
        rest = RestClusterClient.from_configuration(url, _conf(truststore=pki.ca_pem))
        assert rest.get("/overview")["taskmanagers"] == 1
        context = create_rest_client_ssl_context(_conf(truststore=pki.ca_pem))
        with urllib.request.urlopen(f"https://localhost:{port}/", timeout=10, context=context) as page:
            assert b"<html" in page.read().lower()
        status = cluster.strom("cluster", "status", *trusting)
        assert status.returncode == 0 and '"taskmanagers": 1' in status.stdout, status.stdout + status.stderr

        # a job submitted with strom run -m, followed (result, log records) over HTTPS; then strom list finds it
        job = write_sums_job(tmp_path / "job")
        out, checkpoints = tmp_path / "out", tmp_path / "checkpoints"
        run = cluster.strom("run", "-m", f"localhost:{port}", *trusting, str(job), str(out), str(checkpoints),
                            "300", "100000")  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        assert Counter(k for k, _ in committed(out)) == Counter(i % 7 for i in range(300))
        listed = cluster.strom("list", "-a", *trusting)
        assert listed.returncode == 0 and "sums (FINISHED)" in listed.stdout, listed.stdout + listed.stderr

        # plain HTTP gets no answer; strom's client says to enable TLS
        with pytest.raises((urllib.error.URLError, OSError)):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/overview", timeout=10)
        with pytest.raises(RestClientError, match=r"HTTPS, set security\.ssl\.rest\.enabled: true") as plain:
            RestClusterClient(f"http://127.0.0.1:{port}", timeout=10).get("/overview")
        assert plain.value.status == 0
        over_http = cluster.strom("list", "-m", f"127.0.0.1:{port}")
        assert over_http.returncode == 1 and "security.ssl.rest.enabled" in over_http.stderr, over_http.stderr

        # no truststore: the system's CAs do not vouch for the cluster's; one line saying what to set, no traceback
        for args in ((), ("-D", "security.ssl.rest.enabled=true", "-m", f"127.0.0.1:{port}")):
            untrusted = cluster.strom("list", *args)
            assert untrusted.returncode == 1, untrusted.stdout + untrusted.stderr
            assert "security.ssl.rest.truststore" in untrusted.stderr and url in untrusted.stderr, untrusted.stderr
            assert "certificate" in untrusted.stderr and "Traceback" not in untrusted.stderr
        unanswered = cluster.strom("cluster", "status")
        assert unanswered.returncode == 1 and "security.ssl.rest.truststore" in unanswered.stdout


@pytest.mark.timeout(180)
def test_mutual_tls_refuses_a_client_without_a_certificate_the_truststore_signed(pki: Pki, tmp_path: Path) -> None:
    mutual = {"authentication_enabled": "true", "truststore": pki.ca_p12, "truststore_password": TRUST_PASSWORD}
    server = _d(keystore=pki.server_p12, keystore_password=STORE_PASSWORD, **mutual)[1::2]  # PKCS#12 stores
    with running_cluster(tmp_path / "cluster", *server, taskmanagers=0) as cluster:
        url = cluster.rest_url
        assert url.startswith("https://")

        # the CA trusted, but no client certificate
        with pytest.raises(RestClientError, match=r"security\.ssl\.rest\.keystore") as refused:
            RestClusterClient.from_configuration(url, _conf(truststore=pki.ca_pem), timeout=10).get("/overview")
        assert url in str(refused.value) and refused.value.status == 0
        bare = cluster.strom("list", *_d(truststore=pki.ca_pem))
        assert bare.returncode == 1 and "security.ssl.rest.keystore" in bare.stderr, bare.stdout + bare.stderr
        assert "Traceback" not in bare.stderr

        # a certificate of a CA the server does not trust
        stranger = _conf(keystore=pki.stranger_p12, keystore_password=STORE_PASSWORD, **mutual)
        with pytest.raises(RestClientError, match=r"security\.ssl\.rest\.keystore"):
            RestClusterClient.from_configuration(url, stranger, timeout=10).get("/overview")

        # the client's keystore (PKCS#12, then PEM through the CLI) is let in
        client = _conf(keystore=pki.client_p12, keystore_password=STORE_PASSWORD, **mutual)
        assert RestClusterClient.from_configuration(url, client).get("/overview")["taskmanagers"] == 0
        listed = cluster.strom("list", *_d(keystore=pki.client_pem, **mutual))
        assert listed.returncode == 0 and "No running jobs." in listed.stdout, listed.stdout + listed.stderr


@pytest.mark.timeout(120)
def test_a_wrong_keystore_password_is_a_configuration_error_before_any_process_starts(pki: Pki, tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    wrong = _d(keystore=pki.server_p12, keystore_password="not-it")
    started = strom(directory, "cluster", "start", "-D", "rest.port=0", "-D", "jobmanager.rpc.port=0", *wrong)
    assert started.returncode == 2, started.stdout + started.stderr
    assert "'security.ssl.rest.keystore-password'" in started.stderr and str(pki.server_p12) in started.stderr
    assert not list(directory.glob("*.pid"))
    jobmanager = strom(directory, "jobmanager", "-D", "rest.port=0", "-D", "jobmanager.rpc.port=0", *wrong, timeout=60)
    assert jobmanager.returncode == 1 and "'security.ssl.rest.keystore-password'" in jobmanager.stderr
    assert "Traceback" not in jobmanager.stderr


@pytest.mark.timeout(240)
def test_internal_tls_on_a_standalone_cluster_keeps_the_passwords_off_command_lines(pki: Pki, tmp_path: Path) -> None:
    """``security.ssl.internal.*`` given to ``strom cluster start``: the JobManager and the TaskManagers (one added
    later with ``add-taskmanager``) talk over mutual TLS and run a job exactly once across two TaskManagers; the
    stores' passwords reach every process through its environment, never its world-readable command line."""
    internal = {
        "security.ssl.internal.enabled": "true",
        "security.ssl.internal.keystore": pki.server_p12,
        "security.ssl.internal.keystore-password": STORE_PASSWORD,
        "security.ssl.internal.truststore": pki.ca_p12,
        "security.ssl.internal.truststore-password": TRUST_PASSWORD,
        "taskmanager.numberOfTaskSlots": 1,
    }
    with running_cluster(tmp_path / "cluster", *(f"{k}={v}" for k, v in internal.items()), taskmanagers=1) as cluster:
        added = cluster.strom("cluster", "add-taskmanager")
        assert added.returncode == 0, added.stdout + added.stderr
        cluster.remember_pids()
        job = write_sums_job(tmp_path / "job")
        out, checkpoints = tmp_path / "out", tmp_path / "checkpoints"
        run = cluster.strom("run", "-m", cluster.m, "-p", "2", str(job), str(out), str(checkpoints), "300", "100000")
        assert run.returncode == 0, run.stdout + run.stderr
        assert Counter(k for k, _ in committed(out)) == Counter(i % 7 for i in range(300))
        assert len(cluster.get("/taskmanagers")["taskmanagers"]) == 2
        for pid in cluster.seen_pids:
            command_line = " ".join(psutil.Process(pid).cmdline())
            assert "security.ssl.internal.keystore=" in command_line  # the paths travel as they did
            assert STORE_PASSWORD not in command_line and TRUST_PASSWORD not in command_line, command_line
        shown = {e["key"]: e["value"] for e in cluster.get("/jobmanager/config")}
        assert shown["security.ssl.internal.keystore-password"] == "******"
