"""The standalone cluster's pure pieces: addresses, the cluster directory's secret, the job's Python files, the
ResourceManager's standalone registrations, the execution-result body, the progress line, the CLI's usage errors."""

from __future__ import annotations

import asyncio
import io
import os
import sys
import types
import zipfile
from pathlib import Path

import pytest

from strom.cli import main
from strom.deploy.standalone.cluster_dir import ClusterDirectory, JobManagerAddresses, parse_host_port
from strom.deploy.standalone.job_files import modules_under, pack_python_files
from strom.deploy.standalone.progress import summary_line
from strom.exceptions import ClusterError, ConfigurationError, ResourceError
from strom.runtime.execution_state import JobStatus
from strom.runtime.jobmaster.jobmaster import JobResult
from strom.runtime.python_files import PythonFilesCache, extract_python_files
from strom.runtime.resourcemanager.resource_manager import ResourceManager
from strom.web.submission import execution_result_body


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:6123", ("127.0.0.1", 6123)),
        ("http://localhost:8081/", ("localhost", 8081)),
        ("[::1]:8081", ("::1", 8081)),
        ("example.org", ("example.org", 8081)),
    ],
)
def test_host_and_port(text: str, expected: tuple[str, int]) -> None:
    assert parse_host_port(text, "-m", 8081) == expected


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", ["host", "host:", "host:99999", ":80", "host:x"])
def test_host_and_port_refused(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_host_port(text, "--jobmanager")


@pytest.mark.timeout(10)
def test_secret_is_created_once_owner_only(tmp_path: Path) -> None:
    d = ClusterDirectory(tmp_path / "c")
    secret = d.load_or_create_secret()
    assert len(secret) == 32
    assert (d.secret_file.stat().st_mode & 0o777) == 0o600
    assert (d.path.stat().st_mode & 0o777) == 0o700
    assert d.load_or_create_secret() == secret == d.read_secret()
    os.chmod(d.secret_file, 0o644)
    with pytest.raises(ClusterError, match="chmod 600"):
        d.read_secret()


@pytest.mark.timeout(10)
def test_missing_secret_names_the_file_and_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="start the JobManager first"):
        ClusterDirectory(tmp_path).read_secret()


@pytest.mark.timeout(10)
def test_addresses_round_trip_and_are_removed_by_their_writer_only(tmp_path: Path) -> None:
    d = ClusterDirectory(tmp_path)
    a = JobManagerAddresses(rpc_host="127.0.0.1", rpc_port=6123, rest_url="http://127.0.0.1:8081", pid=42)
    d.write_addresses(a)
    assert d.read_addresses() == a
    d.remove_addresses(pid=43)
    assert d.read_addresses() == a
    d.remove_addresses(pid=42)
    assert d.read_addresses() is None


