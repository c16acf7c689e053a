"""Withdrawals of the USD balance: ask for one, list them, follow one.

The body is checked by the withdraw page's form (amount from the minimum up to the balance,
the stablecoin, the wallet address with its EIP-55 checksum) and the request made by its
service, `withdrawal_request`, which checks everything again under the balance's lock. The
page's confirmation step is the page's own (it shows what will happen before sending); a
script sends the request once it has decided. The page asks no second factor of the customer,
so neither does the API; money leaving the site needs the token's own "withdraw" scope, which
no other scope implies.
"""

from decimal import Decimal
from uuid import uuid4

from django.urls import reverse
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from api.idempotency import HEADER as IDEMPOTENCY_HEADER
from api.idempotency import idempotent
from api.pagination import CursorPagination
from payments.ledger.selectors.statement import customer_balance_account
from payments.models import Withdrawal
from payments.withdrawals import services
from payments.withdrawals.forms import WithdrawForm
from payments.withdrawals.selectors import (
    customer_withdrawal_rows,
    customer_withdrawal_view,
    row_views,
)

from .input import bind, stablecoin
from .payments import STABLECOIN_FIELDS
from .serializers_ledger import WithdrawalRequest, WithdrawalSerializer

NO_WITHDRAWAL = gettext_lazy("No such withdrawal in your account.")
WITHDRAW_SCOPE = "withdraw"


def withdrawal_response(request, withdrawal_id: int, code: int = status.HTTP_200_OK) -> Response:
    try:
        view = customer_withdrawal_view(customer=request.user, withdrawal_id=withdrawal_id)
    except Withdrawal.DoesNotExist:
        raise NotFound(detail=NO_WITHDRAWAL) from None
    response = Response(WithdrawalSerializer(view).data, status=code)
    if code == status.HTTP_201_CREATED:
        response["Location"] = reverse(
            "api:withdrawal_detail", kwargs={"withdrawal_id": withdrawal_id}
        )
    return response


def _balance(user) -> Decimal:
    account = customer_balance_account(customer=user)
    return account.balance if account else Decimal("0.00")


def _request_key(request) -> str:
    """The service's own idempotency key: the request's Idempotency-Key when it has one (so a
    replay after the API's 24 hours still withdraws once), else a fresh one."""
    key = request.headers.get(IDEMPOTENCY_HEADER)
    return f"api:{key}" if key else str(uuid4())


class WithdrawalListCreate(generics.ListAPIView):
    required_scopes = {"GET": "read", "POST": WITHDRAW_SCOPE}
    serializer_class = WithdrawalSerializer
    pagination_class = CursorPagination

    def get_queryset(self):
        return customer_withdrawal_rows(customer=self.request.user)

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(WithdrawalSerializer(row_views(page), many=True).data)

    @extend_schema(
        operation_id="withdrawals_list",
        summary="The token owner's withdrawals, newest first",
        responses={200: WithdrawalSerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="withdrawals_create",
        summary="Withdraw USD balance as a stablecoin to your wallet; finance reviews it",
        description=(
            "Needs a token with the `withdraw` scope. The amount is held from the balance at "
            "once; finance approves (or rejects: the amount comes back), sends the transfer "
            "and the worker marks it paid once confirmed on chain. As the withdraw page: from "
            "the minimum withdrawal up to the balance, two decimals at most, an enabled "
            "network and asset, your own wallet's address (not a deposit address of this "
            "site, not the zero address). With an Idempotency-Key, the same request withdraws "
            "once even after the key's 24 hours."
        ),
        request=WithdrawalRequest,
        responses={
            201: OpenApiResponse(WithdrawalSerializer, description="Requested: the amount is held.")
        },
    )
    @idempotent
    def post(self, request):
        form = bind(
            WithdrawalRequest,
            request.data,
            lambda data: WithdrawForm(
                {
                    "amount": data.get("amount"),
                    "stablecoin": stablecoin(data),
                    "to_address": data.get("to_address"),
                    "request_key": str(uuid4()),  # the form's own; the service's is below
                },
                balance=_balance(request.user),
            ),
            fields=STABLECOIN_FIELDS,
        )
        choice = form.cleaned_data["stablecoin"]
        try:
            withdrawal = services.withdrawal_request(
                customer=request.user,
                amount_usd=form.cleaned_data["amount"],
                network=choice.network_key,
                asset=choice.asset_symbol,
                to_address=form.cleaned_data["to_address"],
                request_key=_request_key(request),
            )
        except services.WithdrawalAmountError as exc:
            raise ValidationError({"amount": [str(exc.message)]}) from None
        except services.WithdrawalAddressError as exc:
            raise ValidationError({"to_address": [str(exc.message)]}) from None
        except services.WithdrawalNetworkUnavailable as exc:
            raise ValidationError({"network": [str(exc.message)]}) from None
        return withdrawal_response(request, withdrawal.pk, status.HTTP_201_CREATED)


class WithdrawalDetail(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="withdrawals_retrieve",
        summary="One withdrawal: status, what happens next, its transfer and confirmations",
        responses={200: WithdrawalSerializer},
    )
    def get(self, request, withdrawal_id: int):
        return withdrawal_response(request, withdrawal_id)
