from django.urls import path

from . import views

app_name = "monitoring"

urlpatterns = [
    path("ops/health/", views.ops_health, name="ops_health"),
]
