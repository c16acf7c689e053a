import re

import pytest
from django.core import mail
from playwright.sync_api import expect

from rental.models import Order

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-and-unusual-passphrase"


def summary_field(page, name):
    return page.locator(f'[data-field="{name}"]').first


def test_visitor_configures_b200_signs_up_orders_and_finds_it_from_another_browser(
    new_page, catalogue
):
    page = new_page()
    page.goto("/")
    page.get_by_role("button", name="Configure B200 180 GB").click()

    # The summary follows every change without a page reload.
    page.get_by_label("7 days").check()
    page.locator("#id_lots").fill("3")
    page.get_by_label("PyTorch").check()
    expect(summary_field(page, "total-cards")).to_have_text("6")
    expect(summary_field(page, "total")).to_have_text("5,745.60 USD")
    expect(summary_field(page, "lot-price")).to_contain_text("1,915.20 USD per lot for 7 days")
    expect(summary_field(page, "memory")).to_have_text("180 GB")
    expect(summary_field(page, "preparation")).to_have_text("PyTorch")
    expect(page.locator("#total-line")).to_have_text("5,745.60 USD for 6 cards")
    expect(page.locator('[data-notice="multi-card"]')).to_be_visible()
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1

    page.get_by_role("button", name="Review order").click()
    expect(page).to_have_url(re.compile(r"/order/review/\?"))
    expect(summary_field(page, "total")).to_have_text("5,745.60 USD")

    page.get_by_role("button", name="Create an account").click()
    page.locator("#id_first_name").fill("Katherine")
    page.locator("#id_last_name").fill("Johnson")
    page.locator("#id_email").fill("katherine@example.com")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Sign Up").click()
    # The code mailed to the address finishes the sign-up (tests/hardening: no enumeration).
    expect(page).to_have_url(re.compile(r"/accounts/confirm-email/$"))
    (message,) = mail.outbox
    page.locator("#id_code").fill(re.search(r"[A-Z0-9]{4}-[A-Z0-9]{4}", message.body).group())
    page.get_by_role("button", name="Confirm").click()

    # Back on the same review, nothing retyped, details filled in.
    expect(page).to_have_url(re.compile(r"/order/review/\?"))
    expect(summary_field(page, "customer-name")).to_have_text("Katherine Johnson")
    expect(summary_field(page, "customer-email")).to_have_text("katherine@example.com")
    expect(summary_field(page, "total-cards")).to_have_text("6")
    expect(summary_field(page, "preparation")).to_have_text("PyTorch")
    page.get_by_role("button", name=re.compile(r"Confirm order · 5,745.60 USD")).click()

    expect(summary_field(page, "status")).to_have_text("Awaiting payment")
    order = Order.objects.get()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Order {order.reference}")
    assert (order.lots, order.total_cards, str(order.total_usd)) == (3, 6, "5745.60")
    assert page.csp_violations == []

    # Another browser: log in and find the same order with the same summary.
    other = new_page()
    other.goto("/accounts/login/")
    other.locator("#id_login").fill("katherine@example.com")
    other.locator("#id_password").fill(PASSWORD)
    other.get_by_role("button", name="Log in").click()
    other.get_by_role("banner").get_by_role("link", name="My orders").click()
    other.get_by_role("link", name=order.reference).click()
    expect(summary_field(other, "model")).to_have_text("B200 180 GB")
    expect(summary_field(other, "duration")).to_have_text("7 days")
    expect(summary_field(other, "lots")).to_have_text("3")
    expect(summary_field(other, "total-cards")).to_have_text("6")
    expect(summary_field(other, "preparation")).to_have_text("PyTorch")
    expect(summary_field(other, "total")).to_have_text("5,745.60 USD")
    expect(summary_field(other, "status")).to_have_text("Awaiting payment")


def test_custom_preparation_asks_for_a_description_and_rocm_shows_its_warning(new_page, catalogue):
    page = new_page()
    page.goto("/configure/")
    page.locator("#id_gpu_model").select_option("mi300x-192gb")
    expect(page.locator('[data-notice="rocm"]')).to_be_visible()
    expect(page.locator("#custom-preparation")).to_be_hidden()
    page.get_by_label("Custom").check()
    expect(page.locator("#custom-preparation")).to_be_visible()
    expect(page.locator("#summary")).to_contain_text(
        "What must be installed: Describe what must be installed for a custom preparation."
    )
    page.locator("#id_lots").fill("2")
    page.locator("#id_custom_preparation").fill("ROCm 6.2, PyTorch for ROCm, vLLM")
    expect(summary_field(page, "total")).to_have_text("638.40 USD")
    expect(summary_field(page, "preparation")).to_contain_text("ROCm 6.2, PyTorch for ROCm, vLLM")


def test_pages_fit_a_phone_and_switch_to_italian(new_page, catalogue):
    page = new_page(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    for path in ("/", "/configure/?gpu_model=b200-180gb&lots=10", "/accounts/signup/"):
        page.goto(path)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), path
    # Anonymous: the switch is a link (no CSRF token in the layout, so it can be cached whole).
    page.get_by_role("link", name="IT").click()
    expect(page.locator("html")).to_have_attribute("lang", "it")
    expect(page).to_have_url(re.compile(r"/accounts/signup/$"))
    assert page.csp_violations == []
