"""A kit report that found no GPU tool on the machine (no nvidia-smi, amd-smi or rocm-smi)
reaches the operators, as the kit tells the customer it will ("upload this report ... so that
the operators correct the handover"): the active order goes to the handover queue with a clear
detail, and a later report of that host that matches the order closes it.

The orders sit on hosts operators prepare by hand (the demo hosts are set aside), made active
the real way: paid, prepared, the readiness check against the test sshd."""

import pytest
from django.test import Client
from django.urls import reverse

from pilot.models import DiagnosticsReport
from rental.models import Host, IssueEventKind, ProvisioningIssue, ProvisioningIssueEvent

from .conftest import build_report, encode, host_of, issue_token, upload

pytestmark = pytest.mark.django_db

QUEUE = reverse("rental:ops_provisioning")
NO_TOOL = {"model": None, "cards": None, "memory_gb_per_card": None, "platform": None}


@pytest.fixture
def manual_hosts(catalogue, make_host, sshd):
    """make(count): the H100 cards are on `count` hosts of one card each, prepared by hand."""

    def make(count: int = 1) -> list[Host]:
        h100 = catalogue["h100"]
        Host.objects.filter(gpu_model=h100).delete()  # the demo hosts: none has rented cards
        return [
            make_host(
                h100,
                1 if count > 1 else 2,
                name=f"h100-hand-{number}",
                management="manual",
                ssh_host=sshd.host,
                ssh_port=sshd.port,
            )
            for number in range(1, count + 1)
        ]

    return make


def kit_upload(order, host: str, seen: dict | None = None, failed: str | None = None):
    """What `diagnose.py --upload` sends: the report, with the kit's token."""
    report = build_report(order, host=host, seen=seen, failed=failed)
    response = upload(Client(), order, encode(report), issue_token(order))
    assert response.status_code == 201, response.content
    return DiagnosticsReport.objects.get(pk=response.json()["id"])


def queue_section(operator_client) -> str:
    html = operator_client.get(QUEUE).content.decode()
    start = html.index('data-section="handover-problems"')
    return html[start : html.index("</section>", start)]


def test_a_report_with_no_gpu_tool_reaches_the_operators(
    operator_client, customer_client, funded, make_order, manual_hosts
):
    [host] = manual_hosts(1)
    order = make_order(funded)
    assert host_of(order) == host.name

    report = kit_upload(order, host.name, seen=NO_TOOL, failed="driver")

    assert report.problems == ["no_vendor_tool"]
    assert report.handover_problem
    order.refresh_from_db()
    assert order.provisioning_issue == ProvisioningIssue.HANDOVER
    assert f"the diagnostics kit found no GPU tool on host {host.name}" in (
        order.provisioning_issue_detail
    )
    assert "nvidia-smi" in order.provisioning_issue_detail
    [raised] = ProvisioningIssueEvent.objects.filter(order=order)
    assert raised.kind == IssueEventKind.RAISED
    section = queue_section(operator_client)
    assert "Handover problem (1)" in section
    assert order.reference in section
    # The operators' link leads to that report.
    ops_page = operator_client.get(reverse("rental:ops_order", kwargs={"order_id": order.pk}))
    assert f'id="handover-report" data-report="{report.pk}"' in ops_page.content.decode()
    # The customer reads that the operators were told.
    customer_html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    assert 'data-field="handover-problem"' in customer_html


def test_a_later_matching_report_of_that_host_clears_it(
    operator_client, funded, make_order, manual_hosts
):
    [host] = manual_hosts(1)
    order = make_order(funded)
    kit_upload(order, host.name, seen=NO_TOOL, failed="driver")
    kit_upload(order, host.name)  # the driver fixed: the cards as rented

    order.refresh_from_db()
    assert order.provisioning_issue == ""
    kinds = list(
        ProvisioningIssueEvent.objects.filter(order=order)
        .order_by("pk")
        .values_list("kind", flat=True)
    )
    assert kinds == [IssueEventKind.RAISED, IssueEventKind.CLEARED]
    assert "Handover problems (0)" in queue_section(operator_client)


def test_a_matching_report_of_another_host_leaves_it_open(funded, make_order, manual_hosts):
    left, right = manual_hosts(2)
    order = make_order(funded, lots=2)  # one card on each host
    assert sorted(a.host.name for a in order.allocations.select_related("host")) == [
        left.name,
        right.name,
    ]
    kit_upload(order, left.name, seen=NO_TOOL, failed="driver")
    kit_upload(order, right.name)

    order.refresh_from_db()
    assert order.provisioning_issue == ProvisioningIssue.HANDOVER  # the left host still has none
    assert left.name in order.provisioning_issue_detail

    kit_upload(order, left.name)
    order.refresh_from_db()
    assert order.provisioning_issue == ""


def test_a_report_before_the_rental_starts_raises_nothing(funded, make_order, manual_hosts):
    """While the order is provisioned the operators are at work on it: nothing is raised."""
    [host] = manual_hosts(1)
    order = make_order(funded, status="provisioning")
    report = kit_upload(order, host.name, seen=NO_TOOL, failed="driver")
    assert report.handover_problem
    order.refresh_from_db()
    assert order.provisioning_issue == ""
