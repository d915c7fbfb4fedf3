"""The configuration file (Flink's ``GlobalConfiguration``): ``config.yaml`` of ``--conf-dir`` / ``$STROM_CONF_DIR``
read as Flink 2 reads it (nested maps flattened with ``.``, lists as YAML flow strings, duplicates refused), ``-D``
over it, and errors that name the file, the line and the key; the CLI reads it for every command."""

from __future__ import annotations

import logging
import os
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from strom import StreamExecutionEnvironment
from strom.cli import main as strom_main
from strom.config import (
    CheckpointingOptions,
    Configuration,
    PipelineOptions,
    RestOptions,
    SecurityOptions,
    TaskManagerOptions,
)
from strom.deploy.standalone.cluster_dir import ClusterDirectory
from strom.deploy.standalone.job_managers import job_manager_args
from strom.exceptions import ConfigurationError
from strom.global_configuration import ENV_CONF_DIR, load_configuration

pytestmark = pytest.mark.timeout(20)


def _conf_dir(directory: Path, text: str) -> Path:
    """``directory`` (made if missing) with ``text`` as its config.yaml."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.yaml").write_text(textwrap.dedent(text))
    return directory


@pytest.fixture(autouse=True)
def _no_conf_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_CONF_DIR, raising=False)


def test_nested_and_flat_keys_are_the_same_options(tmp_path: Path) -> None:
    conf = load_configuration(
        str(
            _conf_dir(
                tmp_path,
                """\
                # Flink 2's config.yaml: nested maps and dotted keys mix
                taskmanager:
                  numberOfTaskSlots: 3
                rest.port: 8089
                security.ssl.rest:
                  enabled: true
                  keystore-password: "p@ss: word # not a comment"
                execution:
                  checkpointing.interval: 10 s
                pipeline.name: 2024          # a number where a string is expected is its text
                """,
            )
        )
    )
    assert conf.get(TaskManagerOptions.NUM_TASK_SLOTS) == 3
    assert conf.get(RestOptions.PORT) == 8089
    assert conf.get(SecurityOptions.SSL_REST_ENABLED) is True
    assert conf.get(SecurityOptions.SSL_REST_KEYSTORE_PASSWORD) == "p@ss: word # not a comment"
    assert conf.get(CheckpointingOptions.CHECKPOINTING_INTERVAL) == timedelta(seconds=10)
    assert conf.get(PipelineOptions.NAME) == "2024"


def test_dynamic_properties_override_the_file(tmp_path: Path) -> None:
    directory = _conf_dir(tmp_path, "rest:\n  port: 8089\ntaskmanager.numberOfTaskSlots: 3\n")
    conf = load_configuration(str(directory), Configuration({"rest.port": "9091"}))
    assert conf.get(RestOptions.PORT) == 9091
    assert conf.get(TaskManagerOptions.NUM_TASK_SLOTS) == 3


def test_a_list_is_its_yaml_flow_string_as_flink_flattens_it(tmp_path: Path) -> None:
    directory = _conf_dir(tmp_path, "pipeline:\n  jars:\n    - a.jar\n    - file:///b.jar\n")
    assert load_configuration(str(directory)).get_string("pipeline.jars", "") == "[a.jar, 'file:///b.jar']"


def test_an_empty_file_or_one_of_comments_is_an_empty_configuration(tmp_path: Path) -> None:
    assert load_configuration(str(_conf_dir(tmp_path, ""))).to_dict() == {}
    assert load_configuration(str(_conf_dir(tmp_path, "# rest.port: 8081\n"))).to_dict() == {}


def test_a_value_the_option_refuses_names_the_file_the_line_and_the_key(tmp_path: Path) -> None:
    directory = _conf_dir(tmp_path, "# the REST endpoint\nrest:\n  address: localhost\n  port: abc\n")
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(str(directory))
    assert str(refused.value).startswith(f"expected a int in {directory / 'config.yaml'}:4 (rest.port); got 'abc'")
    assert "hint: the default is 8081" in str(refused.value)


def test_an_unknown_key_is_skipped_with_its_line_as_flink_keeps_it_unread(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Flink's own config.yaml (JVM memory sizes, bind hosts, ...) loads; a typo is named with its line."""
    directory = _conf_dir(
        tmp_path,
        "jobmanager:\n  memory:\n    process:\n      size: 1600m\ntaskmanager:\n  numberOfTaskslots: 2\n"
        "  numberOfTaskSlots: 3\n",
    )
    with caplog.at_level(logging.INFO, logger="strom.global_configuration"):
        conf = load_configuration(str(directory))
    assert conf.get(TaskManagerOptions.NUM_TASK_SLOTS) == 3
    assert "jobmanager.memory.process.size" not in conf.to_dict()
    warnings = [r.getMessage() for r in caplog.records]
    assert any("config.yaml:4: 'jobmanager.memory.process.size' is not a strom option" in w for w in warnings)
    assert any(
        "config.yaml:6: 'taskmanager.numberOfTaskslots' is not a strom option" in w
        and "did you mean 'taskmanager.numberOfTaskSlots'" in w
        for w in warnings
    ), warnings
    with pytest.raises(ConfigurationError, match=r"expected a known configuration key"):  # -D stays strict
        Configuration().set_string("taskmanager.numberOfTaskslots", "2")


