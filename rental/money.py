"""The one place where USD amounts are rounded."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def usd(value: Decimal | int | str) -> Decimal:
    """Quantize an amount to cents. Floats are refused: they cannot hold cents exactly."""
    if isinstance(value, float):
        raise TypeError("USD amounts must be Decimal, int or str, never float.")
    try:
        amount = Decimal(value)
    except InvalidOperation as exc:
        raise ValueError(f"Not an amount: {value!r}") from exc
    if not amount.is_finite():
        raise ValueError(f"Not a finite amount: {value!r}")
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)
