"""GET /api/v1/catalogue/ and POST /api/v1/quote/: the numbers the pages show."""

from decimal import Decimal

import pytest

from rental.models import LotPrice
from tests.api.contract import assert_matches_schema
from tests.conftest import lots_available, set_stock

QUOTE = "/api/v1/quote/"


def test_the_catalogue_lists_models_prices_and_stock(api_client, catalogue):
    set_stock(catalogue["h100"], 4)
    response = api_client.get("/api/v1/catalogue/")
    assert response.status_code == 200
    body = assert_matches_schema(response, "get", "/api/v1/catalogue/")
    assert body["currency"] == "USD"
    by_slug = {model["slug"]: model for model in body["models"]}
    h100 = catalogue["h100"]
    entry = by_slug[h100.slug]
    assert entry["lots_available"] == lots_available(h100) == 4
    prices = {
        price.duration_days: f"{price.price_usd:.2f}"
        for price in LotPrice.objects.filter(gpu_model=h100)
    }
    assert {p["duration_days"]: p["lot_price_usd"] for p in entry["prices"]} == prices
    assert by_slug[catalogue["b200"].slug]["cards_per_lot"] == 2


def test_a_quote_has_the_configurators_numbers(api_client, catalogue, client):
    b200 = catalogue["b200"]
    set_stock(b200, 3)
    data = {"gpu_model": b200.slug, "duration_days": 7, "lots": 2, "preparation": "pytorch"}
    response = api_client.post(QUOTE, data)
    assert response.status_code == 200, response.content
    body = assert_matches_schema(response, "post", QUOTE)
    price = LotPrice.objects.get(gpu_model=b200, duration_days=7).price_usd
    assert body["lot_price_usd"] == f"{price:.2f}"
    assert body["total_usd"] == f"{price * 2:.2f}"
    assert Decimal(body["total_usd"]) == Decimal(body["lot_price_usd"]) * 2
    assert (body["lots"], body["total_cards"], body["currency"]) == (2, 4, "USD")
    assert body["lots_available"] == 3 and body["exceeds_stock"] is False
    # The configurator's summary shows the same total.
    page = client.get("/configure/", {**data, "duration_days": "7", "lots": "2"})
    assert f"{price * 2:,.2f} USD" in page.content.decode()


def test_a_quote_above_stock_says_so(api_client, catalogue):
    set_stock(catalogue["h100"], 1)
    data = {
        "gpu_model": catalogue["h100"].slug,
        "duration_days": 3,
        "lots": 5,
        "preparation": "ubuntu",
    }
    body = api_client.post(QUOTE, data).json()
    assert body["exceeds_stock"] is True and body["lots_available"] == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"gpu_model": "no-such-model"}, "gpu_model"),
        ({"duration_days": 5}, "duration_days"),
        ({"duration_days": "٧"}, "duration_days"),
        ({"lots": 0}, "lots"),
        ({"lots": 11}, "lots"),
        ({"lots": "１０"}, "lots"),
        ({"lots": 2.0}, "lots"),
        ({"lots": True}, "lots"),
        ({"lots": "1e1"}, "lots"),
        ({"preparation": "windows"}, "preparation"),
        ({"preparation": "custom"}, "custom_preparation"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_a_400_problem_with_field_errors(api_client, catalogue, change, field):
    data = {
        "gpu_model": catalogue["h100"].slug,
        "duration_days": 7,
        "lots": 1,
        "preparation": "ubuntu",
        **change,
    }
    response = api_client.post(QUOTE, data)
    assert response.status_code == 400
    body = assert_matches_schema(response, "post", QUOTE)
    assert body["type"].endswith("/validation")
    assert field in [error["field"] for error in body["errors"]]
    assert all(error["message"] for error in body["errors"])


def test_a_quote_body_must_be_an_object(api_client, catalogue):
    response = api_client.post(QUOTE, [1, 2], format="json")
    assert response.status_code == 400
    assert_matches_schema(response, "post", QUOTE)


def test_a_model_without_that_duration_is_a_field_error(api_client, catalogue):
    LotPrice.objects.filter(gpu_model=catalogue["h100"], duration_days=30).delete()
    data = {
        "gpu_model": catalogue["h100"].slug,
        "duration_days": 30,
        "lots": 1,
        "preparation": "ubuntu",
    }
    body = api_client.post(QUOTE, data).json()
    assert body["status"] == 400
    assert [error["field"] for error in body["errors"]] == ["duration_days"]


def test_the_quote_replays_with_its_key(api_client, catalogue):
    data = {
        "gpu_model": catalogue["h100"].slug,
        "duration_days": 7,
        "lots": 1,
        "preparation": "ubuntu",
    }
    first = api_client.post(QUOTE, data, HTTP_IDEMPOTENCY_KEY="q1")
    again = api_client.post(QUOTE, data, HTTP_IDEMPOTENCY_KEY="q1")
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert api_client.post(QUOTE, {**data, "lots": 2}, HTTP_IDEMPOTENCY_KEY="q1").status_code == 422
