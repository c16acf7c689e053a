from django.urls import path

from . import views

app_name = "accounts"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("ssh-key/", views.ssh_key, name="ssh_key"),
    path("billing/", views.billing, name="billing"),
]
