"""A test ping to one endpoint, the account's events list (each event as delivered), and the
replay of events since a time: same event ids, bounded, bad input a 400 problem that queues
nothing; another customer's endpoint 404."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from api.webhooks.models import WebhookDelivery, WebhookEndpoint
from api.webhooks.services.endpoints import endpoint_create, endpoint_set_enabled
from outbox import events
from outbox.models import OutboxEvent
from tests.api.contract import assert_matches_schema

pytestmark = pytest.mark.django_db

PING = "/api/v1/webhooks/endpoints/{endpoint_id}/ping/"
REPLAY = "/api/v1/webhooks/endpoints/{endpoint_id}/replay/"
DELIVERIES = "/api/v1/webhooks/endpoints/{endpoint_id}/deliveries/"
EVENTS = "/api/v1/events/"


def rfc3339(when) -> str:
    return when.isoformat().replace("+00:00", "Z")


@pytest.fixture
def credits(customer, credit, django_capture_on_commit_callbacks):
    """credits(n) → n balance.credited events of the customer, delivered as they happen."""

    def make(n: int, amount: str = "3.00") -> list[OutboxEvent]:
        for _ in range(n):
            with django_capture_on_commit_callbacks(execute=True):
                credit(customer, amount)
        return list(
            OutboxEvent.objects.filter(
                account=customer, event_type=events.BALANCE_CREDITED
            ).order_by("pk")
        )

    return make


# ------------------------------------------------------------------------------- ping


def test_a_ping_goes_to_that_endpoint_only_signed_and_in_its_log(
    api_client, customer, receiver, endpoint_for, django_capture_on_commit_callbacks
):
    pinged = endpoint_for(customer, "/pinged", events=[events.ORDER_PAID])
    endpoint_for(customer, "/other", events=[events.ORDER_PAID])

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(PING.format(endpoint_id=pinged.pk))

    assert response.status_code == 202, response.content
    assert_matches_schema(response, "post", PING)
    (request,) = receiver.received
    assert request.path == "/pinged" and request.signature_ok is True
    assert request.event["type"] == "webhook.ping"
    assert request.event["data"] == {"endpoint": {"id": pinged.pk, "url": pinged.url}}
    log = api_client.get(DELIVERIES.format(endpoint_id=pinged.pk)).json()["results"]
    assert [(d["event_type"], d["status"]) for d in log] == [("webhook.ping", "delivered")]
    assert log[0]["event_id"] == request.headers["webhook-id"]
    listed = api_client.get(EVENTS, {"type": "webhook.ping"}).json()["results"]
    assert [e["id"] for e in listed] == [request.headers["webhook-id"]]


def test_a_ping_to_a_disabled_or_another_customers_endpoint_sends_nothing(
    api_client, customer, make_customer, receiver, endpoint_for
):
    mine = endpoint_for(customer)
    endpoint_set_enabled(endpoint_id=mine.pk, owner=customer, enabled=False)
    disabled = api_client.post(PING.format(endpoint_id=mine.pk))
    assert disabled.status_code == 409
    assert disabled["Content-Type"].startswith("application/problem+json")
    other = endpoint_create(owner=make_customer(), url=receiver.url(), events=["order.paid"])
    assert api_client.post(PING.format(endpoint_id=other.pk)).status_code == 404
    assert not WebhookDelivery.objects.exists()
    assert not OutboxEvent.objects.filter(event_type=events.WEBHOOK_PING).exists()


def test_the_page_ping_button_sends_a_ping(
    customer_client, customer, receiver, endpoint_for, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer)
    page = reverse("webhooks:endpoint_detail", kwargs={"endpoint_id": endpoint.pk})
    button = reverse("webhooks:endpoint_ping", kwargs={"endpoint_id": endpoint.pk})
    assert f'action="{button}"' in customer_client.get(page).content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        response = customer_client.post(button)

    assert response.status_code == 302 and response["Location"] == page
    (request,) = receiver.received
    assert request.event["type"] == "webhook.ping" and request.signature_ok
    shown = customer_client.get(page).content.decode()
    assert "webhook.ping" in shown


# ------------------------------------------------------------------------------- events


def test_the_events_list_shows_each_event_as_it_was_delivered(
    api_client, customer, receiver, endpoint_for, credits
):
    endpoint_for(customer, events=[events.BALANCE_CREDITED])
    made = credits(3)

    response = api_client.get(EVENTS, {"page_size": 2})

    assert response.status_code == 200
    assert_matches_schema(response, "get", EVENTS)
    page = response.json()
    assert [e["id"] for e in page["results"]] == [str(e.event_id) for e in made[::-1][:2]]
    rest = api_client.get(page["next"]).json()
    assert [e["id"] for e in rest["results"]] == [str(made[0].event_id)]
    delivered = {r.headers["webhook-id"]: r.event for r in receiver.received}
    for listed in page["results"] + rest["results"]:
        assert {k: listed[k] for k in ("type", "timestamp", "data")} == delivered[listed["id"]]


def test_the_events_list_filters_by_type_and_since(
    api_client, customer, make_customer, credit, credits
):
    first, second = credits(2)
    credit(make_customer(), "9.00")  # another account's event is never listed
    since = rfc3339(second.created_at)

    by_time = api_client.get(EVENTS, {"since": since}).json()["results"]
    by_type = api_client.get(EVENTS, {"type": "order.paid"}).json()["results"]
    everything = api_client.get(EVENTS).json()["results"]

    assert [e["id"] for e in by_time] == [str(second.event_id)]
    assert by_type == []
    assert {e["id"] for e in everything} == {str(first.event_id), str(second.event_id)}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"type": "order.nope"}, "type"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-12-01T09:00:00"}, "since"),  # no offset
        ({"since": "٢٠٢٦-12-01T09:00:00Z"}, "since"),  # non-ASCII digits
        ({"since": "2026-13-01T09:00:00Z"}, "since"),
    ],
)
def test_bad_event_filters_are_a_400_problem(api_client, params, field):
    response = api_client.get(EVENTS, params)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert [e["field"] for e in response.json()["errors"]] == [field]


def test_the_events_list_needs_the_read_scope(api_client, api_token, customer):
    order_only = api_client.for_token(api_token(customer, scopes=("order",)))
    assert order_only.get(EVENTS).status_code == 403
    assert api_client.anonymous().get(EVENTS).status_code == 401


# ------------------------------------------------------------------------------- replay


def test_replay_resends_the_subscribed_events_since_a_time_with_their_ids(
    api_client, customer, receiver, endpoint_for, credits, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    first, second, third = credits(3)
    assert len(receiver.received) == 3

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(
            REPLAY.format(endpoint_id=endpoint.pk),
            {"since": rfc3339(second.created_at)},
            format="json",
            headers={"Idempotency-Key": "replay-1"},
        )

    assert response.status_code == 202, response.content
    assert_matches_schema(response, "post", REPLAY)
    assert response.json()["queued"] == 2
    again = receiver.received[3:]
    assert sorted(r.headers["webhook-id"] for r in again) == sorted(
        [str(second.event_id), str(third.event_id)]
    )
    assert all(r.signature_ok for r in again)
    originals = {r.headers["webhook-id"]: r.body for r in receiver.received[:3]}
    assert all(r.body == originals[r.headers["webhook-id"]] for r in again)
    assert WebhookDelivery.objects.get(endpoint=endpoint, event=first).attempts == 1
    # The same key replays the answer: nothing is sent again.
    with django_capture_on_commit_callbacks(execute=True):
        repeated = api_client.post(
            REPLAY.format(endpoint_id=endpoint.pk),
            {"since": rfc3339(second.created_at)},
            format="json",
            headers={"Idempotency-Key": "replay-1"},
        )
    assert repeated.status_code == 202 and repeated["Idempotent-Replayed"] == "true"
    assert len(receiver.received) == 5


def test_replay_sends_events_from_before_the_endpoint_existed(
    api_client, customer, receiver, credits, django_capture_on_commit_callbacks
):
    (earlier,) = credits(1)  # no endpoint yet: delivered to no one
    endpoint = endpoint_create(
        owner=customer, url=receiver.url("/late"), events=[events.BALANCE_CREDITED]
    )
    receiver.secrets["/late"] = [endpoint.secret]

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(
            REPLAY.format(endpoint_id=endpoint.pk),
            {"since": rfc3339(earlier.created_at - timedelta(seconds=1))},
            format="json",
        )

    assert response.status_code == 202
    (request,) = receiver.received
    assert request.headers["webhook-id"] == str(earlier.event_id) and request.signature_ok


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"since": rfc3339(timezone.now() - timedelta(days=31))}, "since"),
        ({"since": rfc3339(timezone.now() + timedelta(days=1))}, "since"),
        ({"since": "٢٠٢٦-12-01T09:00:00Z"}, "since"),
        ({"since": 1733040000}, "since"),
        ({"since": "2026-12-01T09:00:00"}, "since"),
        ({}, "since"),
        ({"since": rfc3339(timezone.now()), "until": "later"}, "until"),
    ],
)
def test_a_replay_out_of_bounds_or_bad_is_a_400_problem_and_queues_nothing(
    api_client, customer, receiver, endpoint_for, credits, body, field
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    credits(1)
    response = api_client.post(REPLAY.format(endpoint_id=endpoint.pk), body, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert field in [e["field"] for e in response.json()["errors"]]
    assert WebhookDelivery.objects.get(endpoint=endpoint).attempts == 1


def test_a_replay_of_more_events_than_the_bound_is_refused(
    api_client, customer, receiver, endpoint_for, credits, settings
):
    settings.WEBHOOK_REPLAY_MAX_EVENTS = 2
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    first, *_ = credits(3)
    response = api_client.post(
        REPLAY.format(endpoint_id=endpoint.pk),
        {"since": rfc3339(first.created_at)},
        format="json",
    )
    assert response.status_code == 400
    assert "More than 2 events" in response.json()["errors"][0]["message"]
    assert [d.attempts for d in WebhookDelivery.objects.filter(endpoint=endpoint)] == [1, 1, 1]


def test_a_replay_to_another_customers_or_a_disabled_endpoint_is_refused(
    api_client, customer, make_customer, receiver, endpoint_for
):
    since = {"since": rfc3339(timezone.now() - timedelta(hours=1))}
    other = endpoint_create(owner=make_customer(), url=receiver.url(), events=["order.paid"])
    assert (
        api_client.post(REPLAY.format(endpoint_id=other.pk), since, format="json").status_code
        == 404
    )
    mine = endpoint_for(customer)
    endpoint_set_enabled(endpoint_id=mine.pk, owner=customer, enabled=False)
    assert (
        api_client.post(REPLAY.format(endpoint_id=mine.pk), since, format="json").status_code == 409
    )
    assert WebhookEndpoint.objects.get(pk=mine.pk).enabled is False
