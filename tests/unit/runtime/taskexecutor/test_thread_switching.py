"""The TaskExecutor's GIL switch interval: set while it runs, the interpreter's own after it closes. Run in a fresh
interpreter: the setting is process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from strom.runtime.taskexecutor.thread_switching import TaskThreadSwitching


def test_switch_interval_applies_once_and_restores_what_it_found() -> None:
    code = textwrap.dedent(
        """
        import sys
        from strom.runtime.taskexecutor.thread_switching import TaskThreadSwitching

        sys.setswitchinterval(0.004)
        settings = TaskThreadSwitching(1.0)
        settings.apply()
        assert settings.applied and sys.getswitchinterval() == 0.001
        sys.setswitchinterval(0.002)  # changed meanwhile: a second apply (second task) changes nothing
        settings.apply()
        assert sys.getswitchinterval() == 0.002
        settings.restore()
        assert sys.getswitchinterval() == 0.004 and not settings.applied
        settings.restore()
        assert sys.getswitchinterval() == 0.004
        zero = TaskThreadSwitching(0)
        zero.apply()
        assert sys.getswitchinterval() == 0.004 and not zero.applied
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_a_negative_interval_is_refused_with_a_hint() -> None:
    with pytest.raises(ValueError, match=r"switch-interval >= 0 ms; got -2.*hint"):
        TaskThreadSwitching(-2)
