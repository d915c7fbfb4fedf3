"""The configuration file (Flink's ``GlobalConfiguration``): ``config.yaml`` in the configuration directory.

    $ cat $STROM_CONF_DIR/config.yaml
    taskmanager:
      numberOfTaskSlots: 4
    rest.port: 8081                      # a flat dotted key is the same as a nested one
    security.ssl.rest:
      enabled: true
      keystore-password: s3cret          # not on a command line, where ps shows it

    conf = load_configuration("/etc/strom", dynamic=Configuration({"rest.port": "9091"}))  # -D rest.port=9091 wins

The directory is the argument (``strom --conf-dir DIR``, strom's own), else ``$STROM_CONF_DIR`` (Flink's
``$FLINK_CONF_DIR``), else there is none and the configuration is empty. A directory that is named but does not exist,
or has no ``config.yaml``, is an error, as in Flink 2: the legacy ``flink-conf.yaml`` is not read. The file is
standard YAML: nested maps are flattened with ``.`` (``rest: {port: 8081}`` is ``rest.port``), a list becomes its YAML
flow string (``[a, b]``, as Flink's ``YamlParserUtils.toYAMLString``), and a key given twice is refused. Dynamic
properties (``-D key=value``) override the file.

Every known key and its value go through :meth:`Configuration.set_string`, as ``-D`` does: a value its option
rejects is an error naming the file, the line and the key. A key strom does not know is skipped and logged with the
file and line — a warning when a known key is close to it (a typo), else at INFO: Flink keeps such keys and never reads
them, so Flink's own ``config.yaml`` — ``jobmanager.memory.process.size``, ``jobmanager.bind-host``, … — loads as it
is. (``-D`` stays strict: a key typed on a command line is refused.) Values are never echoed from a YAML syntax error
(they may be passwords), as Flink hides the snippet.
"""

from __future__ import annotations

import difflib
import logging
import os
from pathlib import Path

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from strom.config import REGISTRY, Configuration
from strom.exceptions import ConfigurationError

__all__ = ["CONF_FILENAME", "ENV_CONF_DIR", "LEGACY_CONF_FILENAME", "load_configuration", "load_yaml_file"]

#: the configuration directory's environment variable (Flink's ``FLINK_CONF_DIR``)
ENV_CONF_DIR = "STROM_CONF_DIR"
#: the configuration file in it (Flink 2's standard-YAML file)
CONF_FILENAME = "config.yaml"
#: Flink 1's file of flat ``key: value`` lines, which Flink 2 (and strom) no longer read
LEGACY_CONF_FILENAME = "flink-conf.yaml"
_NULL_TAG = "tag:yaml.org,2002:null"
_log = logging.getLogger(__name__)


def load_configuration(conf_dir: str | None = None, dynamic: Configuration | None = None) -> Configuration:
    """The options of ``<conf_dir>/config.yaml`` (``conf_dir``, else ``$STROM_CONF_DIR``, else none: an empty
    configuration) with ``dynamic`` (the ``-D`` options) set over them."""
    source = "the configuration directory"
    if conf_dir is None:
        conf_dir = os.environ.get(ENV_CONF_DIR) or None
        source = f"${ENV_CONF_DIR}"
    conf = Configuration() if conf_dir is None else load_yaml_file(config_file(conf_dir, source))
    if dynamic is not None:
        conf.add_all(dynamic)
    return conf


def config_file(conf_dir: str, source: str = "the configuration directory") -> Path:
    """``<conf_dir>/config.yaml``; a ConfigurationError if the directory or the file does not exist."""
    directory = Path(conf_dir).expanduser()
    if not directory.is_dir():
        raise ConfigurationError(
            f"expected {source} to be a directory with a {CONF_FILENAME}; got '{conf_dir}' "
            f"({directory.absolute()}), which {'is not a directory' if directory.exists() else 'does not exist'}; "
            f"hint: create it, or unset ${ENV_CONF_DIR} to run without a configuration file"
        )
    path = directory / CONF_FILENAME
    if path.is_file():
        return path.absolute()
    hint = "write the options there as 'key: value' lines (standard YAML; see docs/operations.md)"
    if (directory / LEGACY_CONF_FILENAME).is_file():
        hint = (
            f"{directory / LEGACY_CONF_FILENAME} is Flink 1's legacy file, which strom (as Flink 2) does not read: "
            f"rename it to {CONF_FILENAME} once it is standard YAML (Flink's bin/migrate-config-file.sh converts it)"
        )
    raise ConfigurationError(
        f"expected a configuration file {path.absolute()} in {source} '{conf_dir}'; got none; hint: {hint}"
    )


