"""A standalone cluster configured only by its configuration file (Flink's ``$FLINK_CONF_DIR/config.yaml``): slots,
the REST port and REST TLS with its keystore password in ``<conf-dir>/config.yaml``, no ``-D`` at all. The started
processes read the file themselves (the directory reaches them as ``$STROM_CONF_DIR``), so the password is on no
command line ``ps`` shows; the CLI finds the cluster's truststore in the same file.

The certificates are a throw-away CA's (``tests/tls_certificates.py``); the cluster comes from
``tests/standalone_cluster.py`` (every process killed at the end, whatever happened).
"""

from __future__ import annotations

import socket
from pathlib import Path

import psutil
import pytest
from standalone_cluster import cluster_pids, running_cluster, strom
from tls_certificates import STORE_PASSWORD, make_pki

from strom.deploy.standalone.rest_client import RestClusterClient
from strom.global_configuration import ENV_CONF_DIR, load_configuration


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.timeout(180)
def test_a_cluster_takes_its_settings_and_secrets_from_config_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_CONF_DIR, raising=False)
    pki = make_pki(tmp_path / "pki")
    port = _free_port()
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "config.yaml").write_text(
        f"""\
# nested maps and dotted keys, as Flink 2's config.yaml
taskmanager:
  numberOfTaskSlots: 3
rest:
  port: {port}
jobmanager.rpc.port: 0
heartbeat: {{interval: 500 ms, timeout: 5 s}}
security.ssl.rest:
  enabled: true
  keystore: {pki.server_p12}
  keystore-password: {STORE_PASSWORD}
  truststore: {pki.ca_pem}
"""
    )
    directory = tmp_path / "cluster"
    with running_cluster(directory, taskmanagers=1, defaults=False, args=("--conf-dir", str(conf_dir))) as cluster:
        url = cluster.rest_url
        assert url == f"https://127.0.0.1:{port}"

        # the JobManager and the TaskManager read the file: REST over TLS on its port, its slots, the secret hidden
        rest = RestClusterClient.from_configuration(url, load_configuration(str(conf_dir)))
        config = {e["key"]: e["value"] for e in rest.get("/jobmanager/config")}
        assert config["taskmanager.numberOfTaskSlots"] == "3" and config["rest.port"] == str(port)
        assert config["security.ssl.rest.keystore-password"] == "******"
        (tm,) = rest.get("/taskmanagers")["taskmanagers"]
        assert tm["slotsNumber"] == 3

        # the password is in no process's command line; the directory reached them through the environment
        pids = cluster_pids(directory)
        assert len(pids) == 2
        for pid in pids:
            process = psutil.Process(pid)
            assert STORE_PASSWORD not in " ".join(process.cmdline()), process.cmdline()
            assert process.environ().get(ENV_CONF_DIR) == str(conf_dir)

        # the CLI with $STROM_CONF_DIR trusts the cluster (the file's truststore); without it, it does not
        listed = strom(directory, "list", "-a")
        assert listed.returncode == 1 and "security.ssl.rest.truststore" in listed.stderr, listed.stderr
        monkeypatch.setenv(ENV_CONF_DIR, str(conf_dir))
        listed = strom(directory, "list", "-a")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert "No running jobs." in listed.stdout and "No terminated jobs." in listed.stdout
        status = cluster.strom("cluster", "status")
        assert status.returncode == 0 and '"taskmanagers": 1' in status.stdout, status.stdout + status.stderr
