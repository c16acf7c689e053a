"""bench/table.py prints issue 24's figures as the bench scripts recorded them (bench/results.py):
median with min and max, the target, whether it is met, and "not run" for a figure not recorded."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_recorded_figures_are_printed_against_their_targets(tmp_path):
    env = {**os.environ, "BENCH_RESULTS": str(tmp_path / "results.json")}
    record = (
        "import sys; sys.path.insert(0, 'bench'); from results import record; "
        "record('watcher.2000.vs_bare', [2.5, 2.1, 3.4]); "
        "record('settle.500.vs_one_transaction', [3.5, 3.2, 4.0]); "
        "record('pages.cpu_vs_plain.catalogue', [0.9, 0.8, 1.1]); "
        "record('http.catalogue_anonymous.rps_vs_bare', [0.7, 0.6, 0.65])"
    )
    subprocess.run([sys.executable, "-c", record], cwd=ROOT, env=env, check=True)
    table = subprocess.run(
        [sys.executable, "bench/table.py"], cwd=ROOT, env=env, check=True,
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    rows = {line.split("  ")[1]: line for line in table.splitlines() if line.startswith("  ")}
    watcher = rows["watcher scan ÷ bare eth_getLogs, 2,000 transfers"]
    assert "2.50 (2.10–3.40)" in watcher and " met" in watcher and "19×" in watcher
    settle = rows["settle 500 confirmations ÷ one transaction"]
    assert "3.50 (3.20–4.00)" in settle and "NOT MET" in settle
    assert "0.90 (0.80–1.10)" in rows["customer page CPU ÷ plain Django page, catalogue"]
    assert " met" in rows["anonymous catalogue req/s ÷ bare"]  # at least 0.6
    assert "not run" in rows["web worker RSS after 1,000 requests ÷ bare"]
