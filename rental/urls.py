from django.urls import path

from . import views

app_name = "rental"

urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("configure/", views.configure, name="configure"),
    path("order/review/", views.review, name="review"),
    path("order/confirm/", views.confirm, name="confirm"),
    path("account/orders/", views.order_list, name="order_list"),
    path("account/orders/<int:order_id>/", views.order_detail, name="order_detail"),
    path("account/orders/<int:order_id>/cancel/", views.order_cancel, name="order_cancel"),
]
