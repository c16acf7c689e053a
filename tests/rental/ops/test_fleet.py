"""The fleet card by card, the teardown queue and its actions (retry, a teardown confirmed by
hand item by item, an operator's preparation step), and each host's access on the order page.

Orders are paid and ended through the real services; what the hosts' worker writes (a
quarantine, a journal step, an operator's step awaited) is written through its services or as
it writes it. No SSH: the worker's tasks are recorded, not run (tests/rental/hosts/ runs them).
"""

from html import unescape
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from payments.ledger.services.refunds import order_end_early_with_refund
from rental.hosts.tenancy import MANUAL_TEARDOWN_CHECKLIST, tenancy_set_status
from rental.models import (
    CardAllocation,
    Host,
    HostState,
    OrderStatus,
    Tenancy,
    TenancyStatus,
    TenancyStatusChange,
    TenancyStep,
)
from tests.states import hosts_set_state

from .conftest import give_key

FLEET = reverse("rental:ops_fleet")
TEARDOWN = reverse("rental:ops_teardown")
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
CHECKLIST = {key: "on" for key, _label in MANUAL_TEARDOWN_CHECKLIST}


def action_url(tenancy, action) -> str:
    return reverse("rental:ops_tenancy_action", kwargs={"tenancy_id": tenancy.pk, "action": action})


def order_url(order) -> str:
    return reverse("rental:ops_order", kwargs={"order_id": order.pk})


def section(html: str, name: str) -> str:
    return html.split(f'data-section="{name}"')[1].split("</section>")[0]


def host_block(html: str, host) -> str:
    return html.split(f'data-host="{host.pk}"')[1].split("</section>")[0]


def card_row(html: str, host, index: int) -> str:
    return host_block(html, host).split(f'<tr data-card="{index}"')[1].split("</tr>")[0]


def tenancy_card(html: str, tenancy) -> str:
    return html.split(f'data-tenancy="{tenancy.pk}"')[1].split("</article>")[0]


def live_cards(order) -> int:
    return CardAllocation.objects.filter(order=order, released_at__isnull=True).count()


def count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


@pytest.fixture
def hosts(catalogue, make_host):
    """H100 only on a host prepared by hand (4 cards), H200 only on a worker-managed one (6)."""
    h100, h200 = catalogue["h100"], catalogue["h200"]
    Host.objects.filter(gpu_model__in=(h100, h200)).delete()
    return SimpleNamespace(
        manual=make_host(h100, 4, name="hand-1"),
        worker=make_host(
            h200, 6, name="wrk-1", management="worker", admin_user="gpuadmin", host_key=KEY
        ),
        h100=h100,
        h200=h200,
    )


@pytest.fixture
def order_on(customer, place_order, pay):
    """order_on(gpu_model, lots=1) -> an order paid from the balance: its cards allocated and
    one tenancy per host opened (the worker's provisioning is queued, not run)."""

    def make(gpu_model, lots: int = 1):
        order = give_key(pay(place_order(customer, gpu_model, lots=lots)))
        assert order.status == OrderStatus.PROVISIONING
        return order

    return make


@pytest.fixture
def end_early(operator):
    """The operator ends the order because its host failed: its access is being revoked."""

    def end(order):
        order_end_early_with_refund(
            order_id=order.pk, actor=operator, reason="The host failed", host_failed=True
        )
        order.refresh_from_db()
        assert order.status == OrderStatus.ENDED
        return Tenancy.objects.get(order=order)

    return end


def quarantine(tenancy, problem="Teardown failed: the host did not answer") -> Tenancy:
    """What the worker does when a teardown fails."""
    return tenancy_set_status(
        tenancy_id=tenancy.pk,
        to_status=TenancyStatus.QUARANTINED,
        actor=None,
        reason=problem,
        problem=problem,
        attempts=tenancy.attempts + 1,
    )


