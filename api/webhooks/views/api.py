"""The webhooks' API: endpoints (CRUD), their delivery log, redelivery, secret rotation, a test
ping, replay since a time; the account's events. Thin: parse, call one service, render.
Scope "read" for reads, "order" for writes; every POST is idempotent."""

import json

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.idempotency import idempotent
from api.pagination import CursorPagination
from api.problems import flatten_errors, problem, validation_problem

from .. import selectors
from ..exceptions import InvalidEndpoint, ReplayOutOfBounds, WebhookError
from ..models import WebhookDelivery, WebhookEndpoint
from ..serializers import (
    ALL_EVENT_CHOICES,
    DeliverySerializer,
    EndpointCreatedSerializer,
    EndpointSerializer,
    EndpointUpdateSerializer,
    EndpointWriteSerializer,
    EventSerializer,
    ReplayRequestSerializer,
    ReplaySerializer,
    Rfc3339Field,
    RotatedSecretSerializer,
)
from ..services import endpoints as services
from ..services.replay import endpoint_ping, endpoint_replay
from ..services.rotation import endpoint_rotate_secret

TAGS = ["webhooks"]
# The request attribute carrying a new endpoint's secret from the creation to its answer.
NEW_SECRET = "_webhook_new_secret"


def _parsed(serializer_class, data):
    if not isinstance(data, dict):
        raise validation_problem([], detail=_("Send a JSON object."))
    serializer = serializer_class(data=data)
    unknown = sorted(set(data) - set(serializer.fields))
    if unknown:
        raise validation_problem(
            [{"field": str(name)[:100], "message": _("Unknown field.")} for name in unknown]
        )
    if not serializer.is_valid():
        raise validation_problem(flatten_errors(serializer.errors))
    return serializer.validated_data


def _refused(exc: WebhookError):
    if isinstance(exc, InvalidEndpoint):
        return validation_problem([{"field": exc.field, "message": str(exc.message)}])
    return problem(exc.status, _("Request refused"), str(exc.message), "webhook-conflict")


def _with_secret(request, response, expected_status: int):
    """The answer of a creation or rotation with its secret added, if it ran now (a replayed
    answer keeps `secret` null: the secret is never stored with it)."""
    secret = getattr(request, NEW_SECRET, None)  # set only when the service ran now
    if secret is None or response.status_code != expected_status:
        return response
    if isinstance(response, Response):  # no Idempotency-Key: not rendered yet
        response.data["secret"] = secret
        return response
    body = json.loads(response.content)
    body["secret"] = secret
    response.content = JSONRenderer().render(body)
    return response


def _not_found():
    return problem(404, _("Not found"), _("No such webhook object in your account."), "not-found")


class EndpointListView(ListAPIView):
    required_scopes = {"GET": "read", "POST": "order"}
    serializer_class = EndpointSerializer

    def get_queryset(self):
        return selectors.customer_endpoints(self.request.user)

    @extend_schema(operation_id="webhook_endpoints_list", tags=TAGS, summary="Your endpoints")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="webhook_endpoints_create",
        tags=TAGS,
        summary="Create an endpoint; the answer carries its signing secret, shown only then",
        description=(
            "The signing secret is in this answer only. A request repeated with the same "
            "`Idempotency-Key` is answered the same endpoint (header `Idempotent-Replayed: "
            "true`) with `secret` null: the secret is never stored with the replayed answer. "
            "Lost it? Delete the endpoint and create another."
        ),
        request=EndpointWriteSerializer,
        examples=[
            OpenApiExample(
                "Orders paid and payments confirmed",
                value={
                    "url": "https://example.com/hooks/gpu-rental",
                    "events": ["order.paid", "payment.confirmed"],
                },
                request_only=True,
            )
        ],
        responses={201: EndpointCreatedSerializer},
    )
    def post(self, request):
        return _with_secret(request, self._create(request), status.HTTP_201_CREATED)

    post.idempotent = True

    @idempotent
    def _create(self, request):
        """The creation; its answer (what an idempotency key stores and replays) has the
        secret null, `post` adds it to this request's answer only."""
        data = _parsed(EndpointWriteSerializer, request.data)
        try:
            endpoint = services.endpoint_create(
                owner=request.user, url=data["url"], events=data["events"]
            )
        except WebhookError as exc:
            raise _refused(exc) from None
        setattr(request, NEW_SECRET, endpoint.secret)
        body = {**EndpointCreatedSerializer(endpoint).data, "secret": None}
        return Response(body, status=status.HTTP_201_CREATED)


