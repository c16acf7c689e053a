"""The pilot of a paid order: its diagnostics reports and the decision log.

Both lists are bounded per order (pilot.services: at most 100 of each), so they come whole,
in the order the order page shows them; a decision is recorded by pilot's own service.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.idempotency import idempotent
from pilot.forms import DecisionForm
from pilot.selectors import DecisionView, order_pilot
from pilot.services import decisions
from rental.models import Order

from . import examples
from .common import no_order
from .input import bind
from .orders import own_order
from .serializers import DecisionRequest, DecisionSerializer, ReportSerializer

ReportList = inline_serializer("ReportList", {"results": ReportSerializer(many=True)})
DecisionList = inline_serializer("DecisionList", {"results": DecisionSerializer(many=True)})


class ReportListView(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="orders_pilot_reports_list",
        summary="The order's diagnostics reports, newest first (none before it is paid)",
        responses={200: ReportList},
    )
    def get(self, request, order_id: int):
        pilot = order_pilot(own_order(request, order_id))
        return Response({"results": ReportSerializer(pilot.reports, many=True).data})


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
