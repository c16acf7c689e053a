"""The customer's order page says, host by host, where the access stands, and only what the
code makes true: the SSH command of the order's own account on a worker-managed host, the
host's shared user on a host prepared by hand; "verified" only with the time and the cards the
worker saw as the tenant; "erased" only with the time the erasure was verified; a failed
teardown (quarantined) never reads as erased."""

import re

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from rental.hosts.models import TenancyStatus
from rental.models import OrderStatus, Preparation
from rental.services import order_set_status
from rental.services.early_end import order_end_early

from .conftest import (
    ended,
    erased_by_operator,
    erased_by_worker,
    field,
    host_states,
    page,
    prepared_by_hand,
    quarantined,
    status_url,
    tenancies,
    to_ready,
    to_verifying,
    utc_text,
)

pytestmark = pytest.mark.django_db

PREPARING_WORKER = (
    "Payment received. We are preparing your account on each host and will check it by logging "
    "in as you before the rental starts; the rental starts only then."
)


# ------------------------------------------------------------------ before the rental


def test_a_paid_order_without_hosts_yet_says_the_rental_starts_only_after_the_check(
    customer_client, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"])
    order_set_status(order_id=order.pk, to_status=OrderStatus.PAID, actor=None, reason="test")
    html = page(customer_client, order)
    assert field(html, "preparing") == (
        "Payment received. Your machines are being prepared: once your cards are allocated, we "
        "prepare your access on each host and check it before the rental starts. The rental "
        "starts only then, and this page shows the access details."
    )
    assert 'data-field="host-state"' not in html
    assert 'hx-trigger="every 10s"' in html


def test_worker_hosts_being_prepared_then_verified(customer_client, hosts, paid):
    hosts(2, cards=1)
    order = paid(lots=2)
    html = page(customer_client, order)
    assert field(html, "preparing") == PREPARING_WORKER
    states = host_states(html)
    assert set(states) == {"gpu-worker-1", "gpu-worker-2"}
    assert {state for state, _text in states.values()} == {"provisioning"}
    assert states["gpu-worker-1"][1] == (
        "Preparing: we are creating your own account on this host, with access to your cards "
        "only; then we check it by logging in as you."
    )
    assert 'data-field="ssh-command"' not in html  # nothing promised before the check
    assert 'hx-trigger="every 10s"' in html

    # The status polling sees a tenancy change (the order row itself is unchanged).
    since = re.search(r'\?since=([^"]+)"', html).group(1)
    assert customer_client.get(status_url(order) + f"?since={since}").status_code == 204
    to_verifying(order)
    changed = customer_client.get(status_url(order) + f"?since={since}")
    assert changed.status_code == 200
    states = host_states(changed.content.decode())
    assert states["gpu-worker-2"] == (
        "verifying",
        "Verifying: we are logging in as your account to check that it sees exactly your cards.",
    )
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING and order.starts_at is None


def test_a_host_waiting_for_the_operators_step_says_so(customer_client, hosts, paid):
    """Custom preparation on a worker-managed host: the worker waits for an operator's step."""
    hosts(1)
    order = paid(preparation=Preparation.CUSTOM, custom_preparation="JAX 0.7 & Flax")
    from rental.hosts.models import Tenancy

    # The worker's provisioning run ends this way (rental.hosts.tenancy.tenancy_provision).
    Tenancy.objects.filter(order=order).update(operator_step=True, updated_at=timezone.now())
    [(state, words)] = host_states(page(customer_client, order)).values()
    assert state == "provisioning"
    assert words == (
        "Preparing: your account is in place; our operators are doing the preparation step by "
        "hand, then we check it by logging in as you."
    )


def test_a_host_prepared_by_hand_is_checked_over_ssh(customer_client, hosts, paid):
    hosts(1, management="manual")
    order = paid()
    html = page(customer_client, order)
    assert field(html, "preparing") == (
        "Payment received. Your machines are being prepared, and each host is checked before "
        "the rental starts, as shown below; the rental starts only then."
    )
    [(state, words)] = host_states(html).values()
    assert (state, words) == (
        "provisioning",
        "Preparing: our operators are preparing this host by hand.",
    )


# ------------------------------------------------------------------ active


def test_an_active_order_on_worker_hosts_gives_each_accounts_command(
    customer_client, hosts, paid, sshd
):
    hosts(2, cards=1)
    order = to_ready(paid(lots=2))
    html = page(customer_client, order)
    accounts = {t.host.name: t.account for t in tenancies(order)}
    # Each host has the order's own account (rental.hosts.tenancy.account_name).
    assert all(t.account.endswith(f"o{order.pk}h{t.host_id}") for t in tenancies(order))
    commands = re.findall(r'data-field="ssh-command">([^<]+)<', html)
    assert commands == [
        f"ssh -p {sshd.port} {accounts['gpu-worker-1']}@{sshd.host}",
        f"ssh -p {sshd.port} {accounts['gpu-worker-2']}@{sshd.host}",
    ]
    assert "ubuntu@" not in html
    states = host_states(html)
    [tenancy, _] = tenancies(order)
    assert states["gpu-worker-1"] == (
        "ready",
        f"Verified at {utc_text(tenancy.ready_at)}: we logged in as your account and it sees "
        f"card {tenancy.cards[0] + 1}.",
    )
    assert f'<time datetime="{tenancy.ready_at.isoformat()}">' in html
    assert field(html, "host-preparation") == (
        "Ubuntu: nothing is installed on this host beyond its system."
    )
    # The rental clock started when the last host was verified, not before.
    assert order.starts_at == tenancy.ready_at
    assert "data left on the hosts is erased, and verified, before the cards go to another " in (
        field(html, "end-notice")
    )
    assert 'hx-trigger="every 10s"' not in html


@pytest.mark.parametrize(
    ("applied", "words"),
    [
        (True, "PyTorch: installed on this host for your account by our preparation steps."),
        (False, "PyTorch: prepared on this host by our operators, by hand."),
    ],
)
def test_pytorch_says_who_prepared_it(customer_client, hosts, paid, applied, words):
    hosts(1)
    order = paid(preparation=Preparation.PYTORCH)
    to_verifying(order, preparation_applied=applied)
    order = to_ready(order)
    assert field(page(customer_client, order), "host-preparation") == words


def test_a_custom_preparation_is_the_operators_step(customer_client, hosts, paid):
    hosts(1)
    order = to_ready(paid(preparation=Preparation.CUSTOM, custom_preparation="JAX 0.7"))
    assert field(page(customer_client, order), "host-preparation") == (
        "Your custom preparation: done on this host by our operators, by hand, from your "
        "description."
    )


def test_a_host_prepared_by_hand_keeps_its_user_and_claims_no_login_check(
    customer_client, hosts, paid, sshd
):
    hosts(1, management="manual")
    order = prepared_by_hand(paid())
    html = page(customer_client, order)
    assert field(html, "ssh-command") == f"ssh -p {sshd.port} ubuntu@{sshd.host}"
    [tenancy] = tenancies(order)
    [(state, words)] = host_states(html).values()
    assert state == "ready"
    assert words == (
        f"Ready at {utc_text(tenancy.ready_at)}: prepared by our operators by hand; this host "
        "answered over SSH."
    )
    assert "logged in as your account" not in html
    assert (
        field(html, "host-preparation")
        == "Ubuntu: prepared on this host by our operators, by hand."
    )


# ------------------------------------------------------------------ the end


def test_at_the_end_each_host_shows_revoking_then_the_verified_erasure(
    customer_client, hosts, paid
):
    hosts(2, cards=1)
    order = ended(to_ready(paid(lots=2)))
    html = page(customer_client, order)
    notice = field(html, "ended-notice")
    assert notice.startswith("This rental ended on ")
    assert "and nothing more is billed. Your access is revoked host by host" in notice
    assert "is erased" not in notice and "Access is stopped" not in notice
    states = host_states(html)
    first, second = tenancies(order)
    assert states["gpu-worker-1"] == (
        "revoking",
        f"Access being revoked since {utc_text(first.revoke_started_at)}: your account and the "
        "data left on this host are being erased; the cards go to another customer only once "
        "that is verified.",
    )
    assert 'data-field="ssh-command"' not in html
    assert 'hx-trigger="every 10s"' in html  # the worker is at work: the page follows it

    erased_by_worker(first)
    erased_by_worker(second)
    first.refresh_from_db()
    html = page(customer_client, order)
    states = host_states(html)
    assert states["gpu-worker-1"] == (
        "erased",
        f"Access ended and data erased, verified at {utc_text(first.erased_at)}: a login as your "
        "account was refused, and no process or file of it remained.",
    )
    assert f'<time datetime="{first.erased_at.isoformat()}">' in html
    assert 'hx-trigger="every 10s"' not in html


def test_a_failed_teardown_never_reads_as_erased(customer_client, hosts, paid):
    hosts(1)
    order = ended(to_ready(paid()))
    [tenancy] = tenancies(order)
    quarantined(tenancy)
    html = page(customer_client, order)
    [(state, words)] = host_states(html).values()
    assert state == TenancyStatus.QUARANTINED
    assert words == (
        "The removal of your access and data on this host is being confirmed by our operators; "
        "the cards stay out of service until it is."
    )
    history = html[html.index('data-section="access-history"') :]
    assert "erased" not in history.split("</section>")[0].replace("being erased", "")
    assert 'hx-trigger="every 10s"' not in html  # operators' work: no polling


def test_hosts_prepared_by_hand_are_erased_on_the_operators_confirmation(
    customer_client, hosts, paid, operator
):
    hosts(1, management="manual")
    order = ended(prepared_by_hand(paid()))
    html = page(customer_client, order)
    [(state, _words)] = host_states(html).values()
    assert state == "revoking"
    assert 'hx-trigger="every 10s"' not in html  # operators' work, maybe days: no polling
    [tenancy] = tenancies(order)
    erased_by_operator(tenancy, operator)
    tenancy.refresh_from_db()
    [(state, words)] = host_states(page(customer_client, order)).values()
    assert (state, words) == (
        "erased",
        f"Access ended and data erased, verified at {utc_text(tenancy.erased_at)} by our "
        "operators, item by item: keys, processes, files, cards and a refused login.",
    )


def test_an_early_end_no_longer_promises_the_erasure(customer_client, hosts, paid, operator):
    hosts(1)
    order = to_ready(paid())
    order_end_early(order_id=order.pk, actor=operator, reason="The host failed", host_failed=True)
    html = page(customer_client, order)
    notice = field(html, "ended-early")
    assert "data left on the hosts is erased" not in notice
    assert "Access is stopped" not in notice
    assert (
        "Nothing more is billed; any access to the order's hosts is revoked, and the access "
        "history below shows, host by host, when the erasure of your data was verified."
    ) in notice.replace("&#x27;", "'")
    [(state, _words)] = host_states(html).values()
    assert state == "revoking"


# ------------------------------------------------------------------ Italian, owners, queries


def test_key_sentences_in_italian(customer_client, hosts, paid):
    customer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    hosts(1)
    order = paid(lots=2)
    html = page(customer_client, order)
    assert field(html, "preparing") == (
        "Pagamento ricevuto. Stiamo preparando il tuo account su ogni host e lo verificheremo "
        "accedendo come te prima dell'inizio del noleggio; il noleggio inizia solo allora."
    )
    order = to_ready(order)
    [tenancy] = tenancies(order)
    [(_state, words)] = host_states(page(customer_client, order)).values()
    assert words == (
        f"Verificato il {utc_text_it(tenancy.ready_at)}: abbiamo effettuato l'accesso con il tuo "
        "account e vede le schede 1, 2."
    )
    order = ended(order)
    erased_by_worker(tenancy)
    tenancy.refresh_from_db()
    [(_state, words)] = host_states(page(customer_client, order)).values()
    assert words.startswith(
        f"Accesso terminato e dati cancellati, verificato il {utc_text_it(tenancy.erased_at)}"
    )


def utc_text_it(moment) -> str:
    from django.utils import translation

    with translation.override("it"):
        return utc_text(moment)


def test_another_customers_order_is_404(client, hosts, paid, make_customer):
    hosts(1)
    order = to_ready(paid(who=make_customer()))
    from django.urls import reverse

    client.force_login(make_customer())
    assert (
        client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk})).status_code == 404
    )
    assert client.get(status_url(order)).status_code == 404


def count_queries(client, order) -> int:
    with CaptureQueriesContext(connection) as queries:
        page(client, order)
    return len(queries)


def test_the_page_runs_as_many_queries_for_1_and_3_hosts(customer_client, hosts, paid):
    hosts(4, cards=2)
    small, large = to_ready(paid(lots=1)), to_ready(paid(lots=6))
    assert len(tenancies(small)) == 1 and len(tenancies(large)) >= 3
    # As the page always ran (tests/rental/test_order_lifecycle_views.py): user with staff
    # groups, order, timeline, the hosts' access (one query, cards and tenancies together),
    # the pilot's reports and decisions, the order's extensions.
    assert count_queries(customer_client, small) == count_queries(customer_client, large) == 7
    ended(small), ended(large)
    erased_by_worker(tenancies(large)[0])
    quarantined(tenancies(large)[1])
    # Ended: no extensions section, but the timeline still lists its extensions' changes.
    assert count_queries(customer_client, small) == count_queries(customer_client, large) == 7
