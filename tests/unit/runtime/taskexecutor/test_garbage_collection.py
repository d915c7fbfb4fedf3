"""The TaskManager's collector settings: applied once per process, freezing what is alive, young collections less
often. Run in a fresh interpreter: the settings are process-wide and must not leak into the test process."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_tune_for_streaming_freezes_the_heap_and_raises_the_young_threshold_once() -> None:
    code = textwrap.dedent(
        """
        import gc
        from strom.runtime.taskexecutor.garbage_collection import YOUNG_GENERATION_THRESHOLD, tune_for_streaming

        _, older, oldest = gc.get_threshold()
        assert gc.get_freeze_count() == 0
        assert tune_for_streaming() is True
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, older, oldest)
        assert gc.isenabled()
        assert tune_for_streaming() is False  # once per process
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
