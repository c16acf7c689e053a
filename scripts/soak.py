"""make soak: the `make run` stack under a customer load for a bounded time, then a verdict.

Starts `make run` (web, worker, beat, local chain, demo SSH server: Procfile.dev) on free ports
in a scratch VAR_DIR, on the embedded default whatever DATABASE_URL or REDIS_URL say, so it never
touches the developer's var/ or databases. Customers sign up, log in, browse, order and pay: on
the local chain (exact, declared, in two transfers, with a surplus, too little, not at all), from
the USD balance (topped up on chain when short), or cancel. Progress is printed every minute.
At the end it waits for the last expiries and confirmations, then checks that every process is
still up, every payment and order ended in the state its flow calls for, every balance holds what
the flows imply, finance's reconciliation finds nothing, and the output shows no crash, failed
task, locked database or server error. Exits 1 when anything is wrong, 2 when the stack did not
start.

Settings (environment): SOAK_MINUTES (30), SOAK_CLIENTS (3 customers at once), SOAK_PORT (the
web port; the chain and SSH server take the next two; default: free ports), SOAK_SEED,
SOAK_KEEP=1 (keep the scratch directory), SOAK_PAYMENT_EXPIRY_MINUTES (2, so that expiries
happen during the run).
"""

import os
import random
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from soak_stack import ROOT, Stack, free_port

MINUTES = float(os.environ.get("SOAK_MINUTES", "30"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "3"))
EXPIRY_MINUTES = int(os.environ.get("SOAK_PAYMENT_EXPIRY_MINUTES", "2"))
SEED = int(os.environ.get("SOAK_SEED", str(int(time.time()))))
PROGRESS_SECONDS = 60
START_TIMEOUT_SECONDS = 900  # a first `make run` installs everything
DEMO_PASSWORD = os.environ.get("DEMO_PASSWORD", "demo-password")


