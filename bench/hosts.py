"""The hosts' worker on real hosts: paid → active, end → access refused, the tick, parallel ends.

Ten loopback local hosts (rental/hosts/localhost.py: the distribution's sshd on a 127.0.0.1
port each, REAL Unix accounts, one fake H100 card each), registered as an operator does (key
fetched, confirmed, host checks passed, in parallel). Celery runs eagerly as in the tests: a
task queued after a commit runs in-process right after it. Each round:

1. paid → active, one order alone: `order_mark_paid` until the order is active (allocation,
   provision.yml, verify.yml logging in as the tenant, activation), split by where the time
   goes: each playbook run (engine.run_playbook, timed), its steps from the TenancyStep
   journal (the slowest three per phase over all rounds), and the rest. Baselines on the same
   host: a bare `ssh admin@host true`, and Ansible's own start-up, engine.run_playbook with a
   playbook of one `ansible.builtin.ping` task (become, as the host playbooks).
   Target: ≤ 20 s.
2. end → access refused: `order_end` (now past the end) queues the teardown, which runs at
   once after the commit; from the start of that task until a real `ssh` login with the
   customer's key, polled meanwhile, is refused; and the teardown's total. Target: ≤ 15 s.

and, in BENCH_HOSTS_PARALLEL_ROUNDS of the rounds (1: ten orders' provisioning and teardown
cost about as much Ansible as all the single rounds together), after that round's own:

3. The hard stop falls due within one beat tick: `rentals_tick` runs every 60 s and ends the
   active orders whose ends_at passed. Ten orders, one per host, are paid at once (provisioned
   in parallel threads, timed too), then made to end within the last minute (their week moved
   back); one tick with the ten due is timed against a tick with nothing due, its tasks
   published to the bench's own Redis number as in production (a worker runs them, not the
   tick) and deleted afterwards. Replayed TICK_REPLAYS times rolled back, then once for real.
4. Those ten teardowns ("revoking" since the tick) run at once, one thread each with its own
   database connection, as ten workers of the hosts queue would: the wall time against the
   sum of the ten, and against one teardown alone (section 2).

Needs root (accounts, sshd): without it, says so and exits 0. Accounts are named "grb" + 3 hex
digits + "-": all removed at the end, also on an error (and those of a killed earlier run, at
the start). Its own database and Redis number. Run with `make bench`; nothing here asserts a
time. BENCH_HOSTS_ROUNDS (3), BENCH_HOSTS_PARALLEL_ROUNDS (1), BENCH_HOSTS_COUNT (10).
"""

import contextlib
import logging
import os
import re
import resource
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
# A database and a Redis number of its own (before settings are read): the test database is
# test_<name>, created and dropped here.
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gr_bench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django.test.utils import (  # noqa: E402
    setup_databases,
    setup_test_environment,
    teardown_databases,
    teardown_test_environment,
)
from django.utils import timezone  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_HOSTS_ROUNDS", "3"))
# Ten orders provisioned and torn down at once cost ten hosts' worth of Ansible (about as much
# as all the single rounds together): one such round by default, placed among the others.
PARALLEL_ROUNDS = min(ROUNDS, int(os.environ.get("BENCH_HOSTS_PARALLEL_ROUNDS", "1")))
# The tick with ten due: replayed this many times rolled back, then once for real.
TICK_REPLAYS = 2
HOSTS = int(os.environ.get("BENCH_HOSTS_COUNT", "10"))  # fewer for a quick try
TARGET_ACTIVE_S = 20.0
TARGET_REFUSED_S = 15.0
TICK_EVERY_S = 60
OWNER_FILE = "owner.pid"
SSH = shutil.which("ssh") or "/usr/bin/ssh"
PREFIX_PATTERN = re.compile(r"grb[0-9a-f]{3}-")
PING_PLAYBOOK = """\
- name: Ansible's own start-up
  hosts: target
  gather_facts: false
  become: true
  tasks:
    - name: Ping
      ansible.builtin.ping:
"""


# ------------------------------------------------------------------------------ helpers


def summary(samples: list[float]) -> str:
    return (
        f"{statistics.median(samples):7.2f} s  ({min(samples):.2f}–{max(samples):.2f})"
        if samples
        else "      –"
    )


