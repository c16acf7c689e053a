from decimal import Decimal

import pytest
from django.urls import reverse

from rental.models import GpuModel, LotPrice, Order
from tests.mfa_fixtures import enrol_totp


@pytest.fixture
def admin_client_logged(client, make_customer):
    admin = make_customer(email="ops@example.com", is_staff=True, is_superuser=True)
    enrol_totp(admin)
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
    enrol_totp(operator)
    url = reverse("admin:rental_gpumodel_change", args=[catalogue["h100"].pk])

    client.force_login(operator)
    assert client.get(url).status_code == 200
    assert client.get(reverse("admin:rental_order_changelist")).status_code == 200

    client.force_login(make_customer())
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_the_admin_needs_a_second_factor_and_its_own_login_form_is_not_a_way_around_it(
    client, make_customer, catalogue
):
    """Staff without an authenticator app are sent to set one up; the admin's password-only
    login form is replaced by the site's login, which asks enrolled users for their code."""
    admin = make_customer(email="root@example.com", is_staff=True, is_superuser=True)
    url = reverse("admin:rental_gpumodel_change", args=[catalogue["h100"].pk])

    login = client.get(reverse("admin:login"))
    assert login.status_code == 302
    assert login["Location"].startswith(reverse("account_login"))
    response = client.post(
        reverse("admin:login"), {"username": admin.email, "password": "correct-horse-battery"}
    )
    assert response.status_code == 302 and "_auth_user_id" not in client.session

    client.force_login(admin)
    response = client.get(url, follow=True)
    # The admin sends the staff member to its login, which sends them to set up the app.
    assert [hop for hop, _status in response.redirect_chain[:2]] == [
        f"{reverse('admin:login')}?next={url}",
        reverse("mfa_activate_totp"),
    ]
    assert "The administration needs a second factor" in response.content.decode()

    enrol_totp(admin)
    assert client.get(url).status_code == 200
