"""The pilot folder of the customer guide (section 3) and Kernodeck (section 6), per order.

`build_pilot_zip(order=..., language="it"|"en")` returns the bytes of the zip the customer
downloads; the web part serves it. What ships lies under files/ and ../kernodeck/ as plain,
standalone files (Python >= 3.8, standard library only).
"""

from .build import build_pilot_zip

__all__ = ["build_pilot_zip"]
