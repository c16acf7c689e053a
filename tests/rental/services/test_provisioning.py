"""From paid to active against the database, a real OpenSSH server and ports that fail."""

from collections import defaultdict
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection, transaction
from django.utils import timezone

from rental.exceptions import NotAwaitingCapacity, SshKeyMissing
from rental.models import (
    CardAllocation,
    Host,
    HostState,
    Order,
    OrderEmail,
    OrderStatus,
    OrderStatusChange,
    ProvisioningIssue,
)
from rental.services import order_mark_paid
from rental.services.lifecycle import rentals_tick
from rental.services.provisioning import (
    Readiness,
    order_allocate,
    order_check_readiness,
    order_mark_prepared,
)
from tests.concurrency import run_concurrently
from tests.conftest import lots_available
from tests.states import hosts_set_state

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ada@laptop"


@pytest.fixture
def only_hosts(catalogue):
    """Replace a model's demo hosts by hosts with these free card counts."""

    def make(gpu_model, *cards, **fields):
        Host.objects.filter(gpu_model=gpu_model).delete()
        return [
            Host.objects.create(
                management="manual",
                name=f"{gpu_model.slug}-{number}",
                gpu_model=gpu_model,
                cards=count,
                ssh_host=fields.get("ssh_host", "127.0.0.1"),
                ssh_port=fields.get("ssh_port", 22),
                ssh_user="ubuntu",
            )
            for number, count in enumerate(cards, start=1)
        ]

    return make


def pay(order: Order) -> Order:
    with transaction.atomic():
        return order_mark_paid(order_id=order.pk, actor=None, reason="test payment")


def placements(order: Order) -> dict[int, list[tuple[str, int]]]:
    lots = defaultdict(list)
    for allocation in CardAllocation.objects.filter(order=order).select_related("host"):
        lots[allocation.lot].append((allocation.host.name, allocation.card_index))
    return dict(lots)


def test_paying_allocates_b200_lots_as_pairs_on_as_few_hosts_as_possible(
    catalogue, customer, place_order, only_hosts, django_capture_on_commit_callbacks
):
    b200 = catalogue["b200"]
    only_hosts(b200, 3, 8, 5)  # pairs free: 1, 4, 2
    order = place_order(customer, b200, lots=3)

    with django_capture_on_commit_callbacks(execute=True):
        paid = pay(order)

    assert paid.status == OrderStatus.PROVISIONING
    lots = placements(order)
    assert sorted(lots) == [1, 2, 3]
    assert all(len(cards) == 2 and len({host for host, _ in cards}) == 1 for cards in lots.values())
    assert {host for cards in lots.values() for host, _ in cards} == {"b200-180gb-2"}
    change = OrderStatusChange.objects.filter(order=order).last()
    assert (change.from_status, change.to_status) == (OrderStatus.PAID, OrderStatus.PROVISIONING)
    assert change.reason == "Cards allocated: b200-180gb-2 ×6"
    assert [m.subject for m in mail.outbox] == [f"Payment received for order {order.reference}"]


def test_an_order_larger_than_any_host_is_split_over_the_fewest_hosts(
    catalogue, customer, place_order, only_hosts
):
    h100 = catalogue["h100"]
    only_hosts(h100, 2, 6, 4, 3)
    order = place_order(customer, h100, lots=9)

    pay(order)

    per_host = defaultdict(int)
    for cards in placements(order).values():
        for host, _ in cards:
            per_host[host] += 1
    assert dict(per_host) == {"h100-80gb-2": 6, "h100-80gb-4": 3}  # two hosts, tightest second


def test_allocated_cards_are_no_longer_in_stock_and_come_back_at_the_end(
    catalogue, customer, place_order, only_hosts
):
    h200 = catalogue["h200"]
    only_hosts(h200, 4)
    order = place_order(customer, h200, lots=3)
    assert lots_available(h200) == 1  # held while awaiting payment
    pay(order)
    assert lots_available(h200) == 1  # now allocated instead of held
    assert CardAllocation.objects.filter(order=order, released_at__isnull=True).count() == 3


