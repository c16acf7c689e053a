"""/account/api-tokens/: the customer's API tokens (included by config/urls.py)."""

from django.urls import path

from . import views_tokens

app_name = "api_tokens"

urlpatterns = [
    path("", views_tokens.token_list, name="list"),
    path("new/", views_tokens.token_new, name="create"),
    path("<str:token_id>/revoke/", views_tokens.token_revoke_view, name="revoke"),
]