def journal(tenancy, name, outcome="ok", output="", phase="teardown") -> TenancyStep:
    now = timezone.now()
    return TenancyStep.objects.create(
        tenancy=tenancy,
        phase=phase,
        run="run-1",
        name=name,
        started_at=now,
        finished_at=now if outcome else None,
        outcome=outcome,
        output=output,
    )


@pytest.fixture
def queued(hold_tasks):
    """The worker's tasks queued by the actions, as (task, args): nothing runs."""
    return hold_tasks("rental.tasks.host_provision", "rental.tasks.host_teardown")


# ------------------------------------------------------------------------------ fleet


def test_the_fleet_shows_every_card_of_every_host(
    operator_client, catalogue, hosts, order_on, end_early
):
    on_hand = order_on(hosts.h100, lots=2)
    revoked = order_on(hosts.h200)
    failed = order_on(hosts.h200)
    end_early(revoked)
    quarantined = quarantine(end_early(failed), "Teardown failed: sudo: a password is required")
    hosts_set_state(Host.objects.filter(name="demo-b200-a"), HostState.MAINTENANCE)

    response = operator_client.get(FLEET)

    assert response.status_code == 200
    html = response.content.decode()
    assert f'href="{FLEET}" aria-current="page"' in html
    # Allocated on the host prepared by hand: the order and its access.
    for index in (0, 1):
        row = card_row(html, hosts.manual, index)
        assert 'data-card-state="allocated"' in row
        assert f'data-order="{on_hand.pk}"' in row
        assert 'data-tenancy-status="provisioning"' in row
        assert f'href="{order_url(on_hand)}">{on_hand.reference}<' in row
        assert "Preparing" in row
    for index in (2, 3):
        assert 'data-card-state="free"' in card_row(html, hosts.manual, index)
    # The worker's host failed: out of service, one card being revoked, one quarantined.
    worker = host_block(html, hosts.worker)
    assert 'data-host-state="out_of_service"' in worker
    assert 'data-field="host-state">Out of service<' in worker
    assert "ended early because this host failed" in worker
    cards = {
        allocation.order_id: allocation.card_index
        for allocation in CardAllocation.objects.filter(host=hosts.worker)
    }
    row = card_row(html, hosts.worker, cards[revoked.pk])
    assert 'data-card-state="revoking"' in row and 'data-tenancy-status="revoking"' in row
    assert "Being revoked" in row
    row = card_row(html, hosts.worker, cards[failed.pk])
    assert 'data-card-state="quarantined"' in row
    assert f'data-order="{failed.pk}"' in row
    assert 'data-field="problem">Teardown failed: sudo: a password is required<' in row
    assert quarantined.status == TenancyStatus.QUARANTINED
    for index in set(range(hosts.worker.cards)) - set(cards.values()):
        row = card_row(html, hosts.worker, index)
        assert 'data-card-state="unavailable"' in row and "Out of service" in row
    # A host in maintenance sells none of its cards.
    b200 = Host.objects.get(name="demo-b200-a")
    assert host_block(html, b200).count('data-card-state="unavailable"') == b200.cards
    # The counts at the top.
    total = sum(Host.objects.values_list("cards", flat=True))
    counts = html.split('data-section="fleet-counts"')[1].split(f'data-host="{hosts.manual.pk}"')[0]
    assert 'data-card-count="allocated">2<' in counts
    assert 'data-card-count="revoking">1<' in counts
    assert 'data-card-count="quarantined">1<' in counts
    unavailable = hosts.worker.cards - 2 + b200.cards
    assert f'data-card-count="unavailable">{unavailable}<' in counts
    assert f'data-card-count="free">{total - 4 - unavailable}<' in counts
    assert 'data-host-count="out_of_service">1<' in counts
    assert 'data-host-count="maintenance">1<' in counts
    assert f'data-host-count="available">{Host.objects.count() - 2}<' in counts


def test_the_fleet_without_hosts_says_so(operator_client, db):
    html = operator_client.get(FLEET).content.decode()
    assert "No host yet" in html
    assert 'data-card-count="free">0<' in html


