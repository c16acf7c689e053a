"""The emails say of access, preparation and erasure only what the code makes true: the ready
email gives each host's own command and what was verified; the ended email says each host's
access is being revoked (or when its erasure was verified), never "access is stopped" or
"data is erased" without the time it was verified."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import translation

from rental.models import OrderEmailKind
from rental.services.emails import order_email_send

from .conftest import (
    ended,
    erased_by_operator,
    erased_by_worker,
    prepared_by_hand,
    quarantined,
    tenancies,
    to_ready,
    utc_text,
)

pytestmark = pytest.mark.django_db

END_SENTENCE = (
    "At the end of the rental, access stops and the data left on the hosts is erased, and "
    "verified, before the cards go to another customer; the order page then shows when, host "
    "by host. It cannot be recovered."
)


def send(order, kind, now=None) -> str:
    assert order_email_send(order_id=order.pk, kind=kind, now=now)
    return mail.outbox[-1].body


def test_the_ready_email_gives_each_accounts_command_and_what_was_verified(hosts, paid, sshd):
    hosts(1)
    order = to_ready(paid(lots=2))
    body = send(order, OrderEmailKind.READY)
    [tenancy] = tenancies(order)
    assert (
        f"Your machines for order {order.reference} are ready and your rental has started: "
        "each host was checked, as said below."
    ) in body
    assert (
        f"{tenancy.host.name}\n"
        f"  ssh -p {sshd.port} {tenancy.account}@{sshd.host}\n"
        "  Cards 1, 2\n"
        f"  Verified at {utc_text(tenancy.ready_at)}: we logged in as your account and it sees "
        "cards 1, 2.\n"
        "  Ubuntu: nothing is installed on this host beyond its system.\n"
    ) in body
    assert "every host answered over SSH" not in body
    assert END_SENTENCE in body


def test_the_ready_email_of_a_host_prepared_by_hand(hosts, paid, sshd):
    hosts(1, management="manual")
    order = prepared_by_hand(paid())
    body = send(order, OrderEmailKind.READY)
    [tenancy] = tenancies(order)
    assert f"  ssh -p {sshd.port} ubuntu@{sshd.host}\n" in body
    assert (
        f"  Ready at {utc_text(tenancy.ready_at)}: prepared by our operators by hand; this host "
        "answered over SSH.\n"
        "  Ubuntu: prepared on this host by our operators, by hand.\n"
    ) in body
    assert "logged in as your account" not in body


def test_the_ready_email_in_italian(hosts, paid, make_customer):
    hosts(1)
    italian = make_customer(language="it", first_name="Giulia")
    order = to_ready(paid(who=italian))
    body = send(order, OrderEmailKind.READY)
    [tenancy] = tenancies(order)
    with translation.override("it"):
        when = utc_text(tenancy.ready_at)
    assert (
        f"Verificato il {when}: abbiamo effettuato l'accesso con il tuo account e vede la scheda 1."
    ) in body
    assert "Alla fine del noleggio l'accesso si interrompe" in body


def test_the_reminder_keeps_the_end_sentence(hosts, paid):
    hosts(1)
    order = to_ready(paid())
    body = send(order, OrderEmailKind.REMINDER_24H, now=order.ends_at - timedelta(hours=23))
    assert END_SENTENCE in body


def test_the_ended_email_says_each_host_is_being_revoked(hosts, paid):
    hosts(2, cards=1)
    order = ended(to_ready(paid(lots=2)))
    body = send(order, OrderEmailKind.ENDED)
    assert (
        f"The rental of order {order.reference} ended on {utc_text(order.ends_at)} and nothing "
        "more is billed."
    ) in body
    assert (
        "Your access, host by host:\n"
        "gpu-worker-1: Access being revoked: your account and the data left on this host are "
        "being erased; the cards go to another customer only once that is verified.\n"
        "gpu-worker-2: Access being revoked:"
    ) in body
    assert "Access is stopped" not in body
    assert "is erased before" not in body
    assert (
        "The order page shows, host by host, when the erasure of your data was verified; the "
        "cards go to another customer only after it. Data left on the hosts cannot be "
        "recovered."
    ) in body


def test_the_ended_email_sent_late_gives_the_verified_time_or_the_operators_check(hosts, paid):
    hosts(2, cards=1)
    order = ended(to_ready(paid(lots=2)))
    first, second = tenancies(order)
    erased_by_worker(first)
    quarantined(second)
    first.refresh_from_db()
    body = send(order, OrderEmailKind.ENDED)
    assert (
        f"gpu-worker-1: Access ended and data erased, verified at {utc_text(first.erased_at)}.\n"
        in body
    )
    assert (
        "gpu-worker-2: The removal of your access and data on this host is being confirmed by "
        "our operators; the cards stay out of service until it is.\n"
    ) in body


def test_the_ended_email_of_a_host_erased_by_hand_names_the_operators_check(hosts, paid, operator):
    hosts(1, management="manual")
    order = ended(prepared_by_hand(paid()))
    [tenancy] = tenancies(order)
    erased_by_operator(tenancy, operator)
    tenancy.refresh_from_db()
    body = send(order, OrderEmailKind.ENDED)
    assert (
        f"gpu-manual-1: Access ended and data erased, verified at {utc_text(tenancy.erased_at)} "
        "by our operators, item by item.\n"
    ) in body
