"""Issue 24's table: every figure the bench scripts recorded (bench/results.py) beside the one
measured before the work and the target, with whether the target is met.

Last in `make bench`; `python bench/table.py` prints the latest recorded figures alone. "Before"
is the issue's own measurement (issue 24, taken with the same scripts before the changes); a
figure not measured in this run shows as "not run". Nothing here asserts a time.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import RESULTS, load  # noqa: E402

# key (or key prefix ending in "."), label, before, comparison, target
ROWS = [
    ("pages.cpu_vs_plain.", "customer page CPU ÷ plain Django page, {name}", "1.3–4×", "<=", 1.0),
    (
        "http.catalogue_logged_in.rps_vs_bare",
        "logged-in catalogue req/s ÷ bare",
        "0.05–0.08",
        ">=",
        0.25,
    ),
    ("http.catalogue_anonymous.rps_vs_bare", "anonymous catalogue req/s ÷ bare", "0.08", ">=", 0.6),
    ("http.order_page.rps_vs_bare", "order page req/s ÷ bare", "0.06", ">=", 0.15),
    ("payment_page.cpu_vs_order", "payment page CPU ÷ order page CPU", "~1.6 (2.00)", "<=", 1.1),
    ("watcher.2000.vs_bare", "watcher scan ÷ bare eth_getLogs, 2,000 transfers", "19×", "<=", 3.0),
    (
        "watcher.20800.vs_bare",
        "watcher scan ÷ bare eth_getLogs, 20,800 transfers",
        "4.2×",
        "<=",
        1.5,
    ),
    (
        "settle.500.vs_one_transaction",
        "settle 500 confirmations ÷ one transaction",
        "7.1–8.2×",
        "<=",
        3.0,
    ),
    (
        "memory.web_worker_rss_vs_bare",
        "web worker RSS after 1,000 requests ÷ bare",
        "2.15×",
        "<=",
        1.4,
    ),
    ("http.order_page.p99_vs_bare_4c", "order page p99 at 4 connections ÷ bare's", "—", None, None),
]


def verdict(median: float, comparison, target) -> str:
    if comparison is None:
        return "report"
    met = median <= target if comparison == "<=" else median >= target
    return "met" if met else "NOT MET"


def lines(results: dict) -> list[tuple[str, ...]]:
    rows = []
    for key, label, before, comparison, target in ROWS:
        keys = sorted(k for k in results if k.startswith(key)) if key.endswith(".") else [key]
        if not keys:
            keys = [key]
        for each in keys:
            name = each[len(key) :] if key.endswith(".") else ""
            entry = results.get(each)
            goal = (
                "report"
                if comparison is None
                else f"{comparison.replace('<=', '≤').replace('>=', '≥')} {target:g}"
            )
            if entry is None:
                now, state, at = "not run", "", ""
            else:
                now = f"{entry['median']:.2f} ({entry['min']:.2f}–{entry['max']:.2f})"
                state, at = verdict(entry["median"], comparison, target), entry["at"]
            rows.append((label.format(name=name or "all"), before, goal, now, state, at))
    return rows


def main() -> None:
    rows = lines(load())
    header = ("figure", "before", "target", "now: median (min–max)", "", "measured at (UTC)")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print(f"\nIssue 24's figures ({RESULTS}):")
    for row in [header, *rows]:
        cells = zip(row, widths, strict=True)
        print("  " + "  ".join(str(cell).ljust(width) for cell, width in cells))


if __name__ == "__main__":
    main()
