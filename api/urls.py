"""/api/v1/: the schema, its docs page, the catalogue and quote, then the resources' and
the webhooks' endpoints. Anything else under /api/ answers a 404 problem."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView

# schema and schema_fields register the Bearer scheme and our field types with drf-spectacular:
# here, not in the app's ready(), since this module is imported by the first request under /api/
# and by the schema's generation (which walks the URLconf), never by a worker that serves only
# pages (config/deferred.py).
from . import problems, schema, schema_fields, views_catalogue, views_docs  # noqa: F401

app_name = "api"

v1 = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", views_docs.docs, name="docs"),
    path("catalogue/", views_catalogue.CatalogueView.as_view(), name="catalogue"),
    path("quote/", views_catalogue.QuoteView.as_view(), name="quote"),
    path("", include("api.resources.urls")),
    path("", include("api.webhooks.urls")),
]

urlpatterns = [
    path("v1/", include(v1)),
    # Last: an unknown address under /api/ is a problem+json 404 (also with DEBUG on).
    re_path(r"^.*$", problems.not_found_view, name="not_found"),
]
