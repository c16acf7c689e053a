"""From paid to active to erased on a real host: real accounts, real ssh logins, the worker's
Ansible playbooks; only the cards are stand-ins (a device directory and nvidia-smi)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from rental import capacity
from rental.hosts.models import Tenancy, TenancyStatus, TenancyStep
from rental.models import CardAllocation, HostState, OrderStatus
from rental.services.lifecycle import order_end, rentals_tick

pytestmark = pytest.mark.django_db(transaction=True)


def lots_free(gpu_model) -> int:
    return capacity.lots_available([gpu_model])[gpu_model.pk]


def account_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def test_the_customer_logs_in_during_the_rental_and_is_refused_after_it(
    register_host, paid_order, customer_key, ssh_as, catalogue
):
    host, machine = register_host(cards=2)
    h100 = catalogue["h100"]
    assert lots_free(h100) == 2
    before = timezone.now()

    order = paid_order(h100, lots=1)

    # Active only once verified as the tenant; the rental clock starts there.
    assert order.status == OrderStatus.ACTIVE
    tenancy = Tenancy.objects.get(order=order)
    assert tenancy.status == TenancyStatus.READY
    assert order.starts_at >= tenancy.ready_at - timedelta(seconds=1) >= before
    assert [card["index"] for card in tenancy.cards_verified] == tenancy.cards
    assert account_exists(tenancy.account)
    # The diagnostics kit ran as the tenant: its report is the order's handover report, and
    # it matches the order (no handover problem for the operators).
    from pilot.models import DiagnosticsReport, ReportSource

    report = DiagnosticsReport.objects.get(order=order)
    assert report.source == ReportSource.WORKER
    assert report.hostname and report.step_reached
    assert not report.handover_problem
    assert order.provisioning_issue == ""

    # The customer's own key logs in to its own account and sees exactly its card.
    seen = ssh_as(
        machine, tenancy.account, customer_key, "nvidia-smi -L; echo CVD=$CUDA_VISIBLE_DEVICES"
    )
    assert seen.returncode == 0, seen.stderr
    lines = [line for line in seen.stdout.splitlines() if line.startswith("GPU ")]
    assert len(lines) == 1 and lines[0].startswith(f"GPU {tenancy.cards[0]}:")
    uuid = machine.cards[tenancy.cards[0]]["uuid"]
    assert f"CVD={uuid}" in seen.stdout
    # The one-time verification key was removed: only the customer's key is authorized.
    keys = (machine_home(tenancy) / ".ssh" / "authorized_keys").read_text().splitlines()
    assert keys == [customer_key.with_suffix(".pub").read_text().strip()]

    # It leaves a process and files behind (named after the account: runs and workers at once
    # share /tmp, and only the account itself could overwrite its file there).
    left_name = f"{tenancy.account}-left"
    left = ssh_as(
        machine, tenancy.account, customer_key,
        f"nohup sleep 600 >/dev/null 2>&1 & echo secret > ~/results.txt; "
        f"echo secret > /tmp/{left_name}; echo secret > /dev/shm/{left_name}; "
        f"echo secret > /var/tmp/{left_name}; echo ok",
    )  # fmt: skip
    assert left.stdout.strip() == "ok"
    uid = tenancy.account_uid
    assert uid and processes_of(uid)
    assert lots_free(h100) == 1

    # The hard stop: the tick at the end tears it down, verified, before the card is free.
    order_end_time = order.ends_at + timedelta(seconds=1)
    report = rentals_tick(now=order_end_time)
    assert report.ended == [order.pk]
    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.ERASED, tenancy.problem
    assert tenancy.erased_at is not None
    assert "verified: login refused" in tenancy.erasure_summary
    assert "verified: no process" in tenancy.erasure_summary

    refused = ssh_as(machine, tenancy.account, customer_key, "true")
    assert refused.returncode == 255 and "Permission denied" in refused.stderr
    assert not account_exists(tenancy.account)
    assert not processes_of(uid)
    for path in (f"/tmp/{left_name}", f"/dev/shm/{left_name}", f"/var/tmp/{left_name}"):
        assert not exists(path), path
    assert not machine_home(tenancy).exists()
    device = machine.device_path(tenancy.cards[0])
    assert (device.stat().st_uid, device.stat().st_mode & 0o777) == (0, 0o600)
    assert lots_free(h100) == 2
    assert CardAllocation.objects.get(order=order).released_at is not None
    steps = list(TenancyStep.objects.filter(tenancy=tenancy, phase="teardown"))
    assert steps and all(step.finished_at for step in steps)
    assert "was successfully reset" not in ""  # the reset is journaled:
    assert any(
        step.name.startswith("The cards are reset") and step.outcome == "changed" for step in steps
    )


def test_two_orders_on_one_host_see_only_their_own_cards_and_one_ending_leaves_the_other(
    register_host, paid_order, customer_key, ssh_as, catalogue, make_customer, tmp_path
):
    import subprocess

    host, machine = register_host(cards=2)
    h100 = catalogue["h100"]
    other = make_customer()
    other_key = tmp_path / "other_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True
    )

    first = paid_order(h100, lots=1)
    second = paid_order(h100, lots=1, who=other, key=other_key)
    one, two = Tenancy.objects.get(order=first), Tenancy.objects.get(order=second)
    assert one.cards != two.cards
    assert first.status == second.status == OrderStatus.ACTIVE

    def cards_seen(tenancy, key):
        result = ssh_as(
            machine, tenancy.account, key, "nvidia-smi --query-gpu=index --format=csv,noheader"
        )
        assert result.returncode == 0, result.stderr
        return [int(line) for line in result.stdout.split()]

    assert cards_seen(one, customer_key) == one.cards
    assert cards_seen(two, other_key) == two.cards
    # One customer's key does not open the other's account.
    assert ssh_as(machine, two.account, customer_key, "true").returncode == 255
    # The first writes a file; after its teardown the second, and the next tenant of that card,
    # read nothing of it.
    results = f"{one.account}-results"  # of the account's own (/tmp is shared with other runs)
    ssh_as(machine, one.account, customer_key, f"echo private > /tmp/{results}")

    order_end(order_id=first.pk, now=first.ends_at + timedelta(seconds=1))
    one.refresh_from_db()
    assert one.status == TenancyStatus.ERASED
    assert not exists(f"/tmp/{results}")
    assert cards_seen(two, other_key) == two.cards
    two.refresh_from_db()
    assert two.status == TenancyStatus.READY

    third = paid_order(h100, lots=1)
    three = Tenancy.objects.get(order=third)
    assert three.cards == one.cards and three.account != one.account
    listing = ssh_as(
        machine, three.account, customer_key, f"ls -A ~ /tmp | grep -c {results} || true"
    )
    assert listing.stdout.strip() == "0"


def test_an_unreachable_host_at_the_end_quarantines_the_cards_until_a_retry_finishes(
    register_host, paid_order, catalogue, operator
):
    from rental.hosts.tenancy import tenancy_retry

    host, machine = register_host(cards=1)
    h100 = catalogue["h100"]
    order = paid_order(h100)
    tenancy = Tenancy.objects.get(order=order)
    machine.stop()

    order_end(order_id=order.pk, now=order.ends_at + timedelta(seconds=1))
    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.QUARANTINED
    assert "unreachable" in tenancy.problem
    assert lots_free(h100) == 0  # never sold while the tenant may still have it
    assert CardAllocation.objects.get(order=order).released_at is None

    machine.start()
    tenancy_retry(tenancy_id=tenancy.pk, actor=operator)
    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.ERASED
    assert lots_free(h100) == 1
    assert not account_exists(tenancy.account)


def test_a_changed_host_key_stops_all_work_on_that_host(register_host, paid_order, catalogue):
    host, machine = register_host(cards=1)
    machine.replace_host_key()

    order = paid_order(catalogue["h100"])

    host.refresh_from_db()
    assert host.state == HostState.HOST_KEY_CHANGED
    assert "Host key changed" in host.state_detail and "pinned SHA256:" in host.state_detail
    tenancy = Tenancy.objects.get(order=order)
    assert tenancy.status == TenancyStatus.PROVISIONING
    assert not account_exists(tenancy.account)  # nothing ran there
    assert order.status == OrderStatus.PROVISIONING
    assert lots_free(catalogue["h100"]) == 0


def test_an_early_end_because_the_host_failed_tears_down_and_takes_the_host_out_of_service(
    register_host, paid_order, catalogue, operator, customer_key, ssh_as
):
    from payments.ledger.services.refunds import order_end_early_with_refund

    host, machine = register_host(cards=2)
    h100 = catalogue["h100"]
    order = paid_order(h100)
    tenancy = Tenancy.objects.get(order=order)

    order_end_early_with_refund(
        order_id=order.pk, actor=operator, reason="GPU fell off the bus", host_failed=True
    )

    tenancy.refresh_from_db()
    host.refresh_from_db()
    assert tenancy.status == TenancyStatus.ERASED
    assert ssh_as(machine, tenancy.account, customer_key, "true").returncode == 255
    assert host.state == HostState.OUT_OF_SERVICE
    # Its cards are not sold again until a host check passes.
    assert lots_free(h100) == 0


def machine_home(tenancy):
    from pathlib import Path

    return Path(tenancy.account_home or f"/home/{tenancy.account}")


def processes_of(uid: int) -> list[str]:
    import subprocess

    result = subprocess.run(["pgrep", "-u", str(uid)], capture_output=True, text=True)
    return result.stdout.split()


def exists(path: str) -> bool:
    from pathlib import Path

    return Path(path).exists()


def test_a_worker_killed_during_a_teardown_is_resumed_and_the_cards_are_never_free_meanwhile(
    register_host, paid_order, catalogue, settings, customer_key, ssh_as
):
    """The teardown runs in a separate process (the hard stop queued by the tick, the task run
    at once after the commit there); it is killed with SIGKILL in the middle of a step. The
    next tick finds the work stalled (its lease ran out) and the next run finishes it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from django.db import connection

    host, machine = register_host(cards=1)
    h100 = catalogue["h100"]
    order = paid_order(h100)
    tenancy = Tenancy.objects.get(order=order)
    ssh_as(machine, tenancy.account, customer_key, "nohup sleep 600 >/dev/null 2>&1 & echo ok")

    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "HOSTS_ADMIN_KEY_FILE": settings.HOSTS_ADMIN_KEY_FILE,
        "HOSTS_ACCOUNT_PREFIX": settings.HOSTS_ACCOUNT_PREFIX,
        "HOSTS_LEASE_SECONDS": "2",
    }
    end = (order.ends_at + timedelta(seconds=1)).isoformat()
    code = (
        "import django; django.setup();"
        "import config.celery_app;"  # a worker: it runs the tasks its commits queue
        "from datetime import datetime;"
        "from rental.services.lifecycle import order_end;"
        f"order_end(order_id={order.pk}, now=datetime.fromisoformat({end!r}))"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", code], env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    interrupted_step = None
    while time.monotonic() < deadline and worker.poll() is None:
        step = TenancyStep.objects.filter(
            tenancy=tenancy, phase="teardown", name="No process of the tenant runs",
            finished_at__isnull=True,
        ).first()  # fmt: skip
        if step:
            os.killpg(worker.pid, signal.SIGKILL)
            interrupted_step = step
            break
        time.sleep(0.02)
    worker.wait(timeout=30)
    assert interrupted_step is not None, "the teardown was not caught in the middle"
    assert worker.returncode == -signal.SIGKILL

    # Killed mid-teardown: still revoking, the card out of stock, the account still there.
    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.REVOKING
    assert lots_free(h100) == 0
    assert CardAllocation.objects.get(order=order).released_at is None

    # Its lease runs out; the tick queues the work again and the next run finishes it.
    time.sleep(2.5)
    settings.HOSTS_LEASE_SECONDS = 2
    report = rentals_tick(now=timezone.now() + timedelta(seconds=10))
    assert report.host_work_resumed == [tenancy.pk]
    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.ERASED, tenancy.problem
    interrupted_step.refresh_from_db()
    assert interrupted_step.outcome == "interrupted"
    assert any("resumed after an interruption" in line for line in tenancy.erasure_summary)
    assert not account_exists(tenancy.account)
    assert ssh_as(machine, tenancy.account, customer_key, "true").returncode == 255
    assert lots_free(h100) == 1


def test_an_order_paid_without_a_key_waits_for_it_then_is_prepared_with_it(
    register_host, place_order, customer, customer_key, catalogue, ssh_as
):
    from rental.exceptions import SshKeyLocked
    from rental.services.orders import order_mark_paid
    from rental.services.provisioning import order_set_ssh_key

    host, machine = register_host(cards=1)
    order = place_order(customer, catalogue["h100"])
    order_mark_paid(order_id=order.pk, actor=None, reason="Paid in the test")

    order.refresh_from_db()
    tenancy = Tenancy.objects.get(order=order)
    assert order.status == OrderStatus.PROVISIONING
    assert tenancy.status == TenancyStatus.PROVISIONING
    assert not account_exists(tenancy.account)  # nothing made for nobody to log in

    key = customer_key.with_suffix(".pub").read_text()
    order_set_ssh_key(order_id=order.pk, customer=customer, key_text=key)

    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    tenancy.refresh_from_db()
    assert ssh_as(machine, tenancy.account, customer_key, "true").returncode == 0
    # Installed on the host: it can no longer change for this order.
    with pytest.raises(SshKeyLocked):
        order_set_ssh_key(order_id=order.pk, customer=customer, key_text=key)
