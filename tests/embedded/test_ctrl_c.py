"""Ctrl-C on `make run`: honcho stops every process of Procfile.dev (SIGTERM to each process's
group) and nothing says ERROR or prints a traceback on the way out (issue 23).

Seen failing before: the worker's pool processes, in the group honcho signals, died of the
SIGTERM and the worker logged "Process 'ForkPoolWorker-1' ... exited with 'signal 15
(SIGTERM)'" as an ERROR, one line per pool process."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.chain_fixtures import free_port

from .stack import ROOT, embedded_env

# The demo hosts need root and an SSH server (and make accounts on this machine).
LEFT_OUT = {"hosts"}
READY = {"web", "worker", "webhookworker", "hostworker", "beat"}
READY_LINE = re.compile(r"^\S+ (\w+)\.1 +\| .*(?:ready\.|beat: Starting|Quit the server)", re.M)


def _wait_for(log: Path, honcho, predicate, what: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(errors="replace")
        if predicate(text):
            return text
        assert honcho.poll() is None, f"honcho exited before {what}:\n{text[-6000:]}"
        assert time.monotonic() < deadline, f"no {what}:\n{text[-6000:]}"
        time.sleep(0.2)


def _workers_ready(text: str) -> bool:
    return set(READY_LINE.findall(text)) >= READY


def test_ctrl_c_stops_make_runs_processes_without_errors(tmp_path):
    anvil_port = free_port()
    env = embedded_env(
        tmp_path / "var",
        HOST="127.0.0.1",
        ANVIL_PORT=str(anvil_port),
        RPC_URL_LOCAL=f"http://127.0.0.1:{anvil_port}",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )  # fmt: skip
    procfile = tmp_path / "Procfile"
    procfile.write_text(
        "".join(
            f"{line}\n"
            for line in (ROOT / "Procfile.dev").read_text().splitlines()
            if line.partition(":")[0].strip() not in LEFT_OUT
        )
    )
    log = tmp_path / "honcho.log"
    honcho = Path(sys.executable).parent / "honcho"
    with log.open("ab") as output:
        stack = subprocess.Popen(
            [str(honcho), "-f", str(procfile), "-d", str(ROOT), "start", "-p", str(free_port())],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        _wait_for(log, stack, _workers_ready, "every process ready")
        # The chain's token is deployed and the worker has scanned it (beat's scan, every
        # second on make run).
        _wait_for(log, stack, lambda text: "Token address:" in text, "the chain set up")
        _wait_for(
            log, stack, lambda text: "scan_network" in text and "succeeded in" in text, "a scan"
        )

        os.killpg(stack.pid, signal.SIGINT)  # what the terminal sends on Ctrl-C
        stack.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(stack.pid, signal.SIGKILL)

    text = log.read_text(errors="replace")
    stopping = text[text.index("SIGINT received") :]
    for name in ("worker", "webhookworker", "hostworker"):
        assert re.search(rf"^\S+ {name}\.1 +\| worker: Warm shutdown", stopping, re.M), text
    assert "Traceback" not in text, text
    assert "Connection refused" not in text, text  # the last scan, the chain already gone
    assert not re.findall(r".*\b(?:ERROR|CRITICAL)\b.*", text), text
    assert _processes_with(f"VAR_DIR={tmp_path / 'var'}") == [], "processes left running"


def _processes_with(variable: str) -> list[int]:
    """Processes whose environment holds `variable` (every process of this stack has it)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError):
            if variable.encode() in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
    return found


READ_A_STOPPED_CHAIN = """
import django
django.setup()
from payments.chain.networks import get_network
from payments.chain.rpc import ChainClient, RpcError
try:
    ChainClient(get_network("local"), rpc_url="http://127.0.0.1:{port}/").head()
except RpcError as error:
    print("RpcError", type(error).__name__)
"""


def test_a_scan_of_the_stopped_chain_warns_of_no_retry(tmp_path):
    """Ctrl-C stops the chain at once, often while the worker scans it: the scan's failure is
    its own RpcError (retried, logged by the task), not a WARNING from urllib3 per attempt
    ("Retrying ... Connection refused", seen before under the development settings)."""
    port = free_port()
    env = embedded_env(tmp_path / "var", RPC_URL_LOCAL=f"http://127.0.0.1:{port}/")
    result = subprocess.run(
        [sys.executable, "-c", READ_A_STOPPED_CHAIN.format(port=port)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert result.stdout.startswith("RpcError"), result.stdout + result.stderr
    assert "Retrying" not in result.stderr, result.stderr
    assert "Connection refused" not in result.stderr, result.stderr
