"""The webhooks' API under /api/v1/ (included by api/urls.py; names in the `api` namespace)."""

from django.urls import path

from .views import api

urlpatterns = [
    path(
        "webhooks/endpoints/",
        api.EndpointListView.as_view(),
        name="webhook_endpoints",
    ),
    path(
        "webhooks/endpoints/<int:endpoint_id>/",
        api.EndpointDetailView.as_view(),
        name="webhook_endpoint",
    ),
    path(
        "webhooks/endpoints/<int:endpoint_id>/deliveries/",
        api.EndpointDeliveriesView.as_view(),
        name="webhook_deliveries",
    ),
    path(
        "webhooks/deliveries/<int:delivery_id>/redeliver/",
        api.RedeliverView.as_view(),
        name="webhook_redeliver",
    ),
]