def say(message: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {message}", flush=True)


def ports() -> tuple[int, int, int]:
    if os.environ.get("SOAK_PORT"):
        web = int(os.environ["SOAK_PORT"])
        return web, web + 1, web + 2
    return free_port(), free_port(), free_port()


def setup_django(stack: Stack) -> None:
    """This process reads the stack's own database (the embedded default in its VAR_DIR)."""
    from soak_stack import SERVER_VARIABLES

    for key in SERVER_VARIABLES:
        os.environ.pop(key, None)
    for key, value in stack.env().items():
        os.environ[key] = value
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.dev"
    os.environ["RPC_URL_LOCAL"] = f"http://127.0.0.1:{stack.anvil_port}"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def progress_line(driver, stack, started: float) -> str:
    tally = driver.tally
    minutes = (time.monotonic() - started) / 60
    missing = stack.missing()
    return (
        f"{minutes:5.1f} min: {sum(driver.flows.values())} visits "
        f"({', '.join(f'{k} {v}' for k, v in sorted(driver.flows.items()))}), "
        f"{sum(tally.requests.values())} requests "
        f"({', '.join(f'{k} {v}' for k, v in sorted(tally.statuses.items()))}), "
        f"{driver.chain_payments} transfers on chain, {len(driver.customers)} customers, "
        f"refused {sum(driver.refused.values())}, "
        f"errors {len(tally.errors) + len(driver.failures)}; "
        f"processes: {'all up' if not missing else 'DOWN: ' + ', '.join(missing)}"
    )


def drive(driver, stack, *, until: float, started: float) -> None:
    configurations = driver.configurations()
    stop = threading.Event()

    def customer_loop(number: int) -> None:
        rng = random.Random(SEED * 100 + number)  # noqa: S311 - a load, not a secret
        while not stop.is_set() and time.monotonic() < until:
            driver.visit(configurations)
            stop.wait(rng.uniform(1.0, 4.0))

    threads = [
        threading.Thread(target=customer_loop, args=(number,), daemon=True)
        for number in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    next_progress = time.monotonic() + PROGRESS_SECONDS
    while time.monotonic() < until and any(thread.is_alive() for thread in threads):
        time.sleep(1)
        if stack.missing():
            say(f"a process is down ({', '.join(stack.missing())}): stopping the load")
            break
        if time.monotonic() >= next_progress:
            say(progress_line(driver, stack, started))
            next_progress += PROGRESS_SECONDS
    stop.set()
    for thread in threads:
        thread.join(timeout=180)


def verdict(driver, stack, started_at: datetime, started: float) -> int:
    import soak_checks

    down = stack.missing()
    settle_problems = (
        soak_checks.settle(driver, timeout=EXPIRY_MINUTES * 60 + 240, progress=say)
        if not down
        else soak_checks.expectation_problems(driver)
    )
    down = stack.missing()  # still up after the settling too
    balances = soak_checks.balance_problems(driver)
    reconciliation, reconciliation_issues = soak_checks.reconciliation_problems(started_at)
    confirmed = sum(1 for e in driver.expectations if e.payment_status == "confirmed")
    log_summary, log_issues = soak_checks.log_problems(
        stack.log(), stack.base_url, confirmed_payments=confirmed
    )
    sections = {
        "processes down": down,
        "payments or orders not as expected": settle_problems,
        "balances": balances,
        "reconciliation": reconciliation_issues,
        "stack output": log_issues,
        "request errors": driver.tally.errors,
        "visit failures": driver.failures,
    }
    print("\n" + "=" * 78)
    say(f"SUMMARY after {(time.monotonic() - started) / 60:.1f} min (seed {SEED})")
    print(f"  {progress_line(driver, stack, started)}")
    expected = {}
    for expect in driver.expectations:
        expected[expect.scenario] = expected.get(expect.scenario, 0) + 1
    print(f"  checked: {', '.join(f'{k} {v}' for k, v in sorted(expected.items()))}")
    print(f"  refused (as the site should): {driver.refused or 'none'}")
    print(f"  slowest request: {driver.tally.slowest:.2f} s")
    reloads = stack.log().count("changed, reloading")
    print(
        f"  runserver reloads (a source file changed): {reloads}, "
        f"{driver.tally.restart_waits} s waited for it"
    )
    print(f"  reconciliation: {reconciliation}")
    print(f"  output: {log_summary}")
    failed = False
    for title, problems in sections.items():
        if problems:
            failed = True
            print(f"  FAIL {title} ({len(problems)}):")
            for problem in problems[:15]:
                print(f"    - {problem}")
        else:
            print(f"  ok   {title}: none")
    print("=" * 78)
    say(
        "FAILED"
        if failed
        else "PASSED: every process up, every payment as expected, the ledger reconciled"
    )
    return 1 if failed else 0


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="gpu-rental-soak-"))
    web_port, anvil_port, ssh_port = ports()
    stack = Stack(
        var_dir=scratch / "var",
        log_path=scratch / "stack.log",
        web_port=web_port,
        anvil_port=anvil_port,
        ssh_port=ssh_port,
        extra_env={"PAYMENT_EXPIRY_MINUTES": str(EXPIRY_MINUTES)},
    )
    say(
        f"{MINUTES:g} min, {CLIENTS} customers at once; stack at {stack.base_url}, "
        f"chain :{anvil_port}, SSH :{ssh_port}; scratch {scratch} (output in {stack.log_path})"
    )
    stack.start()
    status = 2
    try:
        try:
            stack.wait_until_ready(START_TIMEOUT_SECONDS)
        except RuntimeError as exc:
            say(f"the stack did not start: {exc}; its last output:\n{stack.log()[-4000:]}")
            return status
        say("stack up: " + ", ".join(f"{k} {v}" for k, v in stack.processes().items()))
        setup_django(stack)
        from soak_flows import Driver

        rng = random.Random(SEED)  # noqa: S311 - a load, not a secret
        driver = Driver(stack.base_url, rng, mailbox=stack.mailed_code)
        driver.add_operator_hosts(ssh_port=ssh_port, password=DEMO_PASSWORD)
        started_at, started = datetime.now(UTC), time.monotonic()
        drive(driver, stack, until=started + MINUTES * 60, started=started)
        say("load stopped; waiting for the last expiries and confirmations")
        status = verdict(driver, stack, started_at, started)
        return status
    finally:
        stack.stop()
        if status == 0 and os.environ.get("SOAK_KEEP") != "1":
            import shutil

            shutil.rmtree(scratch, ignore_errors=True)
        else:
            say(f"kept {scratch}")


if __name__ == "__main__":
    sys.exit(main())
