"""The account's webhook pages, under /account/webhooks/ (config/urls.py)."""

from config.lazy_views import path, views_in

# Imported by the first request one of them answers (config/lazy_views.py).
pages = views_in("api.webhooks.views.pages")

app_name = "webhooks"

urlpatterns = [
    path("", pages.endpoint_list, name="endpoint_list"),
    path("<int:endpoint_id>/", pages.endpoint_detail, name="endpoint_detail"),
    path("<int:endpoint_id>/enabled/", pages.endpoint_enabled, name="endpoint_enabled"),
    path("<int:endpoint_id>/delete/", pages.endpoint_delete, name="endpoint_delete"),
    path(
        "<int:endpoint_id>/rotate-secret/",
        pages.endpoint_rotate_secret,
        name="endpoint_rotate_secret",
    ),
    path("<int:endpoint_id>/ping/", pages.endpoint_ping, name="endpoint_ping"),
    path(
        "deliveries/<int:delivery_id>/redeliver/",
        pages.delivery_redeliver,
        name="delivery_redeliver",
    ),
]
