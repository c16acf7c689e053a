"""The payment page's QR code is drawn once per EIP-681 request and process (issue 24: drawing
it was half the page's time), and never shown for another request than the page's own."""

import html as html_lib
import re

import segno
from django.urls import reverse

from payments.crypto.selectors.payment_page import payment_qr_svg

from .conftest import TOKEN


def page(client, payment) -> str:
    url = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})
    return client.get(url).content.decode()


def qr_of(html: str) -> str:
    return re.search(r"<svg .*?</svg>", html, re.S).group(0)


def drawn(uri: str) -> str:
    return segno.make(uri, error="m", micro=False).svg_inline(
        scale=4, light="#fff", svgclass="payment-qr"
    )


def test_each_page_shows_its_own_requests_code_drawn_once(customer_client, payment, top_up):
    payment_qr_svg.cache_clear()
    first = page(customer_client, payment)
    again = page(customer_client, payment)
    small = top_up("50.00")
    other = page(customer_client, small)

    address = payment.deposit_address.address
    uri = f"ethereum:{TOKEN}@31337/transfer?address={address}&uint256=893760000"
    assert uri in html_lib.unescape(first)
    # The code the customer scans is the drawing of this page's request, on every visit.
    assert qr_of(first) == qr_of(again) == drawn(uri)
    # Another payment (another address, another amount) gets the drawing of its own request.
    other_uri = (
        f"ethereum:{TOKEN}@31337/transfer?address={small.deposit_address.address}&uint256=50000000"
    )
    assert qr_of(other) == drawn(other_uri) != qr_of(first)
    # Drawn once per request: the second visit is the first's kept content (payments_tags'
    # `kept`: the payment's state is the same), which holds the first's drawing.
    info = payment_qr_svg.cache_info()
    assert (info.misses, info.hits) == (2, 0)
