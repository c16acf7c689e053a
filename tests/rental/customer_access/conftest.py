"""Orders and their hosts' access (tenancies) in each state, made through the services: the
order paid from the balance (cards allocated, one tenancy per host), tenancies moved with
`tenancy_set_status` as the worker moves them, orders made active by
`order_activate_if_verified` (worker-managed hosts) or by `order_mark_prepared` +
`order_check_readiness` against the test sshd (hosts prepared by hand), ended by `order_end`,
erased by the worker's status change or the operators' `tenancy_confirm_teardown`.

Nothing after a commit runs (the worker's host jobs are not wanted here: no host is real)."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from rental.hosts.models import Tenancy, TenancyStatus
from rental.hosts.tenancy import (
    MANUAL_TEARDOWN_CHECKLIST,
    tenancy_confirm_teardown,
    tenancy_set_status,
)
from rental.models import Host, Order, OrderStatus
from rental.services.lifecycle import order_end
from rental.services.provisioning import (
    Readiness,
    order_activate_if_verified,
    order_check_readiness,
    order_mark_prepared,
    order_set_ssh_key,
)

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test@example"
)


@pytest.fixture
def hosts(catalogue, make_host, sshd):
    """hosts(count, management="worker", cards=2): the H100 cards only on these hosts (the
    demo hosts, with no rented card, are removed), all answering on the test sshd."""

    def make(count: int = 1, management: str = "worker", cards: int = 2) -> list[Host]:
        h100 = catalogue["h100"]
        Host.objects.filter(gpu_model=h100, allocations__isnull=True).delete()
        return [
            make_host(
                h100,
                cards,
                name=f"gpu-{management}-{number}",
                management=management,
                ssh_host=sshd.host,
                ssh_port=sshd.port,
                ssh_user="ubuntu",
            )
            for number in range(1, count + 1)
        ]

    return make


@pytest.fixture
def paid(catalogue, place_order, credit, customer):
    """paid(lots=1, who=customer, **options) -> the order paid from the balance: its cards are
    allocated (provisioning) and each host has its tenancy, "provisioning"."""

    def pay(lots: int = 1, who=None, **options) -> Order:
        who = who or customer
        credit(who, "20000.00")
        order = place_order(who, catalogue["h100"], lots=lots, **options)
        order_set_ssh_key(order_id=order.pk, customer=who, key_text=SSH_KEY)
        balance_pay_order(order_id=order.pk, customer=who)
        order.refresh_from_db()
        assert order.status == OrderStatus.PROVISIONING
        assert order.tenancies.count() >= 1
        return order

    return pay


def tenancies(order: Order) -> list[Tenancy]:
    return list(Tenancy.objects.filter(order=order).order_by("host__name"))


def cards_seen(tenancy: Tenancy) -> list[dict]:
    """What the worker reads when it logs in as the tenant: exactly the tenancy's cards."""
    return [
        {
            "index": index,
            "uuid": f"GPU-{tenancy.pk}-{index}",
            "name": "NVIDIA H100 80GB HBM3",
            "memory_mib": 81559,
        }
        for index in tenancy.cards
    ]


def to_verifying(order: Order, **fields) -> None:
    """The worker has made each account (and run the preparation's steps, if any)."""
    for tenancy in tenancies(order):
        tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.VERIFYING,
            actor=None,
            reason="Account, key, cards and preparation in place",
            **fields,
        )


def to_ready(order: Order, at=None) -> Order:
    """The worker logged in as each tenant and saw exactly its cards: the order is active."""
    at = at or timezone.now()
    for tenancy in tenancies(order):
        if tenancy.status == TenancyStatus.PROVISIONING:
            tenancy_set_status(
                tenancy_id=tenancy.pk,
                to_status=TenancyStatus.VERIFYING,
                actor=None,
                reason="Account, key, cards and preparation in place",
            )
        tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.READY,
            actor=None,
            reason="Logged in as the tenant",
            ready_at=at,
            cards_verified=cards_seen(tenancy),
        )
    order_activate_if_verified(order_id=order.pk, now=at)
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    return order


def prepared_by_hand(order: Order) -> Order:
    """Operators prepared the hosts by hand; the readiness check saw the test sshd answer."""
    order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04, CUDA 12.8")
    assert order_check_readiness(order_id=order.pk) == Readiness.READY
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    return order


def ended(order: Order) -> Order:
    """The hard stop at the end: every tenancy is being revoked."""
    order_end(order_id=order.pk, now=order.ends_at + timedelta(seconds=1))
    order.refresh_from_db()
    assert order.status == OrderStatus.ENDED
    return order


def erased_by_worker(tenancy: Tenancy, at=None) -> None:
    tenancy_set_status(
        tenancy_id=tenancy.pk,
        to_status=TenancyStatus.ERASED,
        actor=None,
        reason="verified: login refused",
        erased_at=at or timezone.now(),
        erasure_summary=["keys removed", "verified: no process", "verified: login refused"],
    )


def quarantined(tenancy: Tenancy) -> None:
    tenancy_set_status(
        tenancy_id=tenancy.pk,
        to_status=TenancyStatus.QUARANTINED,
        actor=None,
        reason="Teardown failed: the host did not answer",
        problem="The host did not answer",
    )


def erased_by_operator(tenancy: Tenancy, operator) -> None:
    tenancy_confirm_teardown(
        tenancy_id=tenancy.pk,
        actor=operator,
        confirmed={key for key, _label in MANUAL_TEARDOWN_CHECKLIST},
    )


# ------------------------------------------------------------------ reading the page


def page(client, order) -> str:
    response = client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk}))
    assert response.status_code == 200
    return response.content.decode()


def status_url(order) -> str:
    return reverse("rental:order_status", kwargs={"order_id": order.pk})


def text(fragment: str) -> str:
    """The words of an HTML fragment, tags removed, whitespace collapsed."""
    return " ".join(re.sub(r"<[^>]+>", "", fragment).split())


def field(html: str, name: str) -> str:
    """The text of the first element carrying data-field=name (tags stripped)."""
    match = re.search(rf'<(\w+)[^>]*data-field="{name}"[^>]*>(.*?)</\1>', html, flags=re.DOTALL)
    assert match, f'no data-field="{name}" on the page'
    return text(match.group(2))


def host_states(html: str) -> dict[str, tuple[str, str]]:
    """{host name: (data-state, text)} of every host state on the page."""
    found = {}
    for block in re.findall(r'data-host="([^"]+)"(.*?)</(?:li|div)>', html, flags=re.DOTALL):
        name, body = block
        match = re.search(
            r'data-field="host-state" data-state="([^"]+)">(.*?)</p>', body, flags=re.DOTALL
        )
        if match:
            found[name] = (match.group(1), text(match.group(2)))
    return found


def utc_text(moment) -> str:
    """A time as the page writes it (UTC, DATETIME_FORMAT of the active language)."""
    from django.template.defaultfilters import date as date_filter
    from django.templatetags.tz import utc

    return date_filter(utc(moment), "DATETIME_FORMAT")
