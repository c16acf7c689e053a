"""The pilot decision log: recorded with a mandatory motivation and, optionally, one of this
order's reports; append-only in the database; shown in the order's timeline; "revise the
configuration" opens the configurator pre-filled from the order."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.utils import InternalError
from django.test import Client
from django.urls import reverse

from pilot.models import DiagnosticsReport, PilotDecision
from pilot.services.reports import report_store
from rental.models import OrderStatus

from .conftest import build_report, encode

pytestmark = pytest.mark.django_db


def decide(client, order, **data):
    return client.post(reverse("pilot:decision_record", kwargs={"order_id": order.pk}), data)


def order_page(client, order) -> str:
    response = client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk}))
    assert response.status_code == 200
    return response.content.decode()


def stored_report(order):
    return report_store(order=order, raw=encode(build_report(order, failed="compute")))


def test_a_decision_on_a_report_is_recorded_and_in_the_timeline(
    customer_client, customer, active_order
):
    report = stored_report(active_order)
    response = decide(
        customer_client,
        active_order,
        kind="fix_environment",
        motivation="The compute step failed: the PyTorch build lacks sm_90.",
        report=str(report.pk),
    )
    assert response.status_code == 302
    decision = PilotDecision.objects.get()
    assert (decision.order, decision.kind, decision.report, decision.actor) == (
        active_order,
        "fix_environment",
        report,
        customer,
    )
    html = order_page(customer_client, active_order)
    timeline = html[html.index('data-section="timeline"') :]
    assert "Decision: Fix the environment" in timeline
    assert timeline.index("Diagnostics report: first error") < timeline.index("Decision:")
    assert "The compute step failed: the PyTorch build lacks sm_90." in html
    assert f"Rests on report #{report.pk}" in html


def test_a_decision_needs_a_motivation(customer_client, active_order):
    for motivation in ("", "   \n  "):
        response = decide(customer_client, active_order, kind="launch", motivation=motivation)
        assert response.status_code == 400
        assert "Write the motivation" in response.content.decode()
    assert PilotDecision.objects.count() == 0


def test_a_decision_needs_a_known_kind(customer_client, active_order):
    response = decide(customer_client, active_order, kind="give_up", motivation="Because.")
    assert response.status_code == 400
    assert "Choose a decision" in response.content.decode()
    assert PilotDecision.objects.count() == 0


def test_another_order_s_report_is_refused(customer_client, active_order, make_order, funded):
    second = make_order(funded)
    theirs = stored_report(second)
    response = decide(
        customer_client, active_order, kind="launch", motivation="All fine.", report=str(theirs.pk)
    )
    assert response.status_code == 400
    assert "Choose one of this order&#x27;s reports, or none." in response.content.decode()
    assert PilotDecision.objects.count() == 0


def test_another_customer_s_order_is_404(client, other_customer, active_order):
    client.force_login(other_customer)
    response = decide(client, active_order, kind="launch", motivation="Mine now.")
    assert response.status_code == 404
    assert PilotDecision.objects.count() == 0


def test_without_the_csrf_token_the_decision_is_refused(customer, active_order):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(customer)
    response = decide(browser, active_order, kind="launch", motivation="All fine.")
    assert response.status_code == 403
    assert PilotDecision.objects.count() == 0


def test_an_unpaid_order_takes_no_decision(customer_client, funded, make_order):
    unpaid = make_order(funded, status=OrderStatus.AWAITING_PAYMENT)
    response = decide(customer_client, unpaid, kind="launch", motivation="All fine.")
    assert response.status_code == 409
    assert PilotDecision.objects.count() == 0


def test_revise_the_configuration_opens_the_configurator_pre_filled(
    customer_client, funded, make_order
):
    order = make_order(funded, model="b200", lots=2)
    response = decide(
        customer_client,
        order,
        kind="revise_configuration",
        motivation="The peak memory needs twice the cards.",
    )
    assert response.status_code == 302
    url = urlsplit(response["Location"])
    assert url.path == reverse("rental:configure")
    assert parse_qs(url.query) == {
        "gpu_model": [order.gpu_model.slug],
        "duration_days": [str(order.duration_days)],
        "lots": ["2"],
        "preparation": [order.preparation],
    }
    html = customer_client.get(response["Location"]).content.decode()
    assert "Decision recorded." in html
    assert f'value="{order.gpu_model.slug}" selected' in html
    assert 'name="lots" value="2"' in html
    # The decision log keeps a link back to the pre-filled configurator.
    page = order_page(customer_client, order)
    link = reverse("pilot:configure_from_order", kwargs={"order_id": order.pk})
    assert link in page
    assert customer_client.get(link)["Location"] == response["Location"]


def test_the_database_refuses_to_change_or_delete_a_decision(customer, active_order):
    decision = PilotDecision.objects.create(
        order=active_order, kind="launch", motivation="All twelve accepted.", actor=customer
    )
    errors = (IntegrityError, InternalError)
    with pytest.raises(errors, match="append-only"), transaction.atomic():
        PilotDecision.objects.filter(pk=decision.pk).update(motivation="Rewritten")
    with pytest.raises(errors, match="append-only"), transaction.atomic():
        PilotDecision.objects.filter(pk=decision.pk).delete()
    with (
        pytest.raises(errors, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM pilot_pilotdecision")
    decision.refresh_from_db()
    assert decision.motivation == "All twelve accepted."


def test_the_database_refuses_a_decision_on_another_order_s_report(
    customer, active_order, make_order, funded
):
    theirs = stored_report(make_order(funded))
    with (
        pytest.raises((IntegrityError, InternalError), match="not of that order"),
        transaction.atomic(),
    ):
        PilotDecision.objects.create(
            order=active_order, kind="launch", motivation="x", report=theirs, actor=customer
        )
    assert PilotDecision.objects.count() == 0
    assert DiagnosticsReport.objects.count() == 1


def test_the_database_refuses_an_empty_motivation(customer, active_order):
    with pytest.raises(IntegrityError), transaction.atomic():
        PilotDecision.objects.create(
            order=active_order, kind="launch", motivation="", actor=customer
        )
