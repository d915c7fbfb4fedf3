"""The ``strom`` command: ``strom run job.py [args...]`` and ``strom demo``.

    strom run job.py                                        # on an embedded MiniCluster
    strom run --target spark --spark-master 'local[4]' job.py   # TaskManagers hosted in Spark tasks
    strom run -D execution.checkpointing.interval='10 s' job.py  # any configuration key, in Flink's units

The options become the defaults of every ``StreamExecutionEnvironment`` the program creates (Flink's
context environment), so the program itself needs no change to run on another target.
"""

from __future__ import annotations

import argparse
import logging
import runpy
import sys
import traceback
from pathlib import Path

from strom.api.environment import TARGETS, StreamExecutionEnvironment
from strom.api.job_client import interrupted_job
from strom.config import ClusterOptions, Configuration, DeploymentOptions, SparkOptions, TaskManagerOptions
from strom.exceptions import ClusterError, ConfigurationError, JobExecutionError


def _configuration(ns: argparse.Namespace) -> Configuration:
    conf = Configuration()
    for item in ns.define or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigurationError(f"expected -D key=value; got '{item}'")
        conf.set_string(key.strip(), value.strip())
    if ns.target is not None:
        conf.set(DeploymentOptions.TARGET, ns.target)
    if ns.spark_master is not None:
        conf.set(SparkOptions.MASTER, ns.spark_master)
        if ns.target is None:
            conf.set(DeploymentOptions.TARGET, "spark")
    if ns.slots is not None:
        conf.set(TaskManagerOptions.NUM_TASK_SLOTS, ns.slots)
    if ns.taskmanagers is not None:
        spark = conf.get(DeploymentOptions.TARGET) == "spark"
        conf.set(SparkOptions.TASK_MANAGERS if spark else ClusterOptions.NUM_TASK_MANAGERS, ns.taskmanagers)
    return conf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strom", description="strom: Flink's runtime in Python")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a DataStream program (a Python file)")
    run.add_argument("--target", choices=TARGETS, help="local: an embedded MiniCluster (default); spark: on Spark")
    run.add_argument("--spark-master", metavar="URL", help="Spark master (implies --target spark); default local[*]")
    run.add_argument("--taskmanagers", type=int, metavar="N", help="TaskManagers to start (default: as the job needs)")
    run.add_argument("--slots", type=int, metavar="S", help="slots per TaskManager")
    run.add_argument("-D", dest="define", action="append", metavar="KEY=VALUE", help="a configuration option")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("demo", help="run the word-count example")
    ns = parser.parse_args(argv)
    if ns.command == "run":
        script = Path(ns.script)
        if not script.is_file():
            print(f"strom run: expected a Python file; got '{ns.script}' (not found)", file=sys.stderr)
            return 2
        for value, name in ((ns.taskmanagers, "--taskmanagers"), (ns.slots, "--slots")):
            if value is not None and value < 1:
                print(f"strom run: expected {name} >= 1; got {value}", file=sys.stderr)
                return 2
        try:
            conf = _configuration(ns)
        except ConfigurationError as exc:
            print(f"strom run: {exc}", file=sys.stderr)
            return 2
        StreamExecutionEnvironment.set_context_configuration(conf)
        if conf.get(DeploymentOptions.TARGET) == "spark":
            # as spark-submit: the program's SparkSession.builder.getOrCreate() is the session its jobs run on
            # (its catalog for SparkSource / SparkTableSink), started before the program
            from strom.deploy.spark.session import create_session

            try:
                create_session(conf, script.stem)
            except ClusterError as exc:
                print(f"strom run: {exc}", file=sys.stderr)
                return 1
        sys.argv = [str(script), *ns.args]
        sys.path.insert(0, str(script.parent.resolve()))
        try:
            runpy.run_path(str(script), run_name="__main__")
        except KeyboardInterrupt as interrupt:  # Ctrl-C: one line, not a traceback through strom's waits
            job = interrupted_job(interrupt)
            print(f"job {job} cancelled" if job is not None else "strom run: interrupted", file=sys.stderr)
            return 130  # 128 + SIGINT, as a shell reports a command that Ctrl-C ended
        except JobExecutionError as failed:  # strom's message (with the user's traceback, if theirs); no frames
            print(f"strom run: {failed}", file=sys.stderr)  # of strom's client waits unless logging at DEBUG
            if logging.getLogger("strom").isEnabledFor(logging.DEBUG):
                traceback.print_exception(failed, file=sys.stderr)
            return 1
        return 0
    from strom.examples_demo import run_demo

    run_demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
