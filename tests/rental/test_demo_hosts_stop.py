"""make run's demo hosts stop on Ctrl-C: honcho's SIGTERM to the process's group ends
`manage.py demo_hosts` by itself (issue 23; seen failing: it was still up ten minutes after
SIGTERM, so honcho SIGKILLed it on every Ctrl-C, its SSH servers' sessions left behind)."""

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time

from rental.hosts.localhost import TEST_HOSTS_BASE, remove_accounts
from tests.chain_fixtures import free_port
from tests.embedded.stack import ROOT, embedded_env


def test_demo_hosts_stop_on_the_sigterm_honcho_sends(tmp_path):
    prefix = f"grt{secrets.token_hex(2)}-"  # removed below, or by the next run if killed
    # The tenant accounts must reach the hosts' folders: not under pytest's private tmp_path.
    var_dir = TEST_HOSTS_BASE / prefix / "var"
    env = embedded_env(var_dir, HOSTS_ACCOUNT_PREFIX=prefix, DEMO_SSH_PORT=str(free_port()))
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
        if os.geteuid() == 0:
            remove_accounts(prefix)
        shutil.rmtree(TEST_HOSTS_BASE / prefix, ignore_errors=True)
