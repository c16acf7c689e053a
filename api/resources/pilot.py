"""The pilot of a paid order: its diagnostics reports and the decision log.

Both lists are bounded per order (pilot.services: at most 100 of each), so they come whole,
in the order the order page shows them; a decision is recorded by pilot's own service.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import status
from rest_framework.exceptions import ParseError, UnsupportedMediaType, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.fields import ascii_int
from api.idempotency import idempotent
from api.problems import PROBLEM_CONTENT_TYPE
from pilot.exceptions import ReportTooLarge
from pilot.forms import DecisionForm
from pilot.report import ReportRejected, ReportUnreadable
from pilot.selectors import DecisionView, order_pilot
from pilot.services import decisions, reports
from rental.models import Order

from . import examples
from .common import no_order
from .input import bind
from .orders import own_order
from .serializers import DecisionRequest, DecisionSerializer, ReportSerializer

ReportList = inline_serializer("ReportList", {"results": ReportSerializer(many=True)})
DecisionList = inline_serializer("DecisionList", {"results": DecisionSerializer(many=True)})


class ReportListView(APIView):
    required_scopes = {"GET": "read", "POST": "order"}

    @extend_schema(
        operation_id="orders_pilot_reports_list",
        summary="The order's diagnostics reports, newest first (none before it is paid)",
        responses={200: ReportList},
    )
    def get(self, request, order_id: int):
        pilot = order_pilot(own_order(request, order_id))
        return Response({"results": ReportSerializer(pilot.reports, many=True).data})

    @extend_schema(
        operation_id="orders_pilot_reports_create",
        summary="Store a diagnostics report (diagnose.py's report.json) on the order",
        description=(
            "As the order page's upload: the body is the report.json diagnose.py wrote, "
            "unchanged, at most 256 KiB (413 beyond). A report that is not one answers 400; "
            "an order not paid yet, ended, or with too many reports answers 409."
        ),
        request={"application/json": {"type": "object", "additionalProperties": True}},
        responses={
            201: OpenApiResponse(ReportSerializer, description="The report, stored."),
            (413, PROBLEM_CONTENT_TYPE): OpenApiResponse(
                {"$ref": "#/components/schemas/Problem"},
                description="The report is larger than the site accepts.",
            ),
        },
    )
    def post(self, request, order_id: int):
        # Before the Idempotency-Key reads the body, so that a key changes none of these
        # answers: another customer's order is a 404 before anything is read, a body too large
        # for a report its documented 413 (not the site-wide 400 for a body past
        # DATA_UPLOAD_MAX_MEMORY_SIZE, which reading it for the key would give).
        own_order(request, order_id)
        if request.content_type.split(";")[0].strip() != "application/json":
            raise UnsupportedMediaType(request.content_type)
        declared = ascii_int(request.META.get("CONTENT_LENGTH")) or 0
        if declared > reports.max_report_bytes():
            raise ReportTooLarge(limit_bytes=reports.max_report_bytes())
        return self._store(request, order_id)

    post.idempotent = True  # it takes an Idempotency-Key, through _store

    @idempotent
    def _store(self, request, order_id: int):
        try:
            stored = reports.report_upload_by_customer(
                order_id=order_id, customer=request.user, raw=request._request.body
            )
        except Order.DoesNotExist:
            raise no_order() from None
        except ReportUnreadable as exc:
            # Not JSON at all: the "malformed" problem, as the API's parser answers it when an
            # Idempotency-Key has the body parsed first.
            raise ParseError(exc.message) from None
        except ReportRejected as exc:
            raise ValidationError({"": [exc.message]}) from None
        view = next(
            r for r in order_pilot(own_order(request, order_id)).reports if r.report == stored
        )
        return Response(ReportSerializer(view).data, status=status.HTTP_201_CREATED)


class DecisionListCreate(APIView):
    required_scopes = {"GET": "read", "POST": "order"}

    @extend_schema(
        operation_id="orders_pilot_decisions_list",
        summary="The order's decision log, oldest first",
        responses={200: DecisionList},
    )
    def get(self, request, order_id: int):
        pilot = order_pilot(own_order(request, order_id))
        return Response({"results": DecisionSerializer(pilot.decisions, many=True).data})

    @extend_schema(
        operation_id="orders_pilot_decisions_create",
        summary="Record a decision after the pilot, with its motivation (append-only)",
        request=DecisionRequest,
        examples=examples.DECISION,
        responses={
            201: OpenApiResponse(DecisionSerializer, description="The decision, recorded."),
        },
    )
    @idempotent
    def post(self, request, order_id: int):
        order = own_order(request, order_id)
        choices = order_pilot(order).report_choices
        form = bind(DecisionRequest, request.data, lambda data: DecisionForm(data, reports=choices))
        try:
            decision = decisions.decision_record(
                order_id=order.pk,
                customer=request.user,
                kind=form.cleaned_data["kind"],
                motivation=form.cleaned_data["motivation"],
                report_id=form.cleaned_data["report"],
            )
        except Order.DoesNotExist:
            raise no_order() from None
        view = DecisionView(decision, decision.report)
        return Response(DecisionSerializer(view).data, status=status.HTTP_201_CREATED)