def load_yaml_file(path: Path) -> Configuration:
    """The options of one standard-YAML configuration file (nested maps flattened with ``.``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"expected a readable UTF-8 configuration file; got {path}: {exc}; hint: check its permissions"
        ) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        column = f" at column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigurationError(
            f"expected standard YAML in {where}; got a syntax error{column}: {problem}; hint: indent nested keys "
            "with spaces (no tabs), and quote a value that holds ': ' or starts with a special character"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"expected standard YAML in {path}; got {exc}; hint: check the file") from None
    conf = Configuration()
    if root is None:  # empty, or only comments
        return conf
    if not isinstance(root, MappingNode):
        raise ConfigurationError(
            f"expected a map of options ('key: value' lines) in {path}:{root.start_mark.line + 1}; got a "
            f"{_kind(root)}; hint: write one option per line, e.g. 'taskmanager.numberOfTaskSlots: 2'"
        )
    lines: dict[str, int] = {}
    for key, node, line in _flatten(root, "", path):
        if key in lines:
            raise ConfigurationError(
                f"expected each key once in {path}; got '{key}' at lines {lines[key]} and {line}; hint: keep one "
                "(a nested key and its dotted form are the same key)"
            )
        lines[key] = line
        if not Configuration.knows(key):
            near = difflib.get_close_matches(key, list(REGISTRY), n=1, cutoff=0.9)
            _log.log(
                logging.WARNING if near else logging.INFO,  # a likely typo is worth a warning on every command
                "%s:%d: '%s' is not a strom option; skipped (Flink keeps such keys unread)%s",
                path,
                line,
                key,
                f"; did you mean '{near[0]}'?" if near else "",
            )
            continue
        try:
            conf.set_string(key, _value(node, key, path, line))
        except ConfigurationError as exc:
            raise _located(exc, f"{path}:{line}", key) from None
    _log.info("loaded %d option(s) from %s", len(lines), path)
    return conf


def _flatten(node: MappingNode, prefix: str, path: Path) -> list[tuple[str, Node, int]]:
    """``(flattened key, value node, line)`` of every leaf under ``node``, in file order."""
    SafeConstructor().flatten_mapping(node)  # YAML merge keys ('<<: *defaults') into the map itself
    leaves: list[tuple[str, Node, int]] = []
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, ScalarNode) or not str(key_node.value).strip():
            raise ConfigurationError(
                f"expected a key (a name such as 'rest.port') in {path}:{line}; got a {_kind(key_node)}; hint: a key "
                "is a plain name, nested keys go under it indented"
            )
        key = prefix + str(key_node.value).strip()
        if isinstance(value_node, MappingNode):
            leaves += _flatten(value_node, key + ".", path)
        else:
            leaves.append((key, value_node, line))
    return leaves


def _value(node: Node, key: str, path: Path, line: int) -> str:
    """A leaf's value as ``-D`` gives it: a scalar's text as written, a list as its YAML flow string."""
    if isinstance(node, SequenceNode):
        value = SafeConstructor().construct_object(node, deep=True)
        return str(yaml.safe_dump(value, default_flow_style=True, width=2**31 - 1)).rstrip("\n")
    if node.tag == _NULL_TAG:
        raise ConfigurationError(
            f"expected a value in {path}:{line} ({key}); got none; hint: give one, or delete the line for the default"
        )
    return str(node.value)


def _located(exc: ConfigurationError, where: str, key: str) -> ConfigurationError:
    """``exc`` (an option's ``option 'k' expects X; got Y; hint: Z``) as ``expected X in FILE:LINE (k); got Y; …``."""
    message = str(exc)
    head, sep, rest = message.partition("; got ")
    if not sep:
        return ConfigurationError(f"{message} (in {where}, {key})")
    if head.startswith("option '") and " expects " in head:
        head = "expected " + head.split(" expects ", 1)[1]
    return ConfigurationError(f"{head} in {where} ({key}); got {rest}")


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "map"
    if isinstance(node, SequenceNode):
        return "list"
    return f"single value '{node.value}'" if len(str(node.value)) <= 40 else "single value"
