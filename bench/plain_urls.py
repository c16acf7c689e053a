"""URLs of bench/plain_pages.py: the application's own, plus the plain peers of the customer
pages under /_plain/ (bench/plain_views.py; never served outside the bench)."""

from django.urls import include, path

from . import plain_views

urlpatterns = [
    path("_plain/", plain_views.catalogue),
    path("_plain/configure/", plain_views.configure),
    path("_plain/orders/", plain_views.order_list),
    path("_plain/orders/<int:order_id>/", plain_views.order_detail),
    path("_plain/payments/<int:payment_id>/", plain_views.payment_detail),
    path("_plain/balance/", plain_views.statement),
    path("_plain/receipts/", plain_views.receipt_list),
    path("", include("config.urls")),
]
