"""What the PyFlink programs that print Flink's facts share (run under PyFlink 2.3, never by the tests).

A program runs itself again as a child (``--child``) so that the JVM's output and a crash stay apart from the
facts; the child prints ``MARK + name`` before each fact and ``MARK + "end"`` last; :func:`write_facts` cuts the
child's stdout into ``<prefix><name>.txt`` files beside the program. :func:`print_failure` prints a statement's
failure as its fact: the Java exception's line and, for a failed job, its root cause.
"""

from __future__ import annotations

import os
import subprocess
import sys


def print_failure(exc: BaseException) -> None:
    lines = str(exc).splitlines()
    java = [line for line in lines if "org.apache.flink" in line and "Exception:" in line]
    causes = [line for line in lines if line.startswith("Caused by:")]
    print((java[0].lstrip(": ") if java else lines[0]), flush=True)
    if causes:  # a failed job: its root cause
        print(causes[-1], flush=True)


def write_facts(program: str, args: list[str], prefix: str, mark: str) -> None:
    """Run ``program --child args`` and write each of its facts into ``<prefix><name>.txt`` beside it."""
    done = subprocess.run([sys.executable, program, "--child", *args], capture_output=True, text=True)
    name = None
    chunks: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        if line.startswith(mark):
            name = line[len(mark) :]
            chunks[name] = []
        elif name is not None:
            chunks[name].append(line)
    here = os.path.dirname(os.path.abspath(program))
    for name, lines in chunks.items():
        if name != "end":
            with open(os.path.join(here, f"{prefix}{name}.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
    sys.stderr.write(done.stderr[-3000:])
