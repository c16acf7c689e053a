"""Shapes shared by the API's responses and requests: money as strings with 2 decimals, in
USD; chain addresses, transaction hashes and token amounts as the strings they are. Each says
in the schema what it holds (api.schema_fields): a pattern, its bounds, an example."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rental.models import Duration, Preparation

EVM_ADDRESS_PATTERN = r"^0x[0-9a-fA-F]{40}$"
TX_HASH_PATTERN = r"^0x[0-9a-fA-F]{64}$"


class UsdField(serializers.DecimalField):
    """ "893.76": a string with 2 decimals, never a float. Not negative unless `signed` (a
    statement's debits); a request's `max_value` is in the schema's pattern."""

    def __init__(self, *, signed: bool = False, **kwargs):
        kwargs.setdefault("read_only", True)
        self.signed = signed
        super().__init__(max_digits=14, decimal_places=2, coerce_to_string=True, **kwargs)


@extend_schema_field(
    {
        "type": "string",
        "pattern": EVM_ADDRESS_PATTERN,
        "examples": ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"],
    }
)
class EvmAddressField(serializers.CharField):
    """An EVM address: 0x and 40 hexadecimal characters (checksummed case)."""


@extend_schema_field({"type": "string", "pattern": TX_HASH_PATTERN, "examples": ["0x" + "ab" * 32]})
class TxHashField(serializers.CharField):
    """A transaction's hash: 0x and 64 hexadecimal characters."""


@extend_schema_field({"type": "string", "pattern": r"^[0-9]+$", "examples": ["893760000"]})
class TokenUnitsField(serializers.CharField):
    """A token amount in base units, as a string of digits (it may exceed 2**53)."""


@extend_schema_field(
    {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)?$", "examples": ["893.760000"]}
)
class TokenAmountField(serializers.CharField):
    """A token amount with all the token's decimals."""


class LotPriceSerializer(serializers.Serializer):
    duration_days = serializers.ChoiceField(choices=Duration.choices)
    lot_price_usd = UsdField(source="price_usd")


class CatalogueModelSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    vendor = serializers.CharField()
    compute_platform = serializers.CharField()
    memory_gb_per_card = serializers.IntegerField()
    cards_per_lot = serializers.IntegerField()
    description = serializers.CharField()
    lots_available = serializers.IntegerField()
    prices = LotPriceSerializer(source="lot_prices.all", many=True)


class CatalogueSerializer(serializers.Serializer):
    currency = serializers.CharField(default="USD")
    models = CatalogueModelSerializer(many=True)


class ConfigurationSerializer(serializers.Serializer):
    """For the schema only: rental.forms.OrderConfigurationForm validates the request, as it
    does the configurator's."""

    gpu_model = serializers.SlugField(help_text="A model's slug from the catalogue.")
    duration_days = serializers.ChoiceField(choices=Duration.choices)
    lots = serializers.IntegerField(min_value=1, max_value=10)
    preparation = serializers.ChoiceField(choices=Preparation.choices)
    custom_preparation = serializers.CharField(
        required=False, allow_blank=True, max_length=2000, help_text="Required for custom."
    )


class QuoteSerializer(serializers.Serializer):
    """What the configurator's summary shows for a configuration."""

    gpu_model = serializers.SlugField(source="gpu_model.slug")
    gpu_model_name = serializers.CharField(source="gpu_model.name")
    duration_days = serializers.IntegerField(source="quote.duration_days")
    lots = serializers.IntegerField(source="quote.lots")
    cards_per_lot = serializers.IntegerField(source="quote.cards_per_lot")
    total_cards = serializers.IntegerField(source="quote.total_cards")
    card_hours = serializers.IntegerField(source="quote.card_hours")
    lot_price_usd = UsdField(source="quote.lot_price_usd")
    total_usd = UsdField(source="quote.total_usd")
    currency = serializers.SerializerMethodField()
    preparation = serializers.CharField(source="configuration.preparation")
    custom_preparation = serializers.CharField(source="configuration.custom_preparation")
    lots_available = serializers.IntegerField()
    exceeds_stock = serializers.BooleanField()
    hold_minutes = serializers.IntegerField()

    def get_currency(self, _summary) -> str:
        return "USD"