def test_the_fleet_and_teardown_pages_run_a_fixed_number_of_queries(
    operator_client, catalogue, hosts, order_on, end_early, make_host
):
    order = order_on(hosts.h200)
    quarantine(end_early(order))
    journal(Tenancy.objects.get(order=order), "No key is authorized any more")
    fleet_one, teardown_one = (
        count_queries(operator_client, FLEET),
        count_queries(operator_client, TEARDOWN),
    )
    for number in range(10):
        make_host(hosts.h200, 4, name=f"more-{number}", management="worker", admin_user="gpuadmin")
    hosts_set_state(Host.objects.filter(pk=hosts.worker.pk), HostState.AVAILABLE)
    for _ in range(3):
        tenancy = end_early(order_on(hosts.h200))
        quarantine(tenancy)
        for step in range(10):
            journal(tenancy, f"step {step}")
    html = operator_client.get(TEARDOWN).content.decode()
    assert "Quarantined (4)" in html
    # User with groups; hosts, their live cards, their open tenancies; the health banner.
    assert fleet_one == count_queries(operator_client, FLEET) == 5
    # User with groups; tenancies with host, order and customer; their last steps; banner.
    assert teardown_one == count_queries(operator_client, TEARDOWN) == 4


# ---------------------------------------------------------------------- teardown queue


def test_the_queue_lists_each_tenancy_where_an_operator_acts(
    operator_client, hosts, order_on, end_early
):
    on_hand = end_early(order_on(hosts.h100, lots=2))
    revoking = end_early(order_on(hosts.h200))
    hosts_set_state(Host.objects.filter(pk=hosts.worker.pk), HostState.AVAILABLE)
    failed = quarantine(end_early(order_on(hosts.h200)))
    journal(failed, "No key is authorized any more", "ok")
    journal(failed, "No process of the tenant runs", "failed", "3 processes left: 4101 4102")
    hosts_set_state(Host.objects.filter(pk=hosts.worker.pk), HostState.AVAILABLE)
    waiting = Tenancy.objects.get(order=order_on(hosts.h200))
    Tenancy.objects.filter(pk=waiting.pk).update(operator_step=True)
    broken = Tenancy.objects.get(order=order_on(hosts.h200))
    Tenancy.objects.filter(pk=broken.pk).update(
        problem="Verification: the tenant sees card(s) [0, 1]; allocated: [1].", attempts=3
    )
    quiet = Tenancy.objects.get(order=order_on(hosts.h200))  # provisioning, no problem

    response = operator_client.get(TEARDOWN)

    assert response.status_code == 200
    html = response.content.decode()
    assert f'href="{TEARDOWN}" aria-current="page"' in html
    quarantined = section(html, "quarantined")
    assert "Quarantined (1)" in quarantined
    card = tenancy_card(quarantined, failed)
    assert f"{failed.account} on wrk-1" in card
    assert 'data-field="problem">Teardown failed: the host did not answer<' in card
    assert 'data-field="attempts">1<' in card
    assert failed.order.reference in card and "grace@example.com" in card
    assert card.index("No key is authorized") < card.index("No process of the tenant runs")
    assert 'data-outcome="failed"' in card and "3 processes left: 4101 4102" in card
    assert 'data-action="retry"' in card and 'data-action="confirm-teardown"' not in card

    being_revoked = section(html, "revoking")
    assert "Being revoked (2)" in being_revoked
    assert "The worker is tearing it down." in tenancy_card(being_revoked, revoking)
    card = tenancy_card(being_revoked, on_hand)
    assert 'data-action="confirm-teardown"' in card and 'data-action="retry"' not in card
    for key, _label in MANUAL_TEARDOWN_CHECKLIST:
        assert f'name="{key}"' in card
    assert "A login as the tenant is refused" in card

    steps = section(html, "operator-steps")
    assert "Waiting for an operator's step (1)" in unescape(steps)
    assert 'data-action="confirm-step"' in tenancy_card(steps, waiting)

    problems = section(html, "provisioning-problems")
    assert "Provisioning failed (1)" in problems
    card = tenancy_card(problems, broken)
    assert "the tenant sees card(s) [0, 1]; allocated: [1]." in card
    assert 'data-field="attempts">3<' in card and 'data-action="retry"' in card
    assert f'data-tenancy="{quiet.pk}"' not in html


