"""A report showing fewer cards, another model, less memory or another platform than the order
(or no GPU tool at all: test_no_gpu_tool_report.py) puts the active order in the operators'
provisioning queue as "handover problem", with a link to the report; an operator resolves it
(who and when in the history), or later reports that match the order on every host close it."""

import pytest
from django.urls import reverse

from pilot.services.reports import report_store
from rental.models import (
    Host,
    HostState,
    IssueEventKind,
    OrderStatus,
    ProvisioningIssue,
    ProvisioningIssueEvent,
)
from tests.states import hosts_set_state

from .conftest import build_report, encode, host_of

pytestmark = pytest.mark.django_db

QUEUE = reverse("rental:ops_provisioning")


def store(order, **options):
    return report_store(order=order, raw=encode(build_report(order, **options)))


def queue_section(operator_client) -> str:
    html = operator_client.get(QUEUE).content.decode()
    start = html.index('data-section="handover-problems"')
    return html[start : html.index("</section>", start)]


def seen(order, **changes) -> dict:
    values = {
        "model": f"NVIDIA {order.model_name}",
        "cards": order.total_cards,
        "memory_gb_per_card": float(order.memory_gb_per_card),
        "platform": order.compute_platform,
    }
    return {**values, **changes}


@pytest.mark.parametrize(
    ("changes", "problem", "words"),
    [
        ({"cards": 1}, "fewer_cards", "fewer cards (1 seen, 2 rented"),
        ({"model": "NVIDIA A100-SXM4-80GB"}, "other_model", "another model (seen NVIDIA A100"),
        ({"memory_gb_per_card": 40.0}, "less_memory", "less memory (40.0 GB per card seen"),
        ({"platform": "rocm", "model": "AMD Instinct H100"}, "other_platform", "another platform"),
    ],
)
def test_a_differing_report_puts_the_order_in_the_queue_with_its_report(
    operator_client, customer_client, funded, make_order, changes, problem, words
):
    order = make_order(funded, lots=2)
    assert len({a.host_id for a in order.allocations.all()}) == 1  # two cards on one host
    report = store(order, seen=seen(order, **changes))

    assert report.handover_problem and problem in report.problems
    order.refresh_from_db()
    assert order.provisioning_issue == ProvisioningIssue.HANDOVER
    assert words in order.provisioning_issue_detail
    section = queue_section(operator_client)
    assert "Handover problem (1)" in section
    assert order.reference in section
    link = reverse("rental:ops_order", kwargs={"order_id": order.pk}) + "#handover-report"
    assert link in section
    # The operators' order page shows the report at that anchor.
    ops_page = operator_client.get(reverse("rental:ops_order", kwargs={"order_id": order.pk}))
    html = ops_page.content.decode()
    assert f'id="handover-report" data-report="{report.pk}"' in html
    assert reverse("pilot:ops_report_json", kwargs={"report_id": report.pk}) in html
    assert (
        operator_client.get(
            reverse("pilot:ops_report_json", kwargs={"report_id": report.pk})
        ).json()["order"]["id"]
        == order.pk
    )
    # The customer reads it in plain words.
    customer_html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    assert "This machine differs from the order" in customer_html
    assert 'data-field="handover-problem"' in customer_html


def test_more_cards_is_no_handover_problem(operator_client, active_order):
    """(A report with no GPU tool is one: test_no_gpu_tool_report.py.)"""
    store(active_order, seen=seen(active_order, cards=8))
    active_order.refresh_from_db()
    assert active_order.provisioning_issue == ""
    assert "Handover problems (0)" in queue_section(operator_client)


def test_an_operator_resolves_it_and_the_history_says_who_and_when(
    operator_client, operator, active_order
):
    store(active_order, seen=seen(active_order, cards=0))
    url = reverse(
        "rental:ops_order_action",
        kwargs={"order_id": active_order.pk, "action": "resolve-handover"},
    )
    empty = operator_client.post(url, {"note": ""})
    assert empty.status_code == 400
    assert "Say what was done about the handover problem." in empty.content.decode()

    response = operator_client.post(url, {"note": "Card 1 reseated; the customer sees it now."})
    assert response.status_code == 302
    active_order.refresh_from_db()
    assert active_order.provisioning_issue == ""
    event = ProvisioningIssueEvent.objects.get(order=active_order, kind=IssueEventKind.RESOLVED)
    assert event.actor == operator
    assert "Handover problems (0)" in queue_section(operator_client)
    history = operator_client.get(
        reverse("rental:ops_order", kwargs={"order_id": active_order.pk})
    ).content.decode()
    assert 'data-issue-event="raised"' in history
    assert 'data-issue-event="resolved"' in history
    assert operator.email in history[history.index('data-issue-event="resolved"') :]
    assert "Card 1 reseated" in history
    # Nothing left to resolve.
    again = operator_client.post(url, {"note": "Twice"})
    assert again.status_code == 400
    assert "no open handover problem" in again.content.decode()


def test_a_later_matching_report_closes_it(operator_client, active_order):
    store(active_order, seen=seen(active_order, memory_gb_per_card=20.0))
    store(active_order)  # the same host, as rented
    active_order.refresh_from_db()
    assert active_order.provisioning_issue == ""
    kinds = list(
        ProvisioningIssueEvent.objects.filter(order=active_order).values_list("kind", flat=True)
    )
    assert kinds == [IssueEventKind.RAISED, IssueEventKind.CLEARED]
    assert "Handover problems (0)" in queue_section(operator_client)


def test_a_matching_report_of_another_host_leaves_it_open(funded, make_order, make_host, catalogue):
    h100 = catalogue["h100"]
    hosts_set_state(Host.objects.filter(gpu_model=h100), HostState.MAINTENANCE)
    make_host(h100, 1, name="h100-left")
    make_host(h100, 1, name="h100-right")
    order = make_order(funded, lots=2)  # one card on each host
    assert sorted(a.host.name for a in order.allocations.select_related("host")) == [
        "h100-left",
        "h100-right",
    ]
    store(order, host="h100-left", seen=seen(order, cards=0))
    store(order, host="h100-right", seen=seen(order, cards=1))
    order.refresh_from_db()
    assert order.provisioning_issue == ProvisioningIssue.HANDOVER  # the left host still differs
    store(order, host="h100-left", seen=seen(order, cards=1))
    order.refresh_from_db()
    assert order.provisioning_issue == ""


def test_a_provisioning_order_is_not_raised(funded, make_order):
    """Before the rental starts the operators are still at work: nothing is raised."""
    order = make_order(funded, status=OrderStatus.PROVISIONING)
    report = store(order, host=host_of(order), seen=seen(order, cards=0))
    assert report.handover_problem
    order.refresh_from_db()
    assert order.provisioning_issue == ""


def test_a_report_from_an_unknown_host_is_compared_with_the_whole_order(active_order):
    report = store(active_order, host="not-one-of-ours", seen=seen(active_order))
    assert report.handover["host"] == host_of(active_order)
    assert report.problems == []