@pytest.mark.timeout(10)
def test_job_files_are_the_imported_modules_under_the_program_directory(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "util.py").write_text("X = 1\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "hidden.py").write_text("")
    fake = {
        "strom_test_pkg": types.SimpleNamespace(__file__=str(tmp_path / "pkg" / "__init__.py")),
        "strom_test_pkg.util": types.SimpleNamespace(__file__=str(tmp_path / "pkg" / "util.py")),
        "strom_test_hidden": types.SimpleNamespace(__file__=str(tmp_path / ".venv" / "hidden.py")),
    }
    sys.modules.update(fake)  # type: ignore[arg-type]
    try:
        assert sorted(modules_under(tmp_path)) == ["pkg/__init__.py", "pkg/util.py"]
        data = pack_python_files(tmp_path)
        assert data == pack_python_files(tmp_path)  # the same files make the same bytes
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            assert z.read("pkg/util.py") == b"X = 1\n"
    finally:
        for name in fake:
            del sys.modules[name]
    assert pack_python_files(None) == b""


@pytest.mark.timeout(10)
def test_python_files_go_on_sys_path_once_and_leave_with_close(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("strom_shipped_mod.py", "VALUE = 7\n")
    cache = PythonFilesCache("test")
    directory = cache.install("job", buffer.getvalue())
    assert cache.install("job", buffer.getvalue()) == directory
    assert sys.path.count(directory) == 1
    import strom_shipped_mod  # type: ignore[import-not-found]

    assert strom_shipped_mod.VALUE == 7
    del sys.modules["strom_shipped_mod"]
    cache.close()
    assert directory not in sys.path and not Path(directory).exists()


@pytest.mark.timeout(10)
@pytest.mark.parametrize("name", ["../evil.py", "/abs.py", "a/../../b.py"])
def test_python_files_refuse_paths_outside_their_directory(tmp_path: Path, name: str) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(name, "")
    with pytest.raises(ConfigurationError, match="relative paths"):
        extract_python_files(buffer.getvalue(), str(tmp_path))
    with pytest.raises(ConfigurationError, match="zip"):
        extract_python_files(b"not a zip", str(tmp_path))


@pytest.mark.timeout(10)
def test_standalone_task_managers_get_fresh_ids_and_tokens() -> None:
    async def scenario() -> None:
        rm = ResourceManager(secret=b"s" * 32, heartbeat_interval=1.0, heartbeat_timeout=10.0)
        with pytest.raises(ResourceError, match="standalone cluster"):
            rm.accept_task_manager()
        rm.accepts_standalone_task_managers = True
        first, token1 = rm.accept_task_manager()
        second, token2 = rm.accept_task_manager("tm-1")  # taken (pending): another id
        named, _ = rm.accept_task_manager("worker-a")
        assert (first, second, named) == ("tm-1", "tm-2", "worker-a")
        assert token1 != token2 and len(token1) == 32
        with pytest.raises(ResourceError, match="wrong"):  # the token is checked as for launched ones
            await rm.register_task_executor("tm-1", ("127.0.0.1", 1), ("127.0.0.1", 2), 1, 1, token2)

    asyncio.run(scenario())


@pytest.mark.timeout(10)
def test_execution_result_body_has_flinks_shape() -> None:
    assert execution_result_body(None) == {"status": {"id": "IN_PROGRESS"}}
    done = JobResult(job_id="a" * 32, job_name="j", status=JobStatus.FINISHED, net_runtime_ms=12)
    assert execution_result_body(done) == {
        "status": {"id": "COMPLETED"},
        "job-execution-result": {
            "id": "a" * 32,
            "application-status": "SUCCEEDED",
            "accumulator-results": {},
            "net-runtime": 12,
        },
    }
    failed = JobResult(
        job_id="b" * 32, job_name="j", status=JobStatus.FAILED, net_runtime_ms=3, failure_text="Traceback: boom"
    )
    body = execution_result_body(failed)["job-execution-result"]
    assert body["application-status"] == "FAILED"
    assert body["failure-cause"]["stack-trace"] == "Traceback: boom"


@pytest.mark.timeout(10)
def test_summary_line() -> None:
    details = {
        "jid": "c" * 32,
        "name": "sums",
        "state": "RUNNING",
        "duration": 12_400,
        "vertices": [{"metrics": {"read-records": 0, "write-records": 1500}}, {"metrics": {"read-records": 1500}}],
    }
    checkpoints = {"latest": {"completed": {"id": 7, "state_size": 2048, "end_to_end_duration": 15}}}
    assert summary_line(details, checkpoints) == (
        f"job 'sums' ({'c' * 32}) RUNNING 12 s: 2 vertices, 1.5k records in, 1.5k out; checkpoint 7 (2.0kB, 15 ms)"
    )
    assert summary_line(details, None).endswith("no checkpoints")


@pytest.mark.timeout(10)
def test_cli_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "job.py"
    job.write_text("")
    assert main(["run", "-d", str(job)]) == 2  # detached needs a remote cluster
    assert "with -d" in capsys.readouterr().err
    assert main(["cancel", "not-a-job-id", "-m", "127.0.0.1:1"]) == 2
    assert main(["stop", "a" * 32, "-m", "127.0.0.1:1"]) == 2  # no --savepoint-path
    assert main(["run", str(tmp_path / "missing.py")]) == 2
    assert main(["run", "-D", "no.such.key=1", str(job)]) == 2


@pytest.mark.timeout(10)
def test_cli_unreachable_cluster_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "-m", "127.0.0.1:1", "--cluster-dir", str(tmp_path)]) == 1
    assert "expected a strom JobManager's REST API at http://127.0.0.1:1" in capsys.readouterr().err


@pytest.mark.timeout(10)
def test_cluster_token_prints_the_rest_token_of_the_cluster_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``strom cluster token``: what Flink's CLI sends (FLINK_REST_CLIENT_HEADERS) to call a strom cluster."""
    from strom.web.auth import bearer_token_matches, rest_token

    monkeypatch.delenv("STROM_REST_TOKEN", raising=False)
    assert main(["cluster", "token", "--cluster-dir", str(tmp_path / "none")]) == 2
    assert "expected a cluster directory holding the cluster's secret" in capsys.readouterr().err
    secret = ClusterDirectory(tmp_path / "cluster").load_or_create_secret()
    assert main(["cluster", "token", "--cluster-dir", str(tmp_path / "cluster")]) == 0
    token = capsys.readouterr().out.strip()
    assert token == rest_token(secret) and bearer_token_matches(f"Bearer {token}", rest_token(secret))
