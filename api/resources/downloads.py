"""Files the pages offer for download, the same bytes from the API: the statement as CSV and
the pilot's two kits (zip).

A file operation answers its file's media type (or `*/*`); anything else is a 406 problem.
Its errors are problem+json like every other answer: the file renderer writes them as JSON.
"""

import json

from django.http import HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.renderers import BaseRenderer
from rest_framework.views import APIView

from api.problems import PROBLEM_CONTENT_TYPE
from payments.ledger import exports
from payments.ledger.selectors.statement import customer_statement_between
from pilot.services import kits
from rental.models import Order

from .common import no_order
from .filters import DATE_PARAMETERS, list_filters


class _FileRenderer(BaseRenderer):
    """Negotiates the file's media type; the view answers the file itself (a Django response),
    so what this renders is only a problem (a dict), as JSON."""

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if data is None:
            return b""
        return json.dumps(data, ensure_ascii=False).encode()


class CsvRenderer(_FileRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"


class ZipRenderer(_FileRenderer):
    media_type = "application/zip"
    format = "zip"
    charset = None


def _problem(description: str) -> OpenApiResponse:
    return OpenApiResponse({"$ref": "#/components/schemas/Problem"}, description=description)


NOT_ACCEPTABLE = {
    (406, PROBLEM_CONTENT_TYPE): _problem("The Accept header excludes this file's media type.")
}


class StatementCsv(APIView):
    required_scopes = {"GET": "read"}
    renderer_classes = [CsvRenderer]

    @extend_schema(
        operation_id="balance_statement_csv",
        summary="The statement as the balance page's CSV download, oldest entry first",
        description=(
            "Columns: date, kind, memo, order, amount_usd, running_balance_usd. Without dates "
            "it is byte for byte the page's download; with them, its lines of that range "
            "(running balances those of the whole statement)."
        ),
        parameters=DATE_PARAMETERS,
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR, description="The CSV file (attachment)."
            ),
            **NOT_ACCEPTABLE,
        },
    )
    def get(self, request):
        filters = list_filters(request)
        entries = customer_statement_between(
            customer=request.user,
            created_after=filters.created_after,
            created_before=filters.created_before,
        )
        return exports.statement_csv(entries.iterator(chunk_size=500))


def _kit_response(request, order_id: int, build) -> HttpResponse:
    """The kit as the order page's download gives it; PilotError (409 before payment or
    after the rental) reaches api.problems."""
    try:
        kit = build(order_id=order_id, customer=request.user)
    except Order.DoesNotExist:
        raise no_order() from None
    response = HttpResponse(kit.content, content_type="application/zip")
    response["Content-Disposition"] = content_disposition_header(True, kit.filename)
    return response


_ZIP = {
    (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="The zip."),
    (409, PROBLEM_CONTENT_TYPE): _problem("The order is not paid yet, or its rental is over."),
    **NOT_ACCEPTABLE,
}


class KitDiagnostics(APIView):
    # Each download issues the kit's new upload token (the previous kit's stops): a change to
    # the order, hence "order", not "read".
    required_scopes = {"GET": "order"}
    renderer_classes = [ZipRenderer]

    @extend_schema(
        operation_id="orders_kit_diagnostics",
        summary="The order's diagnostics kit (diagnose.py) with a new upload token",
        description=(
            "As the order page's download: from payment until the rental ends (409 "
            "otherwise). Each download carries a new upload token; the previous kit's token "
            "stops working."
        ),
        responses=_ZIP,
    )
    def get(self, request, order_id: int):
        return _kit_response(request, order_id, kits.kit_diagnostics)


class KitPilot(APIView):
    required_scopes = {"GET": "read"}
    renderer_classes = [ZipRenderer]

    @extend_schema(
        operation_id="orders_kit_pilot",
        summary="The order's pilot folder (the guide's documents and check_pilot.py)",
        description="As the order page's download: from payment until the rental ends (409 "
        "otherwise).",
        responses=_ZIP,
    )
    def get(self, request, order_id: int):
        return _kit_response(request, order_id, kits.kit_pilot_folder)
