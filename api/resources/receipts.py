"""Receipts: the list, one receipt in JSON, and the same PDF as the receipt page.

Looked up through their owner (another customer's number answers 404, like a number never
issued); a receipt's texts are in the language it was issued in, as on its page.
"""

from django.http import HttpResponse
from django.utils import translation
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.pagination import CursorPagination
from payments.ledger.selectors.receipts import (
    customer_receipt,
    customer_receipts,
    receipt_document,
)
from payments.models import Receipt

from .filters import ORDER_PARAMETER, parse_order
from .serializers_ledger import ReceiptDocumentSerializer, ReceiptSerializer

NO_RECEIPT = gettext_lazy("No such receipt in your account.")
PDF = "application/pdf"


def own_receipt(request, number: int) -> Receipt:
    try:
        return customer_receipt(customer=request.user, number=number)
    except Receipt.DoesNotExist:
        raise NotFound(detail=NO_RECEIPT) from None


class ReceiptPagination(CursorPagination):
    ordering = ("-number",)


class ReceiptList(generics.ListAPIView):
    required_scopes = {"GET": "read"}
    serializer_class = ReceiptSerializer
    pagination_class = ReceiptPagination

    def get_queryset(self):
        order_id = parse_order(self.request.query_params)
        return customer_receipts(customer=self.request.user, order_id=order_id).select_related(
            "transaction"
        )

    @extend_schema(
        operation_id="receipts_list",
        summary="The token owner's receipts, newest first (the receipts page)",
        parameters=[ORDER_PARAMETER],
        responses={200: ReceiptSerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class ReceiptDetail(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="receipts_retrieve",
        summary="One receipt, with what its page shows (issuer, billing details, method)",
        responses={200: ReceiptDocumentSerializer},
    )
    def get(self, request, number: int):
        receipt = own_receipt(request, number)
        with translation.override(receipt.language):
            document = receipt_document(receipt)
            data = ReceiptDocumentSerializer(receipt, context={"document": document}).data
        return Response(data)


class PdfRenderer(BaseRenderer):
    """Lets a client ask for `Accept: application/pdf`; the view answers the PDF itself, and
    a problem (404) is JSON whatever was asked."""

    media_type = PDF
    format = "pdf"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, bytes):
            return data
        return JSONRenderer().render(data)


class ReceiptPdf(APIView):
    required_scopes = {"GET": "read"}
    renderer_classes = [JSONRenderer, PdfRenderer]

    @extend_schema(
        operation_id="receipts_pdf",
        summary="One receipt as the PDF of the receipt page",
        responses={
            (200, PDF): OpenApiResponse(OpenApiTypes.BINARY, description="The receipt's PDF."),
        },
    )
    def get(self, request, number: int):
        receipt = own_receipt(request, number)
        # fpdf2 loads in half a second: only where a PDF is asked for (as the page does).
        from payments.ledger.receipts_pdf import receipt_pdf as draw

        with translation.override(receipt.language):
            document = receipt_document(receipt)
            content = draw(document)
        response = HttpResponse(content, content_type=PDF)
        response["Content-Disposition"] = f'attachment; filename="{document.filename}"'
        return response
