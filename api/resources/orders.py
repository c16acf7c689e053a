"""Orders: create, list, detail, cancel, the order's SSH key and its refund.

The body is checked by the configurator's form, the order placed by rental's `order_create`
and cancelled by the order page's cancel service (payments closes the order's payments).
"""

from django import forms
from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.ssh_keys import stored_ssh_key
from api.idempotency import idempotent
from api.pagination import CursorPagination
from payments.crypto.services import order_payments
from payments.ledger.selectors.receipts import customer_order_receipt_numbers
from payments.ledger.selectors.refunds import order_refund
from payments.models import TransactionKind
from pilot.selectors import order_timeline
from rental import selectors, services
from rental.exceptions import PriceUnavailable
from rental.forms import OrderConfigurationForm, OrderSshKeyForm
from rental.models import ACCESS_STATUSES, Order, OrderStatus
from rental.selectors_extensions import extension_offers, order_extendable
from rental.services.provisioning import order_set_ssh_key

from . import examples
from .common import no_order
from .filters import DATE_PARAMETERS, created_between, list_filters, status_parameter
from .input import bind
from .serializers import (
    CancelRequest,
    OrderCreateRequest,
    OrderSerializer,
    OrderSshKeyRequest,
    OrderSummarySerializer,
    RefundSerializer,
)

NOT_ENDED_EARLY = gettext_lazy(
    "This order was not ended early: nothing was refunded. If a paid order cannot get its "
    "cards in time, or a host fails during the rental, an operator ends it early and the "
    "hours not delivered go back to your USD balance: lot price ÷ hours of the duration × "
    "hours not delivered × lots."
)


def own_order(request, order_id: int) -> Order:
    """The token owner's order with its timeline; another customer's answers 404."""
    try:
        return selectors.customer_order(customer=request.user, order_id=order_id)
    except Order.DoesNotExist:
        raise no_order() from None


def order_body(order: Order) -> dict:
    """The order as its page shows it (what the detail and every write answer)."""
    ssh_key = stored_ssh_key(order.ssh_public_key)
    extendable = order_extendable(order)
    context = {
        "access": selectors.order_access(order) if order.status in ACCESS_STATUSES else [],
        "ssh_key_fingerprint": ssh_key.fingerprint if ssh_key else None,
        "timeline": order_timeline(order),
        "extendable": extendable,
        "extension_offers": extension_offers(order) if extendable else [],
        "receipts": customer_order_receipt_numbers(
            customer_id=order.customer_id, order_id=order.pk
        ),
        "refund": order_refund(order=order),
    }
    return OrderSerializer(order, context=context).data


def order_response(request, order_id: int, code: int = status.HTTP_200_OK) -> Response:
    return Response(order_body(own_order(request, order_id)), status=code)


class OrderListCreate(generics.ListAPIView):
    required_scopes = {"GET": "read", "POST": "order"}
    serializer_class = OrderSummarySerializer
    pagination_class = CursorPagination

    def get_queryset(self):
        filters = list_filters(self.request, statuses=OrderStatus.values)
        orders = selectors.customer_orders(customer=self.request.user)
        if filters.status is not None:
            orders = orders.filter(status=filters.status)
        return created_between(orders, filters).select_related("gpu_model")

    @extend_schema(
        operation_id="orders_list",
        summary="The token owner's orders, newest first",
        parameters=[
            status_parameter(OrderStatus.choices, "Only orders in this status."),
            *DATE_PARAMETERS,
        ],
        responses={200: OrderSummarySerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="orders_create",
        summary="Place an order awaiting payment; it holds its lots for a while",
        request=OrderCreateRequest,
        examples=examples.ORDER,
        responses={
            201: OpenApiResponse(OrderSerializer, description="The order, awaiting payment."),
        },
    )
    @idempotent
    def post(self, request, *args, **kwargs):
        catalogue = list(selectors.catalogue())
        form = bind(
            OrderCreateRequest,
            request.data,
            lambda data: OrderConfigurationForm(data, catalogue=catalogue),
        )
        try:
            order = services.order_create(customer=request.user, configuration=form.configuration())
        except PriceUnavailable as exc:
            raise ValidationError({"duration_days": [str(exc.message)]}) from None
        response = order_response(request, order.pk, status.HTTP_201_CREATED)
        response["Location"] = reverse("api:order_detail", kwargs={"order_id": order.pk})
        return response


class OrderDetail(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="orders_retrieve",
        summary="One order: status, snapshot, total, hold, period, access and timeline",
        responses={200: OrderSerializer},
    )
    def get(self, request, order_id: int):
        return order_response(request, order_id)


class OrderCancel(APIView):
    required_scopes = {"POST": "order"}

    @extend_schema(
        operation_id="orders_cancel",
        summary="Cancel an order awaiting payment; its lots go back to stock",
        description=(
            "When money already arrived on the order's payments, the answer is 409 until the "
            "request says `money_confirmed: true`: what arrived then goes to the USD balance."
        ),
        request=CancelRequest,
        examples=examples.CANCEL,
        responses={200: OrderSerializer},
    )
    @idempotent
    def post(self, request, order_id: int):
        form = bind(CancelRequest, request.data or {}, _CancelForm)
        try:
            order_payments.order_cancel(
                order_id=order_id,
                customer=request.user,
                money_confirmed=form.cleaned_data["money_confirmed"],
            )
        except Order.DoesNotExist:
            raise no_order() from None
        return order_response(request, order_id)


class _CancelForm(forms.Form):
    money_confirmed = forms.BooleanField(required=False)


class OrderSshKey(APIView):
    required_scopes = {"PUT": "order"}

    @extend_schema(
        operation_id="orders_ssh_key_update",
        summary="Give or replace the order's SSH public key, until its hosts are prepared",
        request=OrderSshKeyRequest,
        examples=examples.ORDER_SSH_KEY,
        responses={200: OrderSerializer},
    )
    @idempotent
    def put(self, request, order_id: int):
        form = bind(
            OrderSshKeyRequest,
            request.data,
            lambda data: OrderSshKeyForm(data, customer=request.user),
        )
        try:
            order_set_ssh_key(
                order_id=order_id,
                customer=request.user,
                key_text=form.cleaned_data["ssh_public_key"].line,
                save_on_account=form.cleaned_data["save_on_account"],
            )
        except Order.DoesNotExist:
            raise no_order() from None
        except DjangoValidationError as exc:  # the form checks the key first
            raise ValidationError({"ssh_public_key": exc.messages}) from None
        return order_response(request, order_id)


class OrderRefund(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="orders_refund_retrieve",
        summary="The refund of an order an operator ended early (customers cannot end early)",
        description=(
            "Only operators end an order early, as on the pages: when a paid order cannot get "
            "its cards in time or a host fails during the rental. The hours not delivered are "
            "then credited to the USD balance (lot price ÷ hours of the duration × hours not "
            "delivered × lots). There is no customer action to end an order early. 404 while "
            "the order was not ended early."
        ),
        responses={200: RefundSerializer},
    )
    def get(self, request, order_id: int):
        order = own_order(request, order_id)
        refund = order_refund(order=order)
        if refund is None:
            raise NotFound(detail=NOT_ENDED_EARLY)
        receipts = customer_order_receipt_numbers(customer_id=request.user.pk, order_id=order.pk)
        context = {"refund_receipt": receipts.get(TransactionKind.REFUND)}
        return Response(RefundSerializer(refund, context=context).data)