def test_capacity_that_vanished_leaves_the_order_paid_in_the_operators_queue(
    catalogue, customer, place_order, only_hosts, django_capture_on_commit_callbacks
):
    mi300x = catalogue["mi300x"]
    hosts = only_hosts(mi300x, 4)
    order = place_order(customer, mi300x, lots=2)
    hosts_set_state(Host.objects.filter(pk=hosts[0].pk), HostState.MAINTENANCE)

    with django_capture_on_commit_callbacks(execute=True):
        paid = pay(order)

    assert paid.status == OrderStatus.PAID
    assert paid.provisioning_issue == ProvisioningIssue.CAPACITY
    assert "free on available hosts: 0 card(s) on 0 host(s)" in paid.provisioning_issue_detail
    assert not CardAllocation.objects.filter(order=order).exists()
    assert sorted(m.subject for m in mail.outbox) == [
        f"Order {order.reference}: preparing your machines takes longer",
        f"Payment received for order {order.reference}",
    ]
    # Still held: a newcomer cannot take the cards this paid order waits for.
    hosts_set_state(Host.objects.filter(pk=hosts[0].pk), HostState.AVAILABLE)
    assert lots_available(mi300x) == 2

    with django_capture_on_commit_callbacks(execute=True):
        allocated = order_allocate(order_id=order.pk, actor=None)

    assert allocated.status == OrderStatus.PROVISIONING
    assert allocated.provisioning_issue == ""
    assert CardAllocation.objects.filter(order=order).count() == 2
    assert OrderEmail.objects.filter(order=order, kind="provisioning_delayed").count() == 1
    with pytest.raises(NotAwaitingCapacity):
        order_allocate(order_id=order.pk, actor=None)


@pytest.mark.django_db(transaction=True)
def test_parallel_paid_orders_never_get_the_same_card(catalogue, make_customer, place_order):
    assert connection.vendor == "postgresql"
    b200 = catalogue["b200"]
    Host.objects.filter(gpu_model=b200).delete()
    for number, cards in enumerate((8, 6, 5, 4), start=1):  # 4 + 3 + 2 + 2 = 11 pairs
        Host.objects.create(
            management="manual",
            name=f"race-{number}", gpu_model=b200, cards=cards, ssh_host="h", ssh_user="u"
        )
    orders = [place_order(make_customer(), b200, lots=1 + index % 2) for index in range(7)]
    assert sum(order.lots for order in orders) == 10
    # One host goes to maintenance after the orders were placed: 4 pairs fewer than held.
    hosts_set_state(Host.objects.filter(name="race-1"), HostState.MAINTENANCE)

    results = run_concurrently(lambda index: pay(orders[index]), len(orders))

    assert not [result for result in results if isinstance(result, Exception)], results
    live = CardAllocation.objects.filter(released_at__isnull=True)
    pairs = {(a.host_id, a.card_index) for a in live}
    assert len(pairs) == live.count()  # no card twice
    assert not live.filter(host__name="race-1").exists()
    for host in Host.objects.filter(gpu_model=b200):
        assert live.filter(host=host).count() <= host.cards
    allocated = Order.objects.filter(pk__in=[o.pk for o in orders], status="provisioning")
    waiting = Order.objects.filter(pk__in=[o.pk for o in orders], status="paid")
    assert allocated.count() + waiting.count() == len(orders)
    assert all(order.provisioning_issue == "capacity" for order in waiting)
    assert live.count() == 2 * sum(order.lots for order in allocated)
    assert live.count() >= 12  # 7 pairs fit on 6 + 5 + 4 cards: at most one lot of 2 is left out
    for order in allocated:
        for cards in placements(order).values():
            assert len(cards) == 2 and len({host for host, _ in cards}) == 1


@pytest.fixture
def provisioning_order(catalogue, customer, place_order, only_hosts):
    """A paid H100 order of two lots on two hosts, with the customer's key."""

    def make(*endpoints):
        h100 = catalogue["h100"]
        Host.objects.filter(gpu_model=h100).delete()
        for number, (host, port) in enumerate(endpoints, start=1):
            Host.objects.create(
                management="manual",
                name=f"node-{number}",
                gpu_model=h100,
                cards=1,
                ssh_host=host,
                ssh_port=port,
                ssh_user="ubuntu",
            )
        order = place_order(customer, h100, lots=len(endpoints), duration_days=7)
        pay(order)
        Order.objects.filter(pk=order.pk).update(ssh_public_key=KEY)
        return order

    return make


