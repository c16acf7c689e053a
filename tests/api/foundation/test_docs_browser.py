"""In Chromium: the docs page renders Swagger UI under the site's CSP; the token page fits a
phone."""

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_swagger_ui_renders_the_schema_without_csp_violations(new_page):
    page = new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto("/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "GPU rental API" in page.inner_text(".swagger-ui .info .title")
    page.wait_for_selector("text=/api/v1/quote/")
    assert page.csp_violations == []
    base = page.url.split("/api/")[0]
    assert requests and all(url.startswith(base) or url.startswith("data:") for url in requests)


def test_the_token_page_fits_a_phone(new_page, customer, live_server):
    page = new_page(viewport={"width": 360, "height": 740})
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/account/")
    page.get_by_role("link", name="API tokens").click()
    page.fill("input[name=name]", "phone")
    page.check("input[name=scopes][value=read]")
    page.get_by_role("button", name="Create token").click()
    token = page.input_value("#new-token")
    assert token.startswith("gr_")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360
    assert page.csp_violations == []
