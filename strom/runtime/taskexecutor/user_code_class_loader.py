"""Loading a task's user code (Flink's ``UserCodeClassLoader``, whose class loading the JVM makes thread-safe).

A TaskManager receives each task's operators, key selectors, partitioners and serializers pickled; unpickling one
imports the modules its functions live in. Task threads deploy at the same time, and Python's import system, which
locks per module, gives up on two threads importing two modules of one package whose initialization imports the
other (``_DeadlockError``: one of them gets the module half-initialized — "cannot import name … from partially
initialized module"). So a process unpickles user code one task at a time: once per task deployment, never per
record.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

__all__ = ["load_user_code"]

_LOADING = threading.RLock()  # re-entrant: unpickling may unpickle (a serializer inside an operator)


def load_user_code(blob: bytes) -> Any:
    """The object pickled in ``blob``, its modules imported by one task thread of this process at a time."""
    with _LOADING:
        return pickle.loads(blob)
