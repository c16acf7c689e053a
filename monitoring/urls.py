from config.lazy_views import path, views_in

views = views_in("monitoring.views")  # imported by its first request (config/lazy_views.py)

app_name = "monitoring"

urlpatterns = [
    path("ops/health/", views.ops_health, name="ops_health"),
]
