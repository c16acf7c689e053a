"""The first two endpoints: the catalogue and a quote, the same numbers as the pages."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from rental import selectors, services
from rental.exceptions import PriceUnavailable
from rental.forms import OrderConfigurationForm

from .idempotency import idempotent
from .problems import form_errors, validation_problem
from .resources import examples
from .serializers import CatalogueSerializer, ConfigurationSerializer, QuoteSerializer

QUOTE_FIELDS = frozenset(ConfigurationSerializer().fields)


class CatalogueView(APIView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        operation_id="catalogue",
        summary="The catalogue: GPU models, lot prices per duration, lots available",
        responses={200: CatalogueSerializer},
    )
    def get(self, request):
        data = {"currency": "USD", "models": selectors.catalogue()}
        return Response(CatalogueSerializer(data).data)


class QuoteView(APIView):
    required_scopes = {"POST": "read"}

    @extend_schema(
        operation_id="quote",
        summary="Price a configuration as the configurator's summary does",
        request=ConfigurationSerializer,
        examples=examples.ORDER,
        responses={200: QuoteSerializer},
    )
    @idempotent
    def post(self, request):
        data = request.data
        if not isinstance(data, dict):
            raise validation_problem([], detail=_("Send a JSON object with the configuration."))
        unknown = sorted(set(data) - QUOTE_FIELDS)
        if unknown:
            raise validation_problem(
                [{"field": name, "message": _("Unknown field.")} for name in unknown]
            )
        form = OrderConfigurationForm(data, catalogue=selectors.catalogue())
        if not form.is_valid():
            raise validation_problem(form_errors(form))
        try:
            summary = services.configuration_summary(configuration=form.configuration())
        except PriceUnavailable as exc:
            raise validation_problem([{"field": "duration_days", "message": exc.message}]) from None
        return Response(QuoteSerializer(summary).data)