def test_an_ssh_banner_from_every_host_makes_the_order_active(
    provisioning_order, sshd, django_capture_on_commit_callbacks
):
    order = provisioning_order((sshd.host, sshd.port), (sshd.host, sshd.port))
    now = timezone.now()

    with django_capture_on_commit_callbacks(execute=False):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04, CUDA 12.8")
    with django_capture_on_commit_callbacks(execute=True):
        outcome = order_check_readiness(order_id=order.pk, now=now)

    assert outcome == Readiness.READY
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    assert (order.starts_at, order.ends_at) == (now, now + timedelta(days=7))
    change = OrderStatusChange.objects.filter(order=order).last()
    assert change.reason == "SSH answered on node-1, node-2"
    assert [m.subject for m in mail.outbox][
        -1
    ] == f"Order {order.reference}: your machines are ready"
    assert f"ssh -p {sshd.port} ubuntu@{sshd.host}" in mail.outbox[-1].body


def test_marking_prepared_runs_the_readiness_check_after_the_commit(
    provisioning_order, sshd, django_capture_on_commit_callbacks
):
    order = provisioning_order((sshd.host, sshd.port))
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="PyTorch 2.9 in /opt/venv")
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    assert order.access_notes == "PyTorch 2.9 in /opt/venv"


@pytest.mark.parametrize("failing", ["closed_port", "silent_port", "not_ssh_port"])
def test_a_host_without_a_banner_keeps_the_order_provisioning_then_queues_it(
    provisioning_order, sshd, failing, request, django_capture_on_commit_callbacks, settings
):
    port = request.getfixturevalue(failing)
    order = provisioning_order((sshd.host, sshd.port), ("127.0.0.1", port))
    with django_capture_on_commit_callbacks(execute=False):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04")

    outcomes = [order_check_readiness(order_id=order.pk) for _ in range(3)]

    assert outcomes == [Readiness.RETRY, Readiness.RETRY, Readiness.GAVE_UP]
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING
    assert order.starts_at is None
    assert order.readiness_attempts == settings.READINESS_MAX_ATTEMPTS == 3
    assert order.provisioning_issue == ProvisioningIssue.READINESS
    expected = {"closed_port": "refused", "silent_port": "no SSH banner within", "not_ssh_port": ""}
    assert f"127.0.0.1:{port}" in order.readiness_error
    assert expected[failing] in order.readiness_error
    assert "node-1" not in order.readiness_error  # the host that answered is not blamed
    assert order_check_readiness(order_id=order.pk) == Readiness.GAVE_UP  # no more probing
    assert not [m for m in mail.outbox if "are ready" in m.subject]


def test_the_worker_retries_with_backoff_until_it_gives_up(
    provisioning_order, closed_port, django_capture_on_commit_callbacks
):
    # Tasks are eager in tests: each retry runs at once, the backoff is only computed.
    order = provisioning_order(("127.0.0.1", closed_port))
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04")
    order.refresh_from_db()
    assert order.readiness_attempts == 3
    assert order.provisioning_issue == ProvisioningIssue.READINESS
    assert order.status == OrderStatus.PROVISIONING


def test_marking_prepared_again_starts_the_checks_over(
    provisioning_order, closed_port, sshd, django_capture_on_commit_callbacks
):
    order = provisioning_order(("127.0.0.1", closed_port))
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="first try")
    Host.objects.filter(name="node-1").update(ssh_host=sshd.host, ssh_port=sshd.port)

    with django_capture_on_commit_callbacks(execute=True):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="fixed the firewall")

    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    assert (order.readiness_attempts, order.provisioning_issue) == (0, "")


def test_hosts_cannot_be_marked_prepared_without_the_customers_key(provisioning_order):
    order = provisioning_order(("127.0.0.1", 22))
    Order.objects.filter(pk=order.pk).update(ssh_public_key="")
    with pytest.raises(SshKeyMissing):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04")
    order.refresh_from_db()
    assert order.prepared_at is None


def test_readiness_of_an_order_not_prepared_does_nothing(provisioning_order):
    order = provisioning_order(("127.0.0.1", 22))
    assert order_check_readiness(order_id=order.pk) == Readiness.NOT_APPLICABLE
    order.refresh_from_db()
    assert (order.status, order.readiness_attempts) == (OrderStatus.PROVISIONING, 0)


def test_the_tick_restarts_readiness_checks_that_stalled(
    provisioning_order, sshd, django_capture_on_commit_callbacks
):
    order = provisioning_order((sshd.host, sshd.port))
    with django_capture_on_commit_callbacks(execute=False):  # the queued check is lost
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04")
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING

    with django_capture_on_commit_callbacks(execute=True):
        soon = rentals_tick(now=order.updated_at + timedelta(minutes=5))
    assert soon.rechecked == []
    with django_capture_on_commit_callbacks(execute=True):
        later = rentals_tick(now=order.updated_at + timedelta(minutes=16))

    assert later.rechecked == [order.pk]
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
