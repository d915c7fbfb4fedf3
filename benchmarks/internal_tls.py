"""What TLS inside the cluster costs (``security.ssl.internal.enabled``): W1 (source → map → filter → count, chained:
only RPC crosses processes) and W2 (… → key_by → reduce: every record crosses a data connection at p=2) on two
TaskManager processes, with internal TLS off and on.

    python benchmarks/internal_tls.py                 # N = 1M events, 4 rounds, p=2
    python benchmarks/internal_tls.py --quick         # smoke run
    python benchmarks/internal_tls.py --write-docs    # ... and its section of docs/benchmarks.md

Events/s = N / in-job time (first source open → last sink close); results checked against the plain runs'. Each round
runs both settings per workload in an order that alternates from round to round (ABBA); the ratio TLS / plain is
taken within a round and the median (min–max) over the rounds is reported. The stores are a throw-away CA's
(``tests/tls_certificates.py``: EC P-256 keys, one PKCS#12 keystore for every process).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import DOCS, log, machine, md_table, splice_section, text_table
from jobs import JobRun, run_w1, run_w2

SECTION_BEGIN = "<!-- internal-tls-benchmarks:begin -->"
SECTION_END = "<!-- internal-tls-benchmarks:end -->"
WORKLOADS: dict[str, Callable[..., JobRun]] = {"W1": run_w1, "W2": run_w2}


def tls_options(directory: Path) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tls_certificates import STORE_PASSWORD, TRUST_PASSWORD, make_pki

    pki = make_pki(directory)
    return {
        "security.ssl.internal.enabled": "true",
        "security.ssl.internal.keystore": str(pki.server_p12),
        "security.ssl.internal.keystore-password": STORE_PASSWORD,
        "security.ssl.internal.truststore": str(pki.ca_p12),
        "security.ssl.internal.truststore-password": TRUST_PASSWORD,
    }


def measure(n: int, repeat: int, p: int, timeout_s: float, tls: dict[str, Any]) -> dict[tuple[str, bool], list[float]]:
    rates: dict[tuple[str, bool], list[float]] = defaultdict(list)
    for i in range(repeat):
        for name, run in WORKLOADS.items():
            results = {}
            for on in [False, True] if i % 2 == 0 else [True, False]:
                with tempfile.TemporaryDirectory(prefix="strom-bench-") as out:
                    r = run(n, p, out, timeout_s, {"taskmanager.numberOfTaskSlots": 1, **(tls if on else {})})
                results[on] = r.result
                rates[(name, on)].append(n / r.job_s)
                log(f"round {i + 1}/{repeat} {name} p={p} tls={'on ' if on else 'off'}: {n / r.job_s:,.0f} ev/s")
            if results[True] != results[False]:
                raise SystemExit(f"{name}: the results with and without TLS differ")
    return rates


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int)
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    n = a.n or (200_000 if a.quick else 1_000_000)
    repeat = a.repeat or (1 if a.quick else 4)
    p = 2
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="strom-tls-") as pki_dir:
        rates = measure(n, repeat, p, a.timeout, tls_options(Path(pki_dir)))
    load_after = os.getloadavg()
    rows = []
    for name in WORKLOADS:
        off, on = rates[(name, False)], rates[(name, True)]
        ratios = [b / x for b, x in zip(on, off, strict=True)]
        rows.append(
            [
                f"{name} p={p}",
                f"{statistics.median(off):,.0f} ({min(off):,.0f}–{max(off):,.0f})",
                f"{statistics.median(on):,.0f} ({min(on):,.0f}–{max(on):,.0f})",
                f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})",
            ]
        )
    header = ["workload", "TLS off, events/s", "TLS on, events/s", "on / off, paired"]
    print(text_table(header, rows))
    load = f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    print(f"results equal with and without TLS; {load}")
    if a.write_docs:
        info = machine()
        section = "\n".join(
            [
                SECTION_BEGIN,
                "## TLS inside the cluster",
                "",
                f"`python benchmarks/internal_tls.py --n {n} --repeat {repeat}` on {dt.date.today().isoformat()}, "
                f"{info.get('cpu', '?')}, {info.get('python', '?')}; {load}. Two TaskManager processes (one slot "
                "each); W1 is chained (its records never leave their process: only RPC is encrypted), W2's key_by "
                "sends every record over a TaskManager-to-TaskManager data connection.",
                "",
                md_table(header, rows),
                "",
                SECTION_END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text(), section, SECTION_BEGIN, SECTION_END))
        log(f"wrote its section of {DOCS}")


if __name__ == "__main__":
    main()
