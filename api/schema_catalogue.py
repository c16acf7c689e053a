"""The catalogue's GPU models in the schema: as examples, never as an enum.

GPU models are rows an operator adds or retires without a release; an enum would make the
schema change with the data, and a client generated yesterday would fail to read an order of
a model added today (generated enums reject unknown values). So `gpu_model` stays a slug
(string, pattern, length), and this postprocessing hook gives it the active models' slugs,
read when the schema is served, as examples: documentation, and valid values for fuzzers.
A schema generated outside a request (`manage.py spectacular` in a build, where there may be
no database) has the demo catalogue's slugs.
"""

import logging

from django.db import DatabaseError

from rental.models import GpuModel

FIELD = "gpu_model"
DEMO_SLUGS = ["h100-80gb", "h200-141gb", "b200-180gb", "mi300x-192gb"]

logger = logging.getLogger(__name__)


def catalogue_slugs() -> list[str]:
    try:
        slugs = list(
            GpuModel.objects.filter(active=True).order_by("pk").values_list("slug", flat=True)
        )
    except DatabaseError:  # no database where the schema is built
        logger.info("schema: no catalogue to read; the demo slugs are the examples")
        return DEMO_SLUGS
    return slugs or DEMO_SLUGS


def add_catalogue_examples(result, generator, request, public):
    """SPECTACULAR_SETTINGS POSTPROCESSING_HOOKS."""
    slugs = None if request is not None else DEMO_SLUGS
    for component in result.get("components", {}).get("schemas", {}).values():
        field = component.get("properties", {}).get(FIELD)
        if field is not None and field.get("type") == "string":
            slugs = slugs if slugs is not None else catalogue_slugs()
            field["examples"] = slugs
    return result
