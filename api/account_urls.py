"""/account/api-tokens/: the customer's API tokens (included by config/urls.py)."""

from config.lazy_views import path, views_in

# Imported by the first request one of them answers (config/lazy_views.py).
views_tokens = views_in("api.views_tokens")

app_name = "api_tokens"

urlpatterns = [
    path("", views_tokens.token_list, name="list"),
    path("new/", views_tokens.token_new, name="create"),
    path("<str:token_id>/revoke/", views_tokens.token_revoke_view, name="revoke"),
]
