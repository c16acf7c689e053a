"""Extending a rental: ask for more days, pay from the balance or in a stablecoin, or cancel.

The same services as the pages: rental's `extension_create` (the extend page), payments'
`extension_pay_from_balance`, `extension_open_crypto_payment` and `extension_cancel` (the
extension's pay page); every answer about one extension is its pay page's view
(payments.crypto.selectors.extensions.extension_pay_view).
"""

from django.urls import reverse
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from api.idempotency import idempotent
from api.pagination import CursorPagination
from payments.chain.forms import StablecoinForm
from payments.crypto.selectors.extensions import extension_pay_view
from payments.crypto.services import extensions as extension_payments
from payments.exceptions import InsufficientBalance
from payments.ledger.selectors.receipts import customer_extension_receipt, with_receipt_numbers
from payments.models import Receipt
from rental.exceptions import PriceUnavailable
from rental.forms_extensions import ExtensionForm
from rental.models import Order, OrderExtension
from rental.services import extension_create

from .common import no_order, shortfall
from .input import bind, stablecoin
from .orders import own_order
from .payments import STABLECOIN_FIELDS, payment_response
from .serializers import PaymentSerializer, StablecoinRequest
from .serializers_extensions import (
    ExtensionCreateRequest,
    ExtensionDetailSerializer,
    ExtensionSerializer,
)

NO_EXTENSION = gettext_lazy("No such extension in your account.")


def no_extension() -> NotFound:
    return NotFound(detail=NO_EXTENSION)


def extension_body(request, extension_id: int) -> dict:
    try:
        view = extension_pay_view(customer=request.user, extension_id=extension_id)
    except OrderExtension.DoesNotExist:
        raise no_extension() from None
    extension = view.extension
    try:
        receipt = customer_extension_receipt(customer=request.user, extension_id=extension.pk)
    except Receipt.DoesNotExist:
        extension.receipt_number = None  # not paid (yet)
    else:
        extension.receipt_number = receipt.number
    return ExtensionDetailSerializer(extension, context={"view": view}).data


def extension_response(request, extension_id: int, code: int = status.HTTP_200_OK) -> Response:
    response = Response(extension_body(request, extension_id), status=code)
    if code == status.HTTP_201_CREATED:
        response["Location"] = reverse(
            "api:extension_detail", kwargs={"extension_id": extension_id}
        )
    return response


class OrderExtensionListCreate(generics.ListAPIView):
    required_scopes = {"GET": "read", "POST": "order"}
    serializer_class = ExtensionSerializer
    pagination_class = CursorPagination

    def get_queryset(self):
        order = own_order(self.request, self.kwargs["order_id"])
        return with_receipt_numbers(OrderExtension.objects.filter(order=order))

    @extend_schema(
        operation_id="orders_extensions_list",
        summary="The order's extensions, newest first",
        responses={200: ExtensionSerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="orders_extensions_create",
        summary="Ask for more days on an active rental, at today's price; then pay it",
        description=(
            "As the extend page: only an active rental, before its end; one extension awaits "
            "payment at a time (asking again for the same duration answers that one, another "
            "duration is a 409); the price (today's lot price for the duration × the order's "
            "lots) is frozen on the extension and held for a while. Pay it with "
            "`extensions_pay_balance` or `extensions_payments_create`; the rental's end moves "
            "once it is paid."
        ),
        request=ExtensionCreateRequest,
        responses={
            201: OpenApiResponse(
                ExtensionDetailSerializer,
                description="The extension awaiting payment (the one already awaiting it, "
                "for the same duration).",
            ),
        },
    )
    @idempotent
    def post(self, request, order_id: int):
        form = bind(ExtensionCreateRequest, request.data, ExtensionForm)
        try:
            extension = extension_create(
                order_id=order_id,
                customer=request.user,
                duration_days=form.cleaned_data["duration_days"],
            )
        except Order.DoesNotExist:
            raise no_order() from None
        except PriceUnavailable as exc:
            raise ValidationError({"duration_days": [str(exc.message)]}) from None
        return extension_response(request, extension.pk, status.HTTP_201_CREATED)


class ExtensionDetail(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="extensions_retrieve",
        summary="One extension: status, price, period once paid, what can still pay it",
        responses={200: ExtensionDetailSerializer},
    )
    def get(self, request, extension_id: int):
        return extension_response(request, extension_id)


class ExtensionPayBalance(APIView):
    required_scopes = {"POST": "pay"}

    @extend_schema(
        operation_id="extensions_pay_balance",
        summary="Pay the whole extension from the USD balance; the rental's end moves",
        description=(
            "Idempotent per extension: paying a paid extension again answers it, charged "
            "once. 409 when the balance falls short (nothing is charged) or the extension can "
            "no longer be paid (cancelled, its price hold ran out, the rental ended)."
        ),
        request=None,
        responses={200: OpenApiResponse(ExtensionDetailSerializer, description="Paid.")},
    )
    @idempotent
    def post(self, request, extension_id: int):
        try:
            extension_payments.extension_pay_from_balance(
                extension_id=extension_id, customer=request.user
            )
        except OrderExtension.DoesNotExist:
            raise no_extension() from None
        except InsufficientBalance as exc:
            raise shortfall(exc) from None
        return extension_response(request, extension_id)


class ExtensionPaymentCreate(APIView):
    required_scopes = {"POST": "pay"}

    @extend_schema(
        operation_id="extensions_payments_create",
        summary="Open (or reopen) the extension's stablecoin payment at a fresh deposit address",
        description=(
            "Refused (409) when the rental ends too soon for a transfer to be confirmed "
            "before its end: pay from the balance then."
        ),
        request=StablecoinRequest,
        responses={
            201: OpenApiResponse(PaymentSerializer, description="What to send, where, by when."),
        },
    )
    @idempotent
    def post(self, request, extension_id: int):
        form = bind(
            StablecoinRequest,
            request.data,
            lambda data: StablecoinForm({"stablecoin": stablecoin(data)}),
            fields=STABLECOIN_FIELDS,
        )
        choice = form.cleaned_data["stablecoin"]
        try:
            payment = extension_payments.extension_open_crypto_payment(
                extension_id=extension_id,
                customer=request.user,
                network_key=choice.network_key,
                asset_symbol=choice.asset_symbol,
            )
        except OrderExtension.DoesNotExist:
            raise no_extension() from None
        return payment_response(request, payment.pk, status.HTTP_201_CREATED)


class ExtensionCancel(APIView):
    required_scopes = {"POST": "order"}

    @extend_schema(
        operation_id="extensions_cancel",
        summary="Give up an extension awaiting payment; money already sent goes to the balance",
        request=None,
        responses={200: OpenApiResponse(ExtensionDetailSerializer, description="Cancelled.")},
    )
    @idempotent
    def post(self, request, extension_id: int):
        try:
            extension_payments.extension_cancel(extension_id=extension_id, customer=request.user)
        except OrderExtension.DoesNotExist:
            raise no_extension() from None
        return extension_response(request, extension_id)
