from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from rental.models import GpuModel, Order
from tests.conftest import lots_available, set_stock

CONFIGURE = reverse("rental:configure")
REVIEW = reverse("rental:review")


def field(html: str, name: str) -> str:
    """The text of the summary field `data-field=name` (first occurrence)."""
    marker = f'data-field="{name}"'
    start = html.index(marker)
    start = html.index(">", start) + 1
    return html[start : html.index("</dd>", start)].strip()


def test_configurator_shows_the_live_summary(client, catalogue):
    response = client.get(CONFIGURE, {"gpu_model": "b200-180gb", "duration_days": 7, "lots": 3})
    html = response.content.decode()
    assert response.status_code == 200
    assert field(html, "model") == "B200 180 GB"
    assert field(html, "total-cards") == "6"
    assert field(html, "memory") == "180 GB"
    assert field(html, "total") == "5,745.60 USD"
    assert "1,915.20 USD per lot for 7 days" in field(html, "lot-price")


def test_htmx_request_gets_only_the_summary(client, catalogue):
    response = client.get(
        CONFIGURE,
        {"gpu_model": "h100-80gb", "duration_days": 30, "lots": 2, "preparation": "pytorch"},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<aside id="summary"')
    assert "<form" not in html
    assert field(html, "total") == "3,427.20 USD"
    assert field(html, "preparation") == "PyTorch"


def test_rocm_model_asks_to_check_rocm_support(client, catalogue):
    rocm = client.get(CONFIGURE, {"gpu_model": "mi300x-192gb"}, headers={"HX-Request": "true"})
    cuda = client.get(CONFIGURE, {"gpu_model": "h100-80gb"}, headers={"HX-Request": "true"})
    assert 'data-notice="rocm"' in rocm.content.decode()
    assert 'data-notice="rocm"' not in cuda.content.decode()
    for response in (rocm, cuda):
        html = response.content.decode()
        assert "do not pool their memory" in html
        assert "does not prove that your project" in html


def test_more_lots_than_in_stock_are_flagged_in_the_summary(client, catalogue):
    set_stock(GpuModel.objects.get(slug="h200-141gb"), 2)
    html = client.get(CONFIGURE, {"gpu_model": "h200-141gb", "lots": 5}).content.decode()
    assert "Only 2 lots of this model are available right now." in html


def test_review_for_a_visitor_offers_signup_and_login_that_come_back(client, catalogue):
    params = {
        "gpu_model": "b200-180gb",
        "duration_days": "7",
        "lots": "3",
        "preparation": "blender",
    }
    response = client.get(REVIEW, params)
    html = response.content.decode()
    assert response.status_code == 200
    assert field(html, "total") == "5,745.60 USD"
    for name in ("account_signup", "account_login"):
        start = html.index(f'href="{reverse(name)}?')
        href = html[start + 6 : html.index('"', start + 6)].replace("&amp;", "&")
        next_url = parse_qs(urlsplit(href).query)["next"][0]
        assert urlsplit(next_url).path == REVIEW
        assert {k: v[0] for k, v in parse_qs(urlsplit(next_url).query).items()} == params
    assert "Confirm order" not in html


def test_review_warns_before_confirming_more_lots_than_in_stock(customer_client, catalogue):
    set_stock(GpuModel.objects.get(slug="b200-180gb"), 1)
    html = customer_client.get(
        REVIEW, {"gpu_model": "b200-180gb", "duration_days": 7, "lots": 2, "preparation": "ubuntu"}
    ).content.decode()
    assert "Only 1 lot of this model is available right now." in html


def test_review_for_a_customer_shows_name_and_email(customer_client, catalogue):
    html = customer_client.get(
        REVIEW, {"gpu_model": "h100-80gb", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
    ).content.decode()
    assert field(html, "customer-name") == "Grace Hopper"
    assert field(html, "customer-email") == "grace@example.com"
    assert "Confirm order · 201.60 USD" in html


def test_confirming_creates_the_order_and_shows_it_awaiting_payment(
    customer_client, customer, catalogue
):
    response = customer_client.post(
        reverse("rental:confirm"),
        {
            "gpu_model": "b200-180gb",
            "duration_days": "7",
            "lots": "3",
            "preparation": "custom",
            "custom_preparation": "JAX 0.4 with CUDA 12",
        },
        follow=True,
    )
    order = Order.objects.get()
    assert response.redirect_chain[-1][0] == reverse(
        "rental:order_detail", kwargs={"order_id": order.pk}
    )
    html = response.content.decode()
    assert "Awaiting payment" in html
    assert field(html, "total-cards") == "6"
    assert field(html, "total") == "5,745.60 USD"
    assert "JAX 0.4 with CUDA 12" in html
    assert order.customer == customer


def test_posted_price_and_total_fields_are_ignored(customer_client, catalogue):
    customer_client.post(
        reverse("rental:confirm"),
        {
            "gpu_model": "h200-141gb",
            "duration_days": "7",
            "lots": "2",
            "preparation": "ubuntu",
            "lot_price_usd": "0.01",
            "total_usd": "0.02",
            "price": "1",
            "total_cards": "99",
        },
    )
    order = Order.objects.get()
    assert (str(order.lot_price_usd), str(order.total_usd), order.total_cards) == (
        "606.48",
        "1212.96",
        2,
    )


def test_a_visitor_confirming_is_sent_to_log_in_and_back_to_the_review(client, catalogue):
    data = {"gpu_model": "h100-80gb", "duration_days": "7", "lots": "2", "preparation": "ubuntu"}
    response = client.post(reverse("rental:confirm"), data)
    assert response.status_code == 302
    login = urlsplit(response["Location"])
    assert login.path == reverse("account_login")
    next_url = urlsplit(parse_qs(login.query)["next"][0])
    assert next_url.path == REVIEW
    assert {k: v[0] for k, v in parse_qs(next_url.query).items()} == data
    assert Order.objects.count() == 0


def test_an_order_larger_than_the_stock_is_refused_with_a_clear_message(customer_client, catalogue):
    set_stock(GpuModel.objects.get(slug="h100-80gb"), 1)
    response = customer_client.post(
        reverse("rental:confirm"),
        {"gpu_model": "h100-80gb", "duration_days": "7", "lots": "2", "preparation": "ubuntu"},
    )
    assert response.status_code == 409
    assert (
        "Only 1 lot of this model is available right now; you asked for 2. "
        "Choose fewer lots or another model." in response.content.decode()
    )
    assert Order.objects.count() == 0
    assert lots_available(GpuModel.objects.get(slug="h100-80gb")) == 1


VALID = {"gpu_model": "h100-80gb", "duration_days": "7", "lots": "2", "preparation": "ubuntu"}
BAD_INPUT = [
    ({"lots": "0"}, "lots", "Enter a whole number of lots from 1 to 10."),
    ({"lots": "11"}, "lots", "Enter a whole number of lots from 1 to 10."),
    ({"lots": "-1"}, "lots", "Enter a whole number of lots from 1 to 10."),
    ({"lots": "2.5"}, "lots", "Enter a whole number of lots from 1 to 10."),
    ({"lots": "abc"}, "lots", "Enter a whole number of lots from 1 to 10."),
    ({"lots": ""}, "lots", "Enter a whole number of lots from 1 to 10."),
    ({"duration_days": "5"}, "duration_days", "Choose a duration of 3, 7 or 30 days."),
    ({"duration_days": "seven"}, "duration_days", "Choose a duration of 3, 7 or 30 days."),
    ({"gpu_model": "a100-40gb"}, "gpu_model", "Choose a GPU model from the catalogue."),
    (
        {"gpu_model": "mi300x-192gb"},
        "gpu_model",
        "Choose a GPU model from the catalogue.",
    ),  # made inactive below
    (
        {"preparation": "windows"},
        "preparation",
        "Choose a preparation: Ubuntu, PyTorch, Blender or Custom.",
    ),
    (
        {"preparation": "custom"},
        "custom_preparation",
        "Describe what must be installed for a custom preparation.",
    ),
    (
        {"preparation": "custom", "custom_preparation": "   "},
        "custom_preparation",
        "Describe what must be installed for a custom preparation.",
    ),
    (
        {"preparation": "custom", "custom_preparation": "x" * 2001},
        "custom_preparation",
        "Keep the description to 2000 characters (it has 2001).",
    ),
]


@pytest.mark.parametrize(("change", "field_name", "message"), BAD_INPUT)
def test_bad_input_on_confirm_gets_a_field_message_400_and_creates_nothing(
    customer_client, catalogue, change, field_name, message
):
    GpuModel.objects.filter(slug="mi300x-192gb").update(active=False)
    stock = {model.slug: lots_available(model) for model in GpuModel.objects.all()}

    response = customer_client.post(reverse("rental:confirm"), {**VALID, **change})

    assert response.status_code == 400
    html = response.content.decode()
    error_list = html[html.index(f'id="id_{field_name}_error"') :]
    assert message in error_list[: error_list.index("</ul>")]
    assert Order.objects.count() == 0
    assert {model.slug: lots_available(model) for model in GpuModel.objects.all()} == stock


@pytest.mark.parametrize(("change", "field_name", "message"), BAD_INPUT)
def test_bad_input_on_review_gets_the_same_messages(
    customer_client, catalogue, change, field_name, message
):
    GpuModel.objects.filter(slug="mi300x-192gb").update(active=False)
    response = customer_client.get(REVIEW, {**VALID, **change})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert "Confirm order" not in response.content.decode()


def test_missing_csrf_token_is_refused_with_a_clear_page_and_creates_nothing(customer, catalogue):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    response = client.post(reverse("rental:confirm"), VALID)
    assert response.status_code == 403
    assert "This form has expired or was not sent from this site" in response.content.decode()
    assert Order.objects.count() == 0


def test_confirm_only_accepts_post(customer_client, catalogue):
    assert customer_client.get(reverse("rental:confirm"), VALID).status_code == 405
    assert Order.objects.count() == 0


def test_the_total_beside_the_button_follows_the_summary(client, catalogue):
    params = {"gpu_model": "b200-180gb", "duration_days": 7, "lots": 3}
    page = client.get(CONFIGURE, params).content.decode()
    partial = client.get(CONFIGURE, params, headers={"HX-Request": "true"}).content.decode()
    assert "5,745.60 USD for 6 cards" in page
    assert (
        'id="total-line" class="total-line" data-field="total-line" hx-swap-oob="true"' in partial
    )
    assert "5,745.60 USD for 6 cards" in partial
