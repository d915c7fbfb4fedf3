"""The dashboard's browser side for the e2e tests: Debian's headless Chromium through selenium and
``/usr/bin/chromedriver`` (``scripts/ensure-chromium.sh`` installs both), and helpers that read what a page shows.
Importable from every test directory (``pythonpath`` in pyproject.toml).

The page re-renders its sections on every poll, so it is read in one script call (a consistent snapshot: the page's
own script cannot run in between) rather than element by element, and clicks retry on a stale element.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

__all__ = [
    "CHROMEDRIVER",
    "CHROMIUM_FLAGS",
    "VERTEX_COLUMNS",
    "as_int",
    "chromium",
    "click",
    "enabled",
    "no_console_errors",
    "read",
    "text_of",
    "vertex_table",
    "wait_for",
]

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1440,1000",
]


def wait_for(what: str, predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Poll ``predicate`` until it returns something truthy (stale elements of a re-rendered page count as not yet)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            value = predicate()
            if value:
                return value
            last = value
        except (StaleElementReferenceException, AssertionError) as exc:
            last = exc
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}; last: {last!r}"
        time.sleep(0.1)


@contextlib.contextmanager
def chromium(directory: Path) -> Iterator[webdriver.Chrome]:
    """Debian's headless Chromium driven by its chromedriver, its profile and driver log in ``directory``; quit on
    exit, whatever happened."""
    binary = shutil.which("chromium")
    if binary is None or not os.access(CHROMEDRIVER, os.X_OK):
        raise RuntimeError("Debian's chromium and chromium-driver are not installed; run scripts/ensure-chromium.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={directory / 'chromium-profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER, log_output=str(directory / "driver.log")))
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()


_READ = """
const [selector, attrs, parts] = arguments;
return [...document.querySelectorAll(selector)].map((e) => ({
  text: e.textContent,
  cells: [...e.querySelectorAll(':scope > td')].map((c) => c.textContent),
  attrs: Object.fromEntries(attrs.map((a) => [a, e.getAttribute(a)])),
  parts: Object.fromEntries(parts.map((p) => [p, [...e.querySelectorAll(p)].map((x) => x.textContent)])),
}));
"""


def read(
    driver: webdriver.Chrome, selector: str, attrs: tuple[str, ...] = (), parts: tuple[str, ...] = ()
) -> list[Any]:
    """Every element matching ``selector``: its text, its table cells, the ``attrs`` and the texts of ``parts``."""
    return list(driver.execute_script(_READ, selector, list(attrs), list(parts)))


def text_of(driver: webdriver.Chrome, selector: str) -> str:
    found = read(driver, selector)
    return str(found[0]["text"]) if found else ""


def click(driver: webdriver.Chrome, selector: str) -> None:
    def attempt() -> bool:
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        if not found:
            return False
        found[0].click()
        return True

    wait_for(f"a click on {selector}", attempt)


def enabled(driver: webdriver.Chrome, selector: str) -> bool:
    return bool(driver.execute_script("return !document.querySelector(arguments[0]).disabled", selector))


def no_console_errors(driver: webdriver.Chrome, *expected: str) -> None:
    """No script error, no CSP violation, no failed request in the page's console but the ``expected`` ones."""
    log: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]  # selenium's own
    errors = [e for e in log if e["level"] == "SEVERE" and not any(x in e["message"] for x in expected)]
    assert not errors, errors


VERTEX_COLUMNS = ["name", "parallelism", "status", "in", "out", "bytes in", "bytes out", "busy", "backpressured",
                  "watermark", "throughput", "back pressure", "tasks"]  # fmt: skip


def vertex_table(driver: webdriver.Chrome) -> dict[str, dict[str, str]]:
    """The vertex table by vertex id, its cells by VERTEX_COLUMNS."""
    return {
        r["attrs"]["data-vertex-id"]: dict(zip(VERTEX_COLUMNS, r["cells"], strict=True))
        for r in read(driver, "table.vertices tbody tr", ("data-vertex-id",))
    }


def as_int(text: str) -> int:
    return int(text.replace(",", ""))
