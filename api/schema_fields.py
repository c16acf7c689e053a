"""How the schema shows the API's own field types (drf-spectacular extensions, registered by
api.apps): USD amounts as decimal strings whose pattern carries their sign and their bounds."""

from decimal import Decimal

from drf_spectacular.extensions import OpenApiSerializerFieldExtension


def usd_pattern(*, signed: bool = False, max_value: Decimal | None = None) -> str:
    """A USD amount with at most 2 decimals: no sign unless `signed`; at most `max_value`
    when it is a power of ten (100000.00: up to 5 whole digits, or exactly the maximum)."""
    sign = "-?" if signed else ""
    cents = r"(?:\.[0-9]{1,2})?"
    if max_value is None:
        return rf"^{sign}[0-9]{{1,12}}{cents}$"
    whole = int(max_value)
    digits = len(str(whole)) - 1
    if max_value != whole or str(whole) != "1" + "0" * digits:
        raise ValueError(f"usd_pattern: give a power of ten as the maximum, not {max_value}")
    return rf"^{sign}(?:[0-9]{{1,{digits}}}{cents}|{whole}(?:\.00?)?)$"


class UsdFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "api.serializers.UsdField"

    def map_serializer_field(self, auto_schema, direction):
        field = self.target
        schema = {
            "type": "string",
            "format": "decimal",
            "pattern": usd_pattern(signed=field.signed, max_value=field.max_value),
            "examples": ["-25.00" if field.signed else "893.76" if field.read_only else "50.00"],
        }
        if field.max_value is not None:
            schema["description"] = f"At most {field.max_value:.2f}."
        return schema
