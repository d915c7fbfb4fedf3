"""The TaskExecutor's collector settings: frozen heap and rarer young collections while it runs, the collector as
it was after it closes. Run in a fresh interpreter: the settings are process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_streaming_gc_settings_apply_once_and_restore_what_they_found() -> None:
    code = textwrap.dedent(
        """
        import gc
        from strom.runtime.taskexecutor.garbage_collection import YOUNG_GENERATION_THRESHOLD, StreamingGarbageCollection

        before = gc.get_threshold()
        assert gc.get_freeze_count() == 0
        settings = StreamingGarbageCollection()
        settings.apply()
        frozen = gc.get_freeze_count()
        assert frozen > 0 and settings.applied
        assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, before[1], before[2])
        assert gc.isenabled()
        settings.apply()  # idempotent: the second task of the TaskExecutor changes nothing
        assert gc.get_freeze_count() == frozen
        settings.restore()
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0 and not settings.applied
        settings.restore()
        assert gc.get_threshold() == before
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
