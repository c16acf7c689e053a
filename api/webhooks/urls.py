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
        "webhooks/endpoints/<int:endpoint_id>/rotate-secret/",
        api.RotateSecretView.as_view(),
        name="webhook_rotate_secret",
    ),
    path(
        "webhooks/endpoints/<int:endpoint_id>/ping/",
        api.PingView.as_view(),
        name="webhook_ping",
    ),
    path(
        "webhooks/endpoints/<int:endpoint_id>/replay/",
        api.ReplayView.as_view(),
        name="webhook_replay",
    ),
    path("events/", api.EventListView.as_view(), name="events"),
    path(
        "webhooks/deliveries/<int:delivery_id>/redeliver/",
        api.RedeliverView.as_view(),
        name="webhook_redeliver",
    ),
]
