"""make run's demo hosts stop on Ctrl-C: honcho's SIGTERM to the process's group ends
`manage.py demo_hosts` by itself (issue 23; seen failing: it was still up ten minutes after
SIGTERM, so honcho SIGKILLed it on every Ctrl-C, its SSH servers' sessions left behind).
A port that another program holds is skipped, not fatal (seen failing in CI: "Bind to port
42308 on 127.0.0.1 failed: Address already in use", an outgoing connection's port)."""

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time

from rental.hosts.localhost import TEST_HOSTS_BASE, remove_accounts
from tests.embedded.stack import ROOT, embedded_env


def _held_port() -> socket.socket:
    """A listening socket: another program holding a demo host's port."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))
    held.listen()
    return held


def test_demo_hosts_skip_a_taken_port_and_stop_on_the_sigterm_honcho_sends(tmp_path):
    prefix = f"grt{secrets.token_hex(2)}-"  # removed below, or by the next run if killed
    # The tenant accounts must reach the hosts' folders: not under pytest's private tmp_path.
    var_dir = TEST_HOSTS_BASE / prefix / "var"
    held = _held_port()  # the second demo host's first choice
    taken = held.getsockname()[1]
    env = embedded_env(var_dir, HOSTS_ACCOUNT_PREFIX=prefix, DEMO_SSH_PORT=str(taken - 1))
    for command in ("migrate", "load_demo_catalogue"):
        subprocess.run(
            [sys.executable, "manage.py", command], cwd=ROOT, env=env, check=True,
            capture_output=True,
        )  # fmt: skip
    log = tmp_path / "demo_hosts.log"
    with log.open("ab") as output:
        hosts = subprocess.Popen(
            [sys.executable, "manage.py", "demo_hosts"], cwd=ROOT, env=env,
            stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while "demo hosts:" not in log.read_text():
            assert hosts.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        line = re.search(
            r"demo hosts: (\d+) local hosts on 127.0.0.1 ports (\d+(?:, \d+)*)", log.read_text()
        )
        assert line, log.read_text()
        ports = [int(port) for port in line.group(2).split(", ")]
        assert len(ports) == int(line.group(1)) >= 2
        assert taken not in ports  # skipped, every host up
        assert ports == sorted(set(ports)) and ports[1] > taken
        for port in ports:  # each answers as an SSH server
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                assert sock.recv(64).startswith(b"SSH-2.0-")

        os.killpg(hosts.pid, signal.SIGTERM)  # what honcho sends on Ctrl-C
        try:
            returncode = hosts.wait(timeout=60)
        except subprocess.TimeoutExpired:
            returncode = None
        assert returncode == 0, f"demo_hosts did not stop on SIGTERM:\n{log.read_text()}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(hosts.pid, signal.SIGKILL)
        hosts.wait()
        held.close()
        if os.geteuid() == 0:
            remove_accounts(prefix)
        shutil.rmtree(TEST_HOSTS_BASE / prefix, ignore_errors=True)