class EndpointDetailView(APIView):
    required_scopes = {"GET": "read", "PATCH": "order", "DELETE": "order"}

    def _endpoint(self, request, endpoint_id: int) -> WebhookEndpoint:
        try:
            return selectors.customer_endpoint(request.user, endpoint_id)
        except WebhookEndpoint.DoesNotExist:
            raise _not_found() from None

    @extend_schema(
        operation_id="webhook_endpoints_retrieve",
        tags=TAGS,
        summary="One endpoint",
        responses={200: EndpointSerializer},
    )
    def get(self, request, endpoint_id: int):
        return Response(EndpointSerializer(self._endpoint(request, endpoint_id)).data)

    @extend_schema(
        operation_id="webhook_endpoints_update",
        tags=TAGS,
        summary="Change the URL or events, enable or disable",
        request=EndpointUpdateSerializer,
        responses={200: EndpointSerializer},
    )
    def patch(self, request, endpoint_id: int):
        data = _parsed(EndpointUpdateSerializer, request.data)
        try:
            endpoint = services.endpoint_update(
                endpoint_id=endpoint_id,
                owner=request.user,
                url=data.get("url"),
                events=data.get("events"),
            )
            if "enabled" in data:
                endpoint = services.endpoint_set_enabled(
                    endpoint_id=endpoint_id, owner=request.user, enabled=data["enabled"]
                )
        except WebhookEndpoint.DoesNotExist:
            raise _not_found() from None
        except WebhookError as exc:
            raise _refused(exc) from None
        return Response(EndpointSerializer(endpoint).data)

    @extend_schema(
        operation_id="webhook_endpoints_destroy",
        tags=TAGS,
        summary="Delete an endpoint and its delivery log",
        responses={204: OpenApiResponse(description="Deleted")},
    )
    def delete(self, request, endpoint_id: int):
        try:
            services.endpoint_delete(endpoint_id=endpoint_id, owner=request.user)
        except WebhookEndpoint.DoesNotExist:
            raise _not_found() from None
        return Response(status=status.HTTP_204_NO_CONTENT)


