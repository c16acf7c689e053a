"""The payment history (the payments page's list of crypto payments) and an order's payments,
with filters; each row is the payment page's view of its state
(payments.crypto.selectors.history.payment_rows)."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics

from api.pagination import CursorPagination
from payments.crypto.selectors.history import (
    customer_payments,
    order_condition,
    payment_rows,
    state_condition,
)
from payments.crypto.selectors.state import PaymentState

from .filters import (
    DATE_PARAMETERS,
    ORDER_PARAMETER,
    created_between,
    list_filters,
    status_parameter,
)
from .orders import own_order
from .payments import OrderPaymentCreate
from .serializers_ledger import PaymentSummarySerializer

STATUS_PARAMETER = status_parameter(
    PaymentState.choices, "Only payments in this state (the `status` the answers show)."
)


class _PaymentList(generics.ListAPIView):
    serializer_class = PaymentSummarySerializer
    pagination_class = CursorPagination
    with_order_filter = True

    def payments(self):
        return customer_payments(customer=self.request.user)

    def get_queryset(self):
        filters = list_filters(
            self.request, statuses=PaymentState.values, order=self.with_order_filter
        )
        payments = created_between(self.payments(), filters)
        if filters.status is not None:
            payments = payments.filter(state_condition(filters.status))
        if filters.order_id is not None:
            payments = payments.filter(order_condition(filters.order_id))
        return payments.select_related("deposit_address")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        rows = [row.view for row in payment_rows(page)]
        return self.get_paginated_response(PaymentSummarySerializer(rows, many=True).data)


class PaymentList(_PaymentList):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="payments_list",
        summary="The token owner's crypto payments, newest first (the payment history)",
        parameters=[STATUS_PARAMETER, ORDER_PARAMETER, *DATE_PARAMETERS],
        responses={200: PaymentSummarySerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class OrderPayments(_PaymentList, OrderPaymentCreate):
    """GET: the order's payments (its own and its extensions'); POST: open one
    (OrderPaymentCreate)."""

    required_scopes = {"GET": "read", "POST": "pay"}
    with_order_filter = False

    def payments(self):
        order = own_order(self.request, self.kwargs["order_id"])
        return customer_payments(customer=self.request.user).filter(order_condition(order.pk))

    @extend_schema(
        operation_id="orders_payments_list",
        summary="The order's crypto payments, its extensions' included, newest first",
        parameters=[STATUS_PARAMETER, *DATE_PARAMETERS],
        responses={200: PaymentSummarySerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