def test_an_empty_queue_says_so(operator_client, db):
    html = operator_client.get(TEARDOWN).content.decode()
    assert "No access is quarantined." in html
    assert "No access is being revoked." in html
    assert "No provisioning failed." in html


def test_a_teardown_by_hand_is_confirmed_item_by_item_and_frees_the_cards(
    operator_client, hosts, order_on, end_early, operator
):
    order = order_on(hosts.h100, lots=2)
    tenancy = end_early(order)
    assert tenancy.status == TenancyStatus.REVOKING and live_cards(order) == 2

    response = operator_client.post(action_url(tenancy, "confirm-teardown"), CHECKLIST, follow=True)

    assert response.redirect_chain == [(TEARDOWN, 302)]
    assert any("its cards are back in stock" in str(m) for m in response.context["messages"])
    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.ERASED
    assert tenancy.erased_by == operator and tenancy.erased_at is not None
    assert len(tenancy.erasure_summary) == len(MANUAL_TEARDOWN_CHECKLIST)
    assert live_cards(order) == 0
    assert f'data-tenancy="{tenancy.pk}"' not in response.content.decode()
    # The order page shows what was erased, as the operator stated it.
    html = operator_client.get(order_url(order)).content.decode()
    card = tenancy_card(section(html, "tenancies"), tenancy)
    assert 'data-tenancy-status="erased"' in html
    assert "confirmed by ops@example.com" in card
    summary = card.split('data-field="erasure-summary"')[1].split("</ul>")[0]
    assert summary.count("<li") == len(MANUAL_TEARDOWN_CHECKLIST)
    assert "confirmed by ops@example.com: A login as the tenant is refused" in summary


@pytest.mark.parametrize("missing", [key for key, _label in MANUAL_TEARDOWN_CHECKLIST])
def test_every_box_of_the_teardown_is_required(
    operator_client, hosts, order_on, end_early, missing
):
    order = order_on(hosts.h100, lots=2)
    tenancy = end_early(order)
    data = {key: value for key, value in CHECKLIST.items() if key != missing}

    response = operator_client.post(action_url(tenancy, "confirm-teardown"), data)

    assert response.status_code == 400
    card = tenancy_card(section(response.content.decode(), "revoking"), tenancy)
    assert "Nothing was done: correct what is marked below." in card
    assert card.count('data-field="checklist-error"') == 1
    assert card.count(" checked") == len(MANUAL_TEARDOWN_CHECKLIST) - 1  # kept as ticked
    tenancy.refresh_from_db()
    assert (tenancy.status, tenancy.erased_at) == (TenancyStatus.REVOKING, None)
    assert live_cards(order) == 2


def test_a_worker_host_is_not_torn_down_by_hand(operator_client, hosts, order_on, end_early):
    order = order_on(hosts.h200)
    tenancy = quarantine(end_early(order))
    response = operator_client.post(action_url(tenancy, "confirm-teardown"), CHECKLIST)
    assert response.status_code == 400
    assert "The worker tears this host down itself: retry it instead." in unescape(
        response.content.decode()
    )
    assert Tenancy.objects.get(pk=tenancy.pk).status == TenancyStatus.QUARANTINED
    assert live_cards(order) == 1


