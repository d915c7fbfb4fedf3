"""The ``strom`` command: ``strom run job.py [args...]`` and ``strom demo``."""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strom", description="strom: Flink's runtime in Python")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a DataStream program (a Python file) on an embedded MiniCluster")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("demo", help="run the word-count example")
    ns = parser.parse_args(argv)
    if ns.command == "run":
        script = Path(ns.script)
        if not script.is_file():
            print(f"strom run: expected a Python file; got '{ns.script}' (not found)", file=sys.stderr)
            return 2
        sys.argv = [str(script), *ns.args]
        sys.path.insert(0, str(script.parent.resolve()))
        runpy.run_path(str(script), run_name="__main__")
        return 0
    from strom.examples_demo import run_demo

    run_demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