class EndpointDeliveriesView(ListAPIView):
    required_scopes = {"GET": "read"}
    serializer_class = DeliverySerializer

    def get_queryset(self):
        try:
            endpoint = selectors.customer_endpoint(self.request.user, self.kwargs["endpoint_id"])
        except WebhookEndpoint.DoesNotExist:
            raise _not_found() from None
        return selectors.endpoint_deliveries(endpoint)

    @extend_schema(
        operation_id="webhook_deliveries_list",
        tags=TAGS,
        summary="The endpoint's delivery log, newest first, with every attempt",
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RedeliverView(APIView):
    required_scopes = {"POST": "order"}

    @extend_schema(
        operation_id="webhook_deliveries_redeliver",
        tags=TAGS,
        summary="Send this delivery's event again now (same event id)",
        request=None,
        responses={202: DeliverySerializer},
    )
    @idempotent
    def post(self, request, delivery_id: int):
        try:
            services.delivery_redeliver(delivery_id=delivery_id, owner=request.user)
        except WebhookDelivery.DoesNotExist:
            raise _not_found() from None
        except WebhookError as exc:
            raise _refused(exc) from None
        delivery = selectors.customer_deliveries(request.user).get(pk=delivery_id)
        return Response(DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


class RotateSecretView(APIView):
    required_scopes = {"POST": "order"}

    @extend_schema(
        operation_id="webhook_endpoints_rotate_secret",
        tags=TAGS,
        summary="Give the endpoint a new signing secret; the answer shows it, only then",
        description=(
            "For `WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS` (24 hours) after the rotation, "
            "deliveries carry two signatures, `v1,<new> v1,<old>`: a receiver verifying with "
            "either secret accepts them, so it can switch at its own pace. Then only the new "
            "one signs. A replayed answer (same `Idempotency-Key`) has `secret` null."
        ),
        request=None,
        responses={200: RotatedSecretSerializer},
    )
    def post(self, request, endpoint_id: int):
        return _with_secret(request, self._rotate(request, endpoint_id), status.HTTP_200_OK)

    post.idempotent = True

    @idempotent
    def _rotate(self, request, endpoint_id: int):
        try:
            endpoint = endpoint_rotate_secret(endpoint_id=endpoint_id, owner=request.user)
        except WebhookEndpoint.DoesNotExist:
            raise _not_found() from None
        setattr(request, NEW_SECRET, endpoint.secret)
        return Response({**RotatedSecretSerializer(endpoint).data, "secret": None})


class PingView(APIView):
    required_scopes = {"POST": "order"}

    @extend_schema(
        operation_id="webhook_endpoints_ping",
        tags=TAGS,
        summary="Send a webhook.ping event to this endpoint only, now",
        description=(
            "The ping goes the way every event goes (signed, retried, in the endpoint's "
            "delivery log), whatever events the endpoint subscribes to; 409 while the "
            "endpoint is disabled."
        ),
        request=None,
        responses={202: DeliverySerializer},
    )
    @idempotent
    def post(self, request, endpoint_id: int):
        try:
            delivery = endpoint_ping(endpoint_id=endpoint_id, owner=request.user)
        except WebhookEndpoint.DoesNotExist:
            raise _not_found() from None
        except WebhookError as exc:
            raise _refused(exc) from None
        delivery = selectors.customer_deliveries(request.user).get(pk=delivery.pk)
        return Response(DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


class ReplayView(APIView):
    required_scopes = {"POST": "order"}

    @extend_schema(
        operation_id="webhook_endpoints_replay",
        tags=TAGS,
        summary="Send again every event since a time that the endpoint subscribes to",
        description=(
            "Each event keeps its id (`webhook-id`): deduplicate on it. At most 30 days back "
            "and 1000 events (400 beyond: replay from a later time); 409 while the endpoint "
            "is disabled."
        ),
        request=ReplayRequestSerializer,
        responses={202: ReplaySerializer},
    )
    @idempotent
    def post(self, request, endpoint_id: int):
        data = _parsed(ReplayRequestSerializer, request.data)
        try:
            queued = endpoint_replay(
                endpoint_id=endpoint_id, owner=request.user, since=data["since"]
            )
        except WebhookEndpoint.DoesNotExist:
            raise _not_found() from None
        except ReplayOutOfBounds as exc:
            raise validation_problem([{"field": "since", "message": str(exc.message)}]) from None
        except WebhookError as exc:
            raise _refused(exc) from None
        return Response(
            {"queued": len(queued), "deliveries": queued}, status=status.HTTP_202_ACCEPTED
        )


class EventListView(ListAPIView):
    required_scopes = {"GET": "read"}
    serializer_class = EventSerializer
    pagination_class = CursorPagination  # newest first (created_at, pk)

    def get_queryset(self):
        params = self.request.query_params
        event_type = params.get("type")
        if event_type is not None and event_type not in ALL_EVENT_CHOICES:
            raise validation_problem([{"field": "type", "message": _("Unknown event type.")}])
        since = None
        if params.get("since") is not None:
            try:
                since = Rfc3339Field().run_validation(params["since"])
            except ValidationError as exc:
                raise validation_problem(
                    [{"field": "since", "message": str(message)} for message in exc.detail]
                ) from None
        return selectors.account_events(self.request.user, event_type=event_type, since=since)

    @extend_schema(
        operation_id="events_list",
        tags=TAGS,
        summary="Your account's events, newest first, each as its webhooks deliver it",
        parameters=[
            OpenApiParameter(
                "type", OpenApiTypes.STR, enum=ALL_EVENT_CHOICES, description="Only this type."
            ),
            OpenApiParameter(
                "since",
                OpenApiTypes.DATETIME,
                description="Only events at or after this RFC 3339 time (with its offset).",
            ),
        ],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