def test_a_retry_runs_a_quarantined_teardown_again(
    operator_client,
    hosts,
    order_on,
    end_early,
    queued,
    operator,
    django_capture_on_commit_callbacks,
):
    order = order_on(hosts.h200)
    tenancy = quarantine(end_early(order))
    queued.clear()

    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(action_url(tenancy, "retry"), follow=True)

    assert response.redirect_chain == [(TEARDOWN, 302)]
    tenancy.refresh_from_db()
    assert (tenancy.status, tenancy.attempts) == (TenancyStatus.REVOKING, 0)
    assert queued == [("host_teardown", (tenancy.pk,))]
    change = TenancyStatusChange.objects.filter(tenancy=tenancy).latest("pk")
    assert (change.from_status, change.to_status, change.actor) == (
        "quarantined",
        "revoking",
        operator,
    )
    assert live_cards(order) == 1  # back in stock only once the teardown is verified


def test_a_retry_tries_a_failed_provisioning_again(
    operator_client, hosts, order_on, queued, django_capture_on_commit_callbacks
):
    tenancy = Tenancy.objects.get(order=order_on(hosts.h200))
    Tenancy.objects.filter(pk=tenancy.pk).update(problem="Host unreachable", attempts=3)
    queued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(action_url(tenancy, "retry"))
    assert response.status_code == 302
    assert Tenancy.objects.get(pk=tenancy.pk).attempts == 0
    assert queued == [("host_provision", (tenancy.pk,))]


def test_nothing_to_retry_is_refused(operator_client, hosts, order_on, queued):
    tenancy = Tenancy.objects.get(order=order_on(hosts.h200))
    queued.clear()
    response = operator_client.post(action_url(tenancy, "retry"))
    assert response.status_code == 400
    assert 'data-field="action-error">Nothing to retry on this host.<' in response.content.decode()
    assert Tenancy.objects.get(pk=tenancy.pk).status == TenancyStatus.PROVISIONING
    assert queued == []


def test_the_operators_step_is_recorded_and_verification_queued(
    operator_client, hosts, order_on, queued, operator
):
    tenancy = Tenancy.objects.get(order=order_on(hosts.h200))
    Tenancy.objects.filter(pk=tenancy.pk).update(operator_step=True)
    queued.clear()

    response = operator_client.post(
        action_url(tenancy, "confirm-step"), {"note": "Installed JAX 0.6 in /opt/jax"}
    )

    assert response.status_code == 302
    tenancy.refresh_from_db()
    assert (tenancy.status, tenancy.operator_step, tenancy.operator_note) == (
        TenancyStatus.VERIFYING,
        False,
        "Installed JAX 0.6 in /opt/jax",
    )
    change = TenancyStatusChange.objects.filter(tenancy=tenancy).latest("pk")
    assert change.actor == operator and "Installed JAX 0.6" in change.reason
    assert queued == [("host_provision", (tenancy.pk,))]


@pytest.mark.parametrize(
    ("note", "message"),
    [("", "Say what was done on the host."), ("n" * 501, "Keep the note to 500 characters")],
)
def test_the_operators_step_needs_a_note(operator_client, hosts, order_on, queued, note, message):
    tenancy = Tenancy.objects.get(order=order_on(hosts.h200))
    Tenancy.objects.filter(pk=tenancy.pk).update(operator_step=True)
    queued.clear()
    response = operator_client.post(action_url(tenancy, "confirm-step"), {"note": note})
    assert response.status_code == 400
    card = tenancy_card(section(response.content.decode(), "operator-steps"), tenancy)
    assert message in card
    tenancy.refresh_from_db()
    assert (tenancy.status, tenancy.operator_step) == (TenancyStatus.PROVISIONING, True)
    assert queued == []


def test_a_step_not_awaited_is_refused(operator_client, hosts, order_on, queued):
    tenancy = Tenancy.objects.get(order=order_on(hosts.h200))
    queued.clear()
    response = operator_client.post(action_url(tenancy, "confirm-step"), {"note": "Done"})
    assert response.status_code == 400
    assert "This host is not waiting for an operator" in unescape(response.content.decode())
    assert Tenancy.objects.get(pk=tenancy.pk).status == TenancyStatus.PROVISIONING


