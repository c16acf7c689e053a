from config.lazy_views import path, views_in

views = views_in("accounts.views")  # imported by its first request (config/lazy_views.py)

app_name = "accounts"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("ssh-key/", views.ssh_key, name="ssh_key"),
    path("billing/", views.billing, name="billing"),
]
