"""USD amounts as text in the active language ("5,251.60" / "5.251,60"), for messages built
in Python (templates write `floatformat:"2g"`)."""

from decimal import Decimal

from django.utils.formats import number_format

from rental.money import usd


def usd_text(value: Decimal | int | str) -> str:
    """Cents, grouped thousands, the active language's separators."""
    return number_format(usd(value), decimal_pos=2, use_l10n=True, force_grouping=True)
