"""Paying: an order from the balance, crypto payments (open, status, declare) and top-ups.

Bodies are checked by the payment pages' forms; every answer about a crypto payment is the
payment page's one view of its state (payments.crypto.selectors.payment_page).
"""

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from api.idempotency import idempotent
from payments.chain.forms import StablecoinForm
from payments.crypto.forms import DeclareForm, TopUpForm
from payments.crypto.selectors.payment_page import customer_payment_view
from payments.crypto.services.balance_payment import balance_pay_order
from payments.crypto.services.payments import (
    TopUpTooSmall,
    payment_create_for_order,
    payment_create_top_up,
    payment_declare,
)
from payments.exceptions import InsufficientBalance
from payments.models import CryptoPayment
from rental.models import Order

from . import examples
from .common import no_order, no_payment, shortfall
from .input import bind, stablecoin
from .orders import order_response
from .serializers import (
    DeclareRequest,
    OrderSerializer,
    PaymentSerializer,
    StablecoinRequest,
    TopUpRequest,
)

# The form's one choice is "network:asset"; its message answers for the network.
STABLECOIN_FIELDS = {"stablecoin": "network"}


def payment_response(request, payment_id: int, code: int = status.HTTP_200_OK) -> Response:
    try:
        view = customer_payment_view(customer=request.user, payment_id=payment_id)
    except CryptoPayment.DoesNotExist:
        raise no_payment() from None
    response = Response(PaymentSerializer(view).data, status=code)
    if code == status.HTTP_201_CREATED:
        response["Location"] = reverse("api:payment_detail", kwargs={"payment_id": payment_id})
    return response


class PayFromBalance(APIView):
    required_scopes = {"POST": "pay"}

    @extend_schema(
        operation_id="orders_pay_balance",
        summary="Pay the whole order from the USD balance",
        description="Idempotent per order: paying a paid order again answers the paid order.",
        request=None,
        responses={
            200: OpenApiResponse(OrderSerializer, description="The order, paid."),
        },
    )
    @idempotent
    def post(self, request, order_id: int):
        try:
            balance_pay_order(order_id=order_id, customer=request.user)
        except Order.DoesNotExist:
            raise no_order() from None
        except InsufficientBalance as exc:
            raise shortfall(exc) from None
        return order_response(request, order_id)


class OrderPaymentCreate(APIView):
    required_scopes = {"POST": "pay"}

    @extend_schema(
        operation_id="orders_payments_create",
        summary="Open (or reopen) the order's stablecoin payment at a fresh deposit address",
        request=StablecoinRequest,
        examples=examples.STABLECOIN,
        responses={
            201: OpenApiResponse(PaymentSerializer, description="What to send, where, by when."),
        },
    )
    @idempotent
    def post(self, request, order_id: int):
        form = bind(
            StablecoinRequest,
            request.data,
            lambda data: StablecoinForm({"stablecoin": stablecoin(data)}),
            fields=STABLECOIN_FIELDS,
        )
        choice = form.cleaned_data["stablecoin"]
        try:
            payment = payment_create_for_order(
                order_id=order_id,
                customer=request.user,
                network_key=choice.network_key,
                asset_symbol=choice.asset_symbol,
            )
        except Order.DoesNotExist:
            raise no_order() from None
        return payment_response(request, payment.pk, status.HTTP_201_CREATED)


class PaymentDetail(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="payments_retrieve",
        summary="A payment's status, confirmations n/N and the amount still due",
        responses={200: PaymentSerializer},
    )
    def get(self, request, payment_id: int):
        return payment_response(request, payment_id)


class PaymentDeclare(APIView):
    required_scopes = {"POST": "pay"}

    @extend_schema(
        operation_id="payments_declare",
        summary='"I have paid": asks the worker to look now; it confirms nothing',
        request=DeclareRequest,
        examples=examples.DECLARE,
        responses={200: PaymentSerializer},
    )
    @idempotent
    def post(self, request, payment_id: int):
        form = bind(DeclareRequest, request.data or {}, DeclareForm)
        try:
            payment_declare(
                payment_id=payment_id,
                customer=request.user,
                tx_hash=form.cleaned_data["tx_hash"],
            )
        except CryptoPayment.DoesNotExist:
            raise no_payment() from None
        return payment_response(request, payment_id)


class TopUpCreate(APIView):
    required_scopes = {"POST": "pay"}

    @extend_schema(
        operation_id="top_ups_create",
        summary="Top up the USD balance in a stablecoin: a payment for the amount",
        request=TopUpRequest,
        examples=examples.TOP_UP,
        responses={
            201: OpenApiResponse(PaymentSerializer, description="What to send, where, by when."),
        },
    )
    @idempotent
    def post(self, request):
        form = bind(
            TopUpRequest,
            request.data,
            lambda data: TopUpForm({"amount": data.get("amount"), "stablecoin": stablecoin(data)}),
            fields=STABLECOIN_FIELDS,
        )
        choice = form.cleaned_data["stablecoin"]
        try:
            payment = payment_create_top_up(
                customer=request.user,
                amount_usd=form.cleaned_data["amount"],
                network_key=choice.network_key,
                asset_symbol=choice.asset_symbol,
            )
        except TopUpTooSmall as exc:
            raise ValidationError({"amount": [str(exc.message)]}) from None
        return payment_response(request, payment.pk, status.HTTP_201_CREATED)
