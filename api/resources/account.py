"""The account: its USD balance, the statement, and the SSH key saved for the next orders."""

from decimal import Decimal

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import services as account_services
from accounts.forms import SshKeyForm
from accounts.ssh_keys import stored_ssh_key
from api.idempotency import idempotent
from api.pagination import CursorPagination
from payments.ledger.selectors.statement import (
    customer_balance_account,
    customer_statement_between,
)

from . import examples
from .filters import DATE_PARAMETERS, list_filters
from .input import bind
from .serializers import (
    BalanceSerializer,
    SshKeyRequest,
    SshKeySerializer,
    StatementEntrySerializer,
)


class BalanceDetail(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="balance_retrieve",
        summary="The USD balance",
        responses={200: BalanceSerializer},
    )
    def get(self, request):
        account = customer_balance_account(customer=request.user)
        balance = account.balance if account else Decimal("0.00")
        return Response(BalanceSerializer({"balance_usd": balance}).data)


class StatementPagination(CursorPagination):
    # The entry's place in the whole statement: a window over every entry of the customer,
    # so the cursor's filter wraps the query and every page keeps true running balances.
    ordering = ("-sequence",)


class StatementList(generics.ListAPIView):
    required_scopes = {"GET": "read"}
    serializer_class = StatementEntrySerializer
    pagination_class = StatementPagination

    def get_queryset(self):
        filters = list_filters(self.request)
        return customer_statement_between(
            customer=self.request.user,
            created_after=filters.created_after,
            created_before=filters.created_before,
        )

    @extend_schema(
        operation_id="balance_statement_list",
        summary="The balance's ledger entries, newest first, each with the running balance",
        description=(
            "Running balances are those of the whole statement, also on a page of a date range."
        ),
        parameters=DATE_PARAMETERS,
        responses={200: StatementEntrySerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


def _saved_key(user) -> dict:
    key = stored_ssh_key(user.ssh_public_key)
    return SshKeySerializer(
        {
            "line": key.line if key else "",
            "fingerprint": key.fingerprint if key else None,
            "key_type": key.key_type if key else None,
        }
    ).data


class AccountSshKey(APIView):
    required_scopes = {"GET": "read", "PUT": "order", "DELETE": "order"}

    @extend_schema(
        operation_id="account_ssh_key_retrieve",
        summary="The SSH public key saved on the account for the next orders",
        responses={200: SshKeySerializer},
    )
    def get(self, request):
        return Response(_saved_key(request.user))

    @extend_schema(
        operation_id="account_ssh_key_update",
        summary="Save the account's SSH public key; an empty key removes it",
        request=SshKeyRequest,
        examples=examples.SSH_KEY_BODY,
        responses={200: SshKeySerializer},
    )
    @idempotent
    def put(self, request):
        # An empty key removes the saved one; a body without the field removes nothing.
        form = bind(
            SshKeyRequest,
            request.data,
            lambda data: SshKeyForm(data, required="ssh_public_key" not in data),
        )
        key = form.cleaned_data["ssh_public_key"]
        account_services.user_set_ssh_key(user=request.user, text=key.line if key else "")
        return Response(_saved_key(request.user))

    @extend_schema(
        operation_id="account_ssh_key_destroy",
        summary="Remove the account's saved SSH public key (orders keep the key they were given)",
        responses={204: OpenApiResponse(description="Removed (or there was none).")},
    )
    def delete(self, request):
        account_services.user_set_ssh_key(user=request.user, text="")
        return Response(status=status.HTTP_204_NO_CONTENT)
