"""Browsers ask for /favicon.ico: the site's icon answers, not a 404 (issue 23)."""

from urllib.request import urlopen

from django.templatetags.static import static
from django.urls import reverse


def test_favicon_ico_redirects_for_good_to_the_committed_icon(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 302  # the static name is hashed: never a permanent one
    assert response["Location"] == static("favicon.svg")


def test_a_browser_asking_for_favicon_ico_gets_an_svg(live_server):
    with urlopen(f"{live_server.url}/favicon.ico") as response:  # follows the redirect
        assert response.status == 200
        assert response.url == f"{live_server.url}{static('favicon.svg')}"
        assert response.headers["Content-Type"] == "image/svg+xml"
        assert b"<svg" in response.read()


def test_every_page_names_the_icon(client, db):
    html = client.get(reverse("rental:catalogue")).content.decode()
    assert f'<link rel="icon" href="{static("favicon.svg")}" type="image/svg+xml">' in html
