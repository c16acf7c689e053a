"""The account's billing details (the billing page): read, replace (PUT) or change (PATCH).

Checked by the page's form, saved by the page's service; receipts issued from then on carry
them, receipts already issued keep theirs.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors, services
from accounts.forms import BillingDetailsForm
from api.idempotency import idempotent

from .input import bind

FIELDS = tuple(BillingDetailsForm.base_fields)


def _max_length(name: str) -> int:
    return BillingDetailsForm.base_fields[name].max_length


class BillingRequest(serializers.Serializer):
    """Every field is optional: an empty or (with PUT) missing one is left empty."""

    company_name = serializers.CharField(
        required=False, allow_blank=True, max_length=_max_length("company_name")
    )
    vat_number = serializers.CharField(
        required=False, allow_blank=True, max_length=_max_length("vat_number")
    )
    address = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=_max_length("address"),
        help_text="The billing address; several lines allowed.",
    )


class BillingSerializer(serializers.Serializer):
    company_name = serializers.CharField(allow_blank=True)
    vat_number = serializers.CharField(allow_blank=True)
    address = serializers.CharField(allow_blank=True)
    updated_at = serializers.DateTimeField(
        allow_null=True, help_text="When they were last saved; null when never given."
    )


def _current(user) -> dict:
    details = selectors.billing_details(user=user)
    body = {name: getattr(details, name) if details else "" for name in FIELDS}
    body["updated_at"] = details.updated_at if details else None
    return body


def _save(request, data: dict) -> Response:
    form = bind(BillingRequest, data, BillingDetailsForm)
    services.user_set_billing_details(user=request.user, **form.cleaned_data)
    return Response(BillingSerializer(_current(request.user)).data)


class AccountBilling(APIView):
    required_scopes = {"GET": "read", "PUT": "order", "PATCH": "order"}

    @extend_schema(
        operation_id="account_billing_retrieve",
        summary="The billing details printed on the next receipts (all empty when none)",
        responses={200: BillingSerializer},
    )
    def get(self, request):
        return Response(BillingSerializer(_current(request.user)).data)

    @extend_schema(
        operation_id="account_billing_update",
        summary="Replace the billing details: a field left out is emptied",
        request=BillingRequest,
        responses={200: BillingSerializer},
    )
    @idempotent
    def put(self, request):
        return _save(request, request.data)

    @extend_schema(
        operation_id="account_billing_partial_update",
        summary="Change some billing details: a field left out keeps its value",
        request=BillingRequest,
        responses={200: BillingSerializer},
    )
    def patch(self, request):
        form = bind(BillingRequest, request.data, BillingDetailsForm)
        sent = {name: form.cleaned_data[name] for name in FIELDS if name in request.data}
        services.user_change_billing_details(user=request.user, **sent)
        return Response(BillingSerializer(_current(request.user)).data)
