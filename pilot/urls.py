from config.lazy_views import path, views_in

views = views_in("pilot.views")  # imported by its first request (config/lazy_views.py)

app_name = "pilot"

urlpatterns = [
    path(
        "account/orders/<int:order_id>/kit/diagnostics.zip",
        views.kit_diagnostics,
        name="kit_diagnostics",
    ),
    path("account/orders/<int:order_id>/kit/pilot.zip", views.kit_pilot_folder, name="kit_pilot"),
    # diagnose.py --upload (the kit's token; no session)
    path(
        "account/orders/<int:order_id>/kit/reports/",
        views.report_upload_api,
        name="report_upload_api",
    ),
    # The order page's forms
    path(
        "account/orders/<int:order_id>/pilot/reports/",
        views.report_upload_page,
        name="report_upload_page",
    ),
    path(
        "account/orders/<int:order_id>/pilot/decisions/",
        views.decision_record,
        name="decision_record",
    ),
    path(
        "account/orders/<int:order_id>/pilot/configure/",
        views.configure_from_order,
        name="configure_from_order",
    ),
    # Operators
    path("ops/pilot/reports/<int:report_id>.json", views.ops_report_json, name="ops_report_json"),
]