def line(name: str, samples: list[float], extra: str = "") -> None:
    print(f"  {name:<50} {summary(samples)}{extra}")


def ratio(name: str, numerator: list[float], denominator: list[float], extra: str = "") -> None:
    value = statistics.median(numerator) / statistics.median(denominator)
    print(f"  {name:<50} {value:7.2f}x{extra}")


def in_threads(calls: list) -> list[tuple[float, float, object]]:
    """Each call in a thread of its own, all released together; (start, end, result) per call.
    Every thread has its own database connection, closed when it ends. Re-raises the first
    error once all are done."""
    barrier = threading.Barrier(len(calls))
    done: list = [None] * len(calls)

    def work(index: int, call) -> None:
        try:
            barrier.wait()
            start = time.time()
            try:
                result = call()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                result = exc
            done[index] = (start, time.time(), result)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for _start, _end, result in done:
        if isinstance(result, BaseException):
            raise result
    return done


def ssh(machine, user: str, key: Path, known_hosts: Path, command: str = "true"):
    """The real ssh client, the host's key pinned, no connection sharing: (seconds, result)."""
    start = time.perf_counter()
    options = {
        "BatchMode": "yes",
        "IdentitiesOnly": "yes",
        "StrictHostKeyChecking": "yes",
        "UserKnownHostsFile": str(known_hosts),
        "GlobalKnownHostsFile": "/dev/null",
        "ConnectTimeout": "5",
    }
    argv = [SSH, "-p", str(machine.port), "-i", str(key), "-F", "/dev/null"]
    for name, value in options.items():
        argv += ["-o", f"{name}={value}"]
    result = subprocess.run(  # noqa: S603
        [*argv, f"{user}@{machine.host}", command],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - start, result


def refused(result) -> bool:
    return result.returncode == 255 and "Permission denied" in result.stderr


class RefusalWatch(threading.Thread):
    """Logs in as the tenant with the customer's key again and again until a login is refused:
    `refused_at` is the end of the first refused attempt (time.time())."""

    def __init__(self, machine, user, key, known_hosts):
        super().__init__(daemon=True)
        self.args_ = (machine, user, key, known_hosts)
        self.stop = threading.Event()
        self.accepted = 0
        self.refused_at: float | None = None
        self.attempts: list[float] = []

    def run(self) -> None:
        deadline = time.time() + 180
        while not self.stop.is_set() and time.time() < deadline:
            seconds, result = ssh(*self.args_)
            self.attempts.append(seconds)
            if refused(result):
                self.refused_at = time.time()
                return
            if result.returncode == 0:
                self.accepted += 1
            time.sleep(0.05)


def step_seconds(step) -> float:
    return (step.finished_at - step.started_at).total_seconds()


def remove_abandoned(base: Path, remove_accounts) -> None:
    """Accounts and hosts of earlier runs of this bench that were killed before their cleanup."""
    if not base.is_dir():
        return
    for folder in base.iterdir():
        if not PREFIX_PATTERN.fullmatch(folder.name):
            continue
        try:
            owner = int((folder / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            remove_accounts(folder.name)
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            continue


def _terminate(signum, _frame):
    raise SystemExit(128 + signum)  # the cleanup below runs


# ------------------------------------------------------------------------------ the bench


def main() -> None:
    if os.geteuid() != 0:
        print(
            "bench/hosts.py: skipped, local hosts need root (they create Unix accounts and run "
            "sshd); run it as root"
        )
        return
    from rental.hosts.localhost import (
        SSHD,
        TEST_HOSTS_BASE,
        create_local_host,
        ensure_admin,
        fake_cards,
        remove_accounts,
    )

    for path, package in ((SSHD, "openssh-server"), ("/usr/bin/sudo", "sudo")):
        if not os.access(path, os.X_OK):
            raise SystemExit(f"{path} is missing: run scripts/ensure-test-services ({package})")
    signal.signal(signal.SIGTERM, _terminate)
    logging.disable(logging.INFO)  # the services' and Celery's status lines; warnings still show
    remove_abandoned(TEST_HOSTS_BASE, remove_accounts)
    prefix = f"grb{secrets.token_hex(2)[:3]}-"
    folder = TEST_HOSTS_BASE / prefix
    started, load_start = time.perf_counter(), os.getloadavg()
    machines = []
    old_config = None
    try:
        folder.mkdir(mode=0o755, parents=True)
        for path in (TEST_HOSTS_BASE, folder):
            path.chmod(0o755)  # the tenant accounts go through them to their hosts' roots
        (folder / OWNER_FILE).write_text(str(os.getpid()))
        key_dir = folder / "admin-key"
        key_dir.mkdir(mode=0o700)
        admin = ensure_admin(prefix, key_dir)
        settings.HOSTS_ADMIN_KEY_FILE = str(admin.private_key_path)
        settings.HOSTS_ACCOUNT_PREFIX = prefix
        for number in range(HOSTS):
            name = f"bench-{number}"
            machines.append(
                create_local_host(
                    folder / name,
                    prefix=prefix,
                    cards=fake_cards("NVIDIA H100 80GB HBM3", 1, 81559, seed=f"{prefix}{name}"),
                )
            )
        setup_test_environment()
        old_config = setup_databases(verbosity=0, interactive=False)
        results = run(prefix, folder, admin, machines, load_start)
    finally:
        cleanup = [lambda: [machine.stop() for machine in machines]]
        cleanup.append(lambda: remove_accounts(prefix))
        cleanup.append(lambda: shutil.rmtree(folder, ignore_errors=True))
        if old_config is not None:
            cleanup.append(lambda: teardown_databases(old_config, verbosity=0))
            cleanup.append(teardown_test_environment)
        cleanup.append(_forget_queued)
        for step in cleanup:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - every cleanup step gets its turn
                print(f"cleanup: {exc}", file=sys.stderr)
    report(results, time.perf_counter() - started)


def _redis():
    import redis

    return redis.Redis.from_url(os.environ["REDIS_URL"])


QUEUES = ("hosts", "celery")


def _forget_queued() -> dict[str, int]:
    """Delete the messages the non-eager tick published to this bench's Redis number."""
    client = _redis()
    counts = {queue: client.llen(queue) for queue in QUEUES}
    client.delete(*QUEUES)
    return counts


def run(prefix, folder, admin, machines, load_start) -> dict:
    from accounts.models import User
    from config.celery_app import app as celery_app
    from rental.hosts import engine, tenancy
    from rental.hosts.models import Tenancy, TenancyStatus, TenancyStep
    from rental.hosts.services import (
        host_check,
        host_confirm_key,
        host_fetch_key,
        target_of,
    )
    from rental.models import CardAllocation, GpuModel, Host, HostState, Order, OrderStatus
    from rental.services import Configuration, order_create
    from rental.services.lifecycle import order_end, rentals_tick
    from rental.services.orders import order_mark_paid

    assert settings.CELERY_TASK_ALWAYS_EAGER, "the test settings run tasks eagerly"
    settings.MAX_UNPAID_ORDERS = 10_000
    call_command("load_demo_catalogue", stdout=open(os.devnull, "w"))  # noqa: SIM115
    h100 = GpuModel.objects.get(slug="h100-80gb")
    Host.objects.filter(gpu_model=h100).delete()  # only the bench's hosts offer H100 cards
    operator = User.objects.create_user(
        "bench-operator@example.com", "x" * 12, first_name="O", last_name="P"
    )
    customer = User.objects.create_user(
        "bench-customer@example.com", "x" * 12, first_name="C", last_name="U"
    )
    customer_key = folder / "customer_ed25519"
    subprocess.run(  # noqa: S603
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "customer", "-f", customer_key],  # noqa: S607
        check=True,
        capture_output=True,
    )
    customer.ssh_public_key = customer_key.with_suffix(".pub").read_text().strip()
    customer.save(update_fields=["ssh_public_key"])
    known_hosts = folder / "known_hosts"
    known_hosts.write_text("".join(m.known_hosts_line + "\n" for m in machines))
    ping = folder / "ping.yml"
    ping.write_text(PING_PLAYBOOK)

    # -- the ten hosts, registered as an operator does; the host checks run in parallel
    by_host: dict[int, object] = {}
    for number, machine in enumerate(machines):
        host = Host.objects.create(
            name=f"bench-{number}",
            gpu_model=h100,
            cards=1,
            ssh_host=machine.host,
            ssh_port=machine.port,
            ssh_user="unused",
            management="worker",
            admin_user=admin.user,
            device_dir=str(machine.device_dir),
            gpu_tool=machine.gpu_tool,
            state=HostState.UNCHECKED,
        )
        host_fetch_key(host_id=host.pk)
        host_confirm_key(
            host_id=host.pk, actor=operator, fingerprint=engine.fingerprint(machine.host_key_line)
        )
        by_host[host.pk] = machine

    def check(host_id):
        return lambda: host_check(host_id=host_id, actor=operator, make_available=True)

    t0 = time.time()
    checks = in_threads([check(host_id) for host_id in by_host])
    registration = time.time() - t0
    failed = [outcome.detail for _s, _e, outcome in checks if not outcome.passed]
    if failed:
        raise RuntimeError(f"host checks failed: {failed}")

    # -- instruments: the playbook runs and the teardown task, timed where they are called
    runs: list[dict] = []
    original_run_playbook = engine.run_playbook

    def timed_run_playbook(target, playbook, *args, **kwargs):
        start = time.time()
        try:
            return original_run_playbook(target, playbook, *args, **kwargs)
        finally:
            runs.append({"playbook": Path(playbook).name, "start": start, "end": time.time()})

    engine.run_playbook = timed_run_playbook
    teardown_calls: list[tuple[float, float]] = []
    original_teardown = tenancy.tenancy_teardown

    def timed_teardown(**kwargs):
        start = time.time()
        try:
            return original_teardown(**kwargs)
        finally:
            teardown_calls.append((start, time.time()))

    def place():
        return order_create(
            customer=customer,
            configuration=Configuration(
                gpu_model=h100, duration_days=7, lots=1, preparation="ubuntu"
            ),
        )

    def pay(order_id):
        order_mark_paid(order_id=order_id, actor=None, reason="Paid in the bench")
        return Order.objects.get(pk=order_id).status

    def settle_failed(tenancy_ids, what):
        """A teardown that did not erase: what its user id belongs to now (on local hosts all
        hosts share this machine's accounts, so another run's useradd can take the freed id
        and the erasure check then finds that account's files), retried once; still not
        erased, its cards are released by hand for the next round. Counted and printed."""
        import pwd

        bad = list(Tenancy.objects.filter(pk__in=tenancy_ids).exclude(status=TenancyStatus.ERASED))
        for row in bad:
            print(f"  ! {what}: {row.account} {row.status}: {row.problem}", file=sys.stderr)
            if row.account_uid is not None:
                try:
                    holder = pwd.getpwuid(row.account_uid).pw_name
                except KeyError:
                    holder = "nobody (free)"
                print(
                    f"    its user id {row.account_uid} belongs now to: {holder}", file=sys.stderr
                )
            if row.status == TenancyStatus.QUARANTINED:
                with contextlib.suppress(Exception):
                    tenancy.tenancy_retry(tenancy_id=row.pk, actor=operator)
            row.refresh_from_db()
            print(f"    after one retry: {row.status} {row.problem}", file=sys.stderr)
            if row.status != TenancyStatus.ERASED:
                CardAllocation.objects.filter(
                    order_id=row.order_id, released_at__isnull=True
                ).update(released_at=timezone.now())
        return len(bad)

    out = {
        "registration": registration,
        "load_start": load_start,
        "ssh": [], "ping": [], "active": [], "provision_run": [], "provision_steps": [],
        "active_rest": [], "steps": {},
        "refused": [], "keys_removed": [], "teardown": [], "order_end": [], "poll": [],
        "parallel_active_wall": [], "parallel_active_each": [], "tick_idle": [], "tick_due": [],
        "queued": [], "parallel_wall": [], "parallel_sum": [], "parallel_each": [],
        "failures": 0, "provision_outside": [], "parallel_keys_removed": [],
    }  # fmt: skip
    celery_eager = celery_app.conf.task_always_eager

    def alone_round():
        """Sections 1 and 2: one order paid → active, the baselines, its end → refused."""
        order = place()
        runs.clear()
        t0 = time.time()
        status = pay(order.pk)
        t1 = time.time()
        if status != OrderStatus.ACTIVE:
            problems = list(Tenancy.objects.filter(order=order).values_list("problem"))
            raise RuntimeError(f"order {order.reference} is {status}, not active: {problems}")
        out["active"].append(t1 - t0)
        lone = Tenancy.objects.select_related("host").get(order=order)
        machine = by_host[lone.host_id]
        by_playbook = {run["playbook"]: run["end"] - run["start"] for run in runs}
        out["active_rest"].append(t1 - t0 - sum(by_playbook.values()))
        # One run provisions and verifies (provision_verify.yml) when no operator's step comes
        # in between; its journal holds both.
        run_seconds = by_playbook.get("provision_verify.yml") or sum(
            by_playbook.get(f"{phase}.yml", 0) for phase in ("provision", "verify")
        )
        steps = sum(step_seconds(step) for step in TenancyStep.objects.filter(tenancy=lone))
        out["provision_run"].append(run_seconds)
        out["provision_steps"].append(steps)
        out["provision_outside"].append(run_seconds - steps)
        # the baselines, against the same host
        for _ in range(3):
            seconds, result = ssh(machine, admin.user, admin.private_key_path, known_hosts)
            assert result.returncode == 0, result.stderr
            out["ssh"].append(seconds)
        start = time.time()
        result = engine.run_playbook(target_of(lone.host), str(ping), {})
        out["ping"].append(time.time() - start)
        assert result.ok, result.summary

        # 2. end → access refused, the customer's login polled meanwhile
        watch = RefusalWatch(machine, lone.account, customer_key, known_hosts)
        watch.start()
        while watch.accepted == 0 and watch.is_alive():
            time.sleep(0.02)  # the customer's key logs in before the end
        teardown_calls.clear()
        tenancy.tenancy_teardown = timed_teardown  # the task calls it through the module
        try:
            order.refresh_from_db()
            t0 = time.time()
            order_end(order_id=order.pk, now=order.ends_at + timedelta(seconds=1))
            t1 = time.time()
        finally:
            tenancy.tenancy_teardown = original_teardown
        watch.stop.set()
        watch.join(timeout=60)
        task_start, task_end = teardown_calls[0][0], teardown_calls[-1][1]
        out["order_end"].append(t1 - t0)
        out["teardown"].append(task_end - task_start)
        out["poll"].extend(watch.attempts)
        if watch.refused_at is None:
            raise RuntimeError("the customer's login was never refused")
        out["refused"].append(watch.refused_at - task_start)
        keys = TenancyStep.objects.filter(
            tenancy=lone, phase="teardown", name="No key is authorized any more"
        ).first()
        if keys is not None and keys.finished_at:
            out["keys_removed"].append(keys.finished_at.timestamp() - task_start)
        for step in TenancyStep.objects.filter(tenancy=lone).exclude(finished_at=None):
            out["steps"].setdefault((step.phase, step.name), []).append(step_seconds(step))
        out["failures"] += settle_failed([lone.pk], "teardown alone")

    def move_ends(orders):
        """Their week has passed: each ended within the last minute."""
        now = timezone.now()
        for number, placed in enumerate(orders):
            ends = now - timedelta(seconds=1 + 5 * number)
            Order.objects.filter(pk=placed.pk).update(
                starts_at=ends - timedelta(days=placed.duration_days), ends_at=ends
            )

    def tick(*, keep: bool, before=None):
        """One rentals_tick (after `before`, untimed), its tasks published to the bench's Redis
        number (not run), timed until its last publication; everything rolled back afterwards
        unless `keep`."""
        from django.db import transaction
        from django.test import TestCase

        class Replayed(Exception):  # noqa: N818 - a signal to roll back, not an error
            pass

        celery_app.conf.task_always_eager = False
        celery_app.conf.broker_url = os.environ["REDIS_URL"]
        try:
            if keep:
                if before:
                    before()
                start = time.time()
                result = rentals_tick()
                return time.time() - start, result
            try:
                with transaction.atomic():
                    if before:
                        before()
                    start = time.time()
                    with TestCase.captureOnCommitCallbacks(execute=True):
                        result = rentals_tick()
                    elapsed = time.time() - start
                    raise Replayed
            except Replayed:
                return elapsed, result
        finally:
            celery_app.conf.task_always_eager = celery_eager

    def parallel_round():
        """Sections 3 and 4: ten orders paid at once, due together, one tick, ten teardowns."""
        orders = [place() for _ in range(HOSTS)]
        paid = in_threads([lambda pk=o.pk: pay(pk) for o in orders])
        not_active = [r for _s, _e, r in paid if r != OrderStatus.ACTIVE]
        if not_active:
            raise RuntimeError(f"{len(not_active)} of the ten orders not active: {not_active}")
        out["parallel_active_wall"].append(
            max(e for _s, e, _r in paid) - min(s for s, _e, _r in paid)
        )
        out["parallel_active_each"].extend(e - s for s, e, _r in paid)
        hosts_used = set(Tenancy.objects.filter(order__in=orders).values_list("host_id", flat=True))
        assert len(hosts_used) == HOSTS, hosts_used

        # 3. the tick: nothing due, then the ten due (replays rolled back, the last one kept)
        expected = sorted(o.pk for o in orders)
        tick(keep=False, before=lambda: move_ends(orders))  # warm-up: the broker's connection
        _forget_queued()
        for replay in range(TICK_REPLAYS + 1):
            elapsed, result = tick(keep=True)
            assert not result.ended, result
            out["tick_idle"].append(elapsed)
            keep = replay == TICK_REPLAYS
            elapsed, result = tick(keep=keep, before=lambda: move_ends(orders))
            assert sorted(result.ended) == expected, result
            out["tick_due"].append(elapsed)
            published = _forget_queued()
            if keep:
                out["queued"].append(published)

        # 4. the ten teardowns at once ("revoking" since the tick)
        revoking = list(
            Tenancy.objects.filter(order__in=orders, status=TenancyStatus.REVOKING).values_list(
                "pk", flat=True
            )
        )
        assert len(revoking) == HOSTS, revoking
        done = in_threads([lambda pk=pk: original_teardown(tenancy_id=pk) for pk in revoking])
        each = [end - start for start, end, _r in done]
        started_at = dict(zip(revoking, (start for start, _e, _r in done), strict=True))
        for step in TenancyStep.objects.filter(
            tenancy_id__in=revoking, phase="teardown", name="No key is authorized any more"
        ).exclude(finished_at=None):
            out["parallel_keys_removed"].append(
                step.finished_at.timestamp() - started_at[step.tenancy_id]
            )
        out["parallel_wall"].append(max(e for _s, e, _r in done) - min(s for s, _e, _r in done))
        out["parallel_sum"].append(sum(each))
        out["parallel_each"].extend(each)
        out["failures"] += settle_failed(revoking, "parallel teardown")

    # The parallel rounds (ten hosts' worth of Ansible each) spread among the single ones.
    parallel_after = {int((k + 1) * ROUNDS / (PARALLEL_ROUNDS + 1)) for k in range(PARALLEL_ROUNDS)}
    try:
        for round_number in range(ROUNDS):
            print(f"round {round_number + 1}/{ROUNDS} …", file=sys.stderr, flush=True)
            alone_round()
            if round_number in parallel_after:
                print("  ten orders at once …", file=sys.stderr, flush=True)
                parallel_round()
    finally:
        engine.run_playbook = original_run_playbook
        tenancy.tenancy_teardown = original_teardown
        celery_app.conf.task_always_eager = celery_eager
    return out


def report(out: dict, elapsed: float) -> None:
    rounds, parallel = len(out["active"]), len(out["parallel_wall"])
    print(
        f"hosts: {HOSTS} loopback local hosts (real sshd, real accounts, 1 fake H100 each); "
        f"{rounds} rounds, {parallel} of them with ten orders at once; median (min–max)"
    )
    print(f"  registration: {HOSTS} host checks in parallel, {out['registration']:.2f} s")
    print("1. paid → active, one order alone (order_mark_paid until active; tasks eager)")
    line("bare `ssh admin@host true` (3 per round)", out["ssh"])
    line("ansible ping playbook (run_playbook, 1 task)", out["ping"])
    line("paid → active", out["active"], f"   target ≤ {TARGET_ACTIVE_S:g} s")
    line("  provision_verify.yml run (4 plays, one as the tenant)", out["provision_run"])
    line("    its steps (journal)", out["provision_steps"])
    line("    start-up and between steps", out["provision_outside"])
    line("  the rest (allocation, keys, activation, email)", out["active_rest"])
    ratio("paid → active vs ansible ping playbook", out["active"], out["ping"])
    ratio("ansible ping playbook vs bare ssh", out["ping"], out["ssh"])
    slowest = sorted(out["steps"].items(), key=lambda item: -statistics.median(item[1]))
    for phase in ("provision", "teardown"):
        steps = [item for item in slowest if item[0][0] == phase]
        print(f"  slowest {phase} steps (of {len(steps)}):")
        for (_phase, name), samples in steps[:3]:
            print(f"    {name[:56]:<56} {summary(samples)}")
    print("2. end → access refused (order_end, now past the end; its teardown task eager)")
    line(
        "teardown task start → customer's login refused",
        out["refused"],
        f"   target ≤ {TARGET_REFUSED_S:g} s",
    )
    line("  keys removed (journal step done) after", out["keys_removed"])
    line("  one login attempt (the poll's resolution)", out["poll"])
    line("teardown task total", out["teardown"])
    line("order_end call total (teardown included)", out["order_end"])
    ratio("end → refused vs ansible ping playbook", out["refused"], out["ping"])
    print(
        f"3. the end falls due within one beat tick: rentals_tick runs every {TICK_EVERY_S} s and "
        "ends every active order whose ends_at passed (its teardowns queued, run by the hosts "
        "queue's workers)"
    )
    line(f"rentals_tick, nothing due ({HOSTS} active orders)", out["tick_idle"])
    line(
        f"rentals_tick, {HOSTS} orders due",
        out["tick_due"],
        f"   ({TICK_REPLAYS} rolled back, 1 kept, per round)",
    )
    ratio(f"tick with {HOSTS} due vs nothing due", out["tick_due"], out["tick_idle"])
    queued = out["queued"][0] if out["queued"] else {}
    print(f"  published by that tick (then deleted): {queued}")
    worst = max(out["tick_due"], default=0) + TICK_EVERY_S
    print(
        f"  from ends_at to its teardown task queued: at most {TICK_EVERY_S} s + the tick "
        f"= {worst:.1f} s; the end → refused figure above comes on top"
    )
    print(f"4. {HOSTS} orders ending in the same minute on {HOSTS} hosts, torn down in parallel")
    line(f"{HOSTS} paid at once → all active (wall)", out["parallel_active_wall"])
    line("  each order's paid → active meanwhile", out["parallel_active_each"])
    line(f"{HOSTS} teardowns at once, one thread each (wall)", out["parallel_wall"])
    line("  each teardown meanwhile", out["parallel_each"])
    line(
        "    its keys removed (journal step done) after",
        out["parallel_keys_removed"],
        f"   (login refused; target ≤ {TARGET_REFUSED_S:g} s)",
    )
    line(f"  sum of the {HOSTS}", out["parallel_sum"])
    line("one teardown alone (section 2)", out["teardown"])
    ratio(
        f"sum of the {HOSTS} / wall (overlap achieved)", out["parallel_sum"], out["parallel_wall"]
    )
    ratio(
        f"parallel speed-up: {HOSTS} × one alone / wall",
        [HOSTS * x for x in out["teardown"]],
        out["parallel_wall"],
    )
    ratio(f"wall of {HOSTS} at once vs one alone", out["parallel_wall"], out["teardown"])
    print(
        f"  load average at the start: {' '.join(f'{x:.1f}' for x in out['load_start'])}, "
        f"at the end: "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
        f"teardowns not erased (retried or released): {out['failures']}"
    )
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # ansible, ssh, the hosts' sshd
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    print(
        f"  bench run {elapsed:6.1f} s; CPU used {cpu:.0f} s, its own and its children's "
        f"(on {os.cpu_count()} idle cores at least {cpu / (os.cpu_count() or 1):.0f} s)"
    )


if __name__ == "__main__":
    main()
