"""Shapes shared by the API's responses: money as strings with 2 decimals, in USD."""

from rest_framework import serializers

from rental.models import Duration, Preparation


class UsdField(serializers.DecimalField):
    """ "893.76": a string with 2 decimals, never a float."""

    def __init__(self, **kwargs):
        kwargs.setdefault("read_only", True)
        super().__init__(max_digits=14, decimal_places=2, coerce_to_string=True, **kwargs)


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