def test_unknown_tenancies_and_actions_are_not_found(operator_client, hosts, order_on):
    tenancy = Tenancy.objects.get(order=order_on(hosts.h100))
    for action, data in (("retry", {}), ("confirm-teardown", {}), ("confirm-step", {})):
        url = reverse("rental:ops_tenancy_action", kwargs={"tenancy_id": 999999, "action": action})
        assert operator_client.post(url, data).status_code == 404
    assert operator_client.post(action_url(tenancy, "erase")).status_code == 404
    assert operator_client.get(action_url(tenancy, "retry")).status_code == 405


def test_only_operators_see_and_act(
    hosts, order_on, end_early, customer_client, finance_client, operator
):
    tenancy = end_early(order_on(hosts.h100))
    for browser in (customer_client, finance_client):
        assert browser.get(FLEET).status_code == 403
        assert browser.get(TEARDOWN).status_code == 403
        assert browser.post(action_url(tenancy, "confirm-teardown"), CHECKLIST).status_code == 403
    anonymous = Client()
    for url in (FLEET, TEARDOWN):
        assert anonymous.get(url)["Location"] == reverse("account_login") + "?next=" + url
    response = anonymous.post(action_url(tenancy, "confirm-teardown"), CHECKLIST)
    assert response["Location"].startswith(reverse("account_login"))
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(operator)
    assert checked.post(action_url(tenancy, "confirm-teardown"), CHECKLIST).status_code == 403
    assert Tenancy.objects.get(pk=tenancy.pk).status == TenancyStatus.REVOKING


# --------------------------------------------------------------------------- order page


def test_the_order_page_shows_each_hosts_access_and_its_journal(
    operator_client, hosts, order_on, end_early
):
    order = order_on(hosts.h200)
    tenancy = Tenancy.objects.get(order=order)
    journal(tenancy, "Create the tenant account", "changed", phase="provision")
    journal(tenancy, "Authorize the customer's key", "", phase="provision")  # interrupted
    tenancy = quarantine(end_early(order), "Teardown failed: the host did not answer")
    journal(tenancy, "No key is authorized any more", "unreachable", "ssh: connect timed out")

    html = operator_client.get(order_url(order)).content.decode()

    tenancies = section(html, "tenancies")
    card = tenancy_card(tenancies, tenancy)
    assert 'data-tenancy-status="quarantined"' in tenancies
    assert f'data-field="account">{tenancy.account}<' in card
    assert 'data-field="cards">' + ", ".join(map(str, tenancy.cards)) + "<" in card
    assert 'data-field="tenancy-status">Quarantined<' in card
    assert "Teardown failed: the host did not answer" in card
    assert 'data-field="ready-at">—<' in card and 'data-field="erased-at">—<' in card
    assert 'data-field="revoke-started-at"' in card
    assert f'href="{TEARDOWN}#tenancy-{tenancy.pk}"' in card
    steps = card.split('data-section="journal"')[1]
    assert "Journal (3 steps)" in steps
    assert steps.index("Create the tenant account") < steps.index("No key is authorized")
    assert 'data-outcome="unfinished"' in steps and "not finished" in steps
    assert 'data-outcome="unreachable"' in steps and "ssh: connect timed out" in steps
    assert ">provision<" in steps and ">teardown<" in steps


def test_an_order_without_access_yet_says_so(operator_client, waiting_order):
    html = operator_client.get(order_url(waiting_order)).content.decode()
    assert "No access is given for this order yet." in section(html, "tenancies")


def test_the_order_page_runs_a_fixed_number_of_queries_whatever_its_journal(
    operator_client, hosts, order_on
):
    order = order_on(hosts.h100, lots=2)
    url = order_url(order)
    with_one = count_queries(operator_client, url)
    tenancy = Tenancy.objects.get(order=order)
    for step in range(30):
        journal(tenancy, f"step {step}", phase="provision")
    assert with_one == count_queries(operator_client, url)
