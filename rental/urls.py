from config.lazy_views import path, views_in

# Views imported by the first request each answers (config/lazy_views.py).
customer = views_in("rental.views.customer")
extensions = views_in("rental.views.extensions")
ops = views_in("rental.views.ops")

app_name = "rental"

urlpatterns = [
    path("", customer.catalogue, name="catalogue"),
    path("configure/", customer.configure, name="configure"),
    path("help/", customer.help_page, name="help"),
    path("order/review/", customer.review, name="review"),
    path("order/confirm/", customer.confirm, name="confirm"),
    path("account/orders/", customer.order_list, name="order_list"),
    path("account/orders/<int:order_id>/", customer.order_detail, name="order_detail"),
    path("account/orders/<int:order_id>/ssh-key/", customer.order_ssh_key, name="order_ssh_key"),
    path("account/orders/<int:order_id>/status/", customer.order_status, name="order_status"),
    path("account/orders/<int:order_id>/extend/", extensions.order_extend, name="order_extend"),
    # Operators (group "operators"): inventory, provisioning and teardown.
    path("ops/hosts/", ops.host_list, name="ops_hosts"),
    path("ops/hosts/new/", ops.host_create, name="ops_host_create"),
    path("ops/hosts/<int:host_id>/", ops.host_edit, name="ops_host"),
    path("ops/hosts/<int:host_id>/<slug:action>/", ops.host_action, name="ops_host_action"),
    path("ops/fleet/", ops.fleet, name="ops_fleet"),
    path("ops/provisioning/", ops.provisioning_queue, name="ops_provisioning"),
    path("ops/teardown/", ops.teardown_queue, name="ops_teardown"),
    path(
        "ops/tenancies/<int:tenancy_id>/<slug:action>/",
        ops.tenancy_action,
        name="ops_tenancy_action",
    ),
    path("ops/orders/<int:order_id>/", ops.order_detail, name="ops_order"),
    path("ops/orders/<int:order_id>/<slug:action>/", ops.order_action, name="ops_order_action"),
]
