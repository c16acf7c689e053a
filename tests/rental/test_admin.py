from decimal import Decimal

import pytest
from django.urls import reverse

from rental.models import GpuModel, LotPrice, Order


@pytest.fixture
def admin_client_logged(client, make_customer):
    admin = make_customer(email="ops@example.com", is_staff=True, is_superuser=True)
    client.force_login(admin)
    return client


def change_form_data(model: GpuModel, *, prices: dict[int, str]) -> dict:
    data = {
        "slug": model.slug,
        "name": model.name,
        "vendor": model.vendor,
        "compute_platform": model.compute_platform,
        "memory_gb_per_card": model.memory_gb_per_card,
        "cards_per_lot": model.cards_per_lot,
        "description": model.description,
        "active": "on",
        "display_order": model.display_order,
        "lot_prices-TOTAL_FORMS": "3",
        "lot_prices-INITIAL_FORMS": "3",
        "lot_prices-MIN_NUM_FORMS": "0",
        "lot_prices-MAX_NUM_FORMS": "3",
    }
    for index, price in enumerate(model.lot_prices.order_by("duration_days")):
        data.update(
            {
                f"lot_prices-{index}-id": price.pk,
                f"lot_prices-{index}-gpu_model": model.pk,
                f"lot_prices-{index}-duration_days": price.duration_days,
                f"lot_prices-{index}-price_usd": prices.get(
                    price.duration_days, str(price.price_usd)
                ),
            }
        )
    return data


def test_an_operator_price_change_never_changes_an_existing_order(
    admin_client_logged, catalogue, customer, place_order
):
    b200 = catalogue["b200"]
    order = place_order(customer, b200, lots=3, duration_days=7)
    url = reverse("admin:rental_gpumodel_change", args=[b200.pk])

    response = admin_client_logged.post(url, change_form_data(b200, prices={7: "2500.00"}))

    assert response.status_code == 302, response.content.decode()[:2000]
    assert LotPrice.objects.get(gpu_model=b200, duration_days=7).price_usd == Decimal("2500.00")
    order.refresh_from_db()
    assert (order.lot_price_usd, order.total_usd) == (Decimal("1915.20"), Decimal("5745.60"))


def test_orders_are_read_only_in_the_admin(admin_client_logged, catalogue, customer, place_order):
    order = place_order(customer, catalogue["h100"])
    url = reverse("admin:rental_order_change", args=[order.pk])
    admin_client_logged.post(url, {"status": "paid", "total_usd": "0.01"})
    order.refresh_from_db()
    assert order.status == "awaiting_payment"
    assert order.total_usd == Decimal("446.88")
    assert Order.objects.count() == 1


def test_operators_edit_the_catalogue_but_customers_cannot(client, make_customer, catalogue):
    from django.contrib.auth.models import Group

    operator = make_customer(is_staff=True)
    operator.groups.add(Group.objects.get(name="operators"))
    url = reverse("admin:rental_gpumodel_change", args=[catalogue["h100"].pk])

    client.force_login(operator)
    assert client.get(url).status_code == 200
    assert client.get(reverse("admin:rental_order_changelist")).status_code == 200

    client.force_login(make_customer())
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