def test_a_yaml_syntax_error_names_the_line_and_does_not_echo_the_value(tmp_path: Path) -> None:
    directory = _conf_dir(tmp_path, 'rest.port: 8081\nsecurity.ssl.rest.keystore-password: "hunter2\n')
    with pytest.raises(ConfigurationError, match=r"expected standard YAML in .*config\.yaml:\d+; got a syntax") as e:
        load_configuration(str(directory))
    assert "hunter2" not in str(e.value)
    with pytest.raises(ConfigurationError, match=r"config\.yaml:3; got a syntax error at column 1"):
        load_configuration(str(_conf_dir(tmp_path, "rest:\n  port: 1\n\tbind-address: 0.0.0.0\n")))


def test_the_top_level_must_be_a_map(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"expected a map of options .*config\.yaml:1; got a list"):
        load_configuration(str(_conf_dir(tmp_path, "- rest.port: 8081\n")))
    with pytest.raises(ConfigurationError, match=r"got a single value 'rest.port=8081'"):
        load_configuration(str(_conf_dir(tmp_path, "rest.port=8081\n")))


def test_a_key_twice_or_without_a_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"expected each key once .*got 'rest.port' at lines 1 and 3"):
        load_configuration(str(_conf_dir(tmp_path, "rest.port: 1\nrest:\n  port: 2\n")))
    with pytest.raises(ConfigurationError, match=r"expected a value in .*config\.yaml:2 \(rest\.port\); got none"):
        load_configuration(str(_conf_dir(tmp_path, "rest:\n  port:\n")))


def test_the_directory_comes_from_the_argument_else_the_environment_else_there_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_configuration().to_dict() == {}  # no $STROM_CONF_DIR: no file, as before
    monkeypatch.setenv(ENV_CONF_DIR, str(_conf_dir(tmp_path / "env", "rest.port: 8089\n")))
    assert load_configuration().get(RestOptions.PORT) == 8089
    explicit = _conf_dir(tmp_path / "explicit", "rest.port: 9000\n")
    assert load_configuration(str(explicit)).get(RestOptions.PORT) == 9000  # the argument over the environment


def test_a_missing_directory_or_file_is_an_error_naming_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigurationError, match=r"expected the configuration directory .*does not exist"):
        load_configuration(str(tmp_path / "nowhere"))
    monkeypatch.setenv(ENV_CONF_DIR, str(tmp_path / "nowhere"))  # as Flink: a set $FLINK_CONF_DIR must exist
    with pytest.raises(ConfigurationError, match=r"expected \$STROM_CONF_DIR to be a directory .*does not exist"):
        load_configuration()
    with pytest.raises(ConfigurationError, match=r"expected a configuration file .*config\.yaml in the .*got none"):
        load_configuration(str(tmp_path))
    (tmp_path / "flink-conf.yaml").write_text("rest.port: 8081\n")
    with pytest.raises(ConfigurationError, match=r"flink-conf\.yaml is Flink 1's legacy file.*rename it"):
        load_configuration(str(tmp_path))


def test_every_cli_command_reads_the_file_and_d_overrides_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _conf_dir(tmp_path / "conf", "pipeline.name: from-the-file\nparallelism.default: 3\n")
    script = tmp_path / "job.py"
    out = tmp_path / "seen.txt"
    script.write_text(
        "import sys\n"
        "from strom import StreamExecutionEnvironment\n"
        "from strom.config import CoreOptions, PipelineOptions\n"
        "c = StreamExecutionEnvironment.get_execution_environment().get_configuration()\n"
        "with open(sys.argv[1], 'w') as f:\n"
        "    f.write(repr((c.get(PipelineOptions.NAME), c.get(CoreOptions.DEFAULT_PARALLELISM))))\n"
    )
    monkeypatch.setenv(ENV_CONF_DIR, str(tmp_path / "elsewhere"))  # --conf-dir wins, and is passed on
    try:
        defines = ["-D", "parallelism.default=2"]
        assert strom_main(["run", "--conf-dir", str(directory), *defines, str(script), str(out)]) == 1  # no job: it ran
    finally:
        StreamExecutionEnvironment.set_context_configuration(None)
    assert out.read_text() == repr(("from-the-file", 2))
    assert os.environ[ENV_CONF_DIR] == str(directory.absolute())  # what strom cluster start's processes read

    (directory / "config.yaml").write_text("rest:\n  port: abc\n")
    for args in (
        ["run", str(script), str(out)],
        ["list", "-m", "127.0.0.1:1"],
        ["cancel", "a" * 32],
        ["jobmanager"],
        ["taskmanager", "--jobmanager", "127.0.0.1:1"],
        ["cluster", "start", "--cluster-dir", str(tmp_path / "cluster")],
        ["cluster", "status", "--cluster-dir", str(tmp_path / "cluster")],
    ):
        assert strom_main([args[0], "--conf-dir", str(directory), *args[1:]]) == 2, args
        assert f"{directory / 'config.yaml'}:2 (rest.port); got 'abc'" in capsys.readouterr().err, args
    assert not list((tmp_path / "cluster").glob("*.pid"))  # refused before any process started


def test_a_standby_job_manager_shifts_the_ports_of_the_file_too(tmp_path: Path) -> None:
    """``strom cluster start --jobmanagers 2``: the standby's ports come from the whole configuration (the file's
    and ``-D``), while only ``-D`` and the shifted ports go on its command line."""
    conf = load_configuration(str(_conf_dir(tmp_path / "conf", "rest.port: 9000\njobmanager.rpc.port: 0\n")))
    args = job_manager_args(ClusterDirectory(tmp_path), "jobmanager-2", 1, [], conf)
    assert args[-1:] == ["-Drest.port=9001"] and "-Djobmanager.rpc.port" not in " ".join(args)
