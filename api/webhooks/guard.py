"""The address guard: webhooks never reach into our own network.

In production (WEBHOOK_ALLOW_PRIVATE_ADDRESSES off) a URL is refused when its host is, or
resolves to, any address that is loopback, private, link-local, site-local, multicast, reserved or
unspecified (IPv4 and IPv6, IPv4-mapped IPv6 judged as the IPv4 inside). Every address
getaddrinfo returns must pass, and the delivery connects to one of those checked addresses
(never resolving again), so a DNS answer that changes between check and connect cannot
slip through. Checked when an endpoint is saved and again at every delivery. The lookup has
a time limit (getaddrinfo has none of its own): a slow DNS answer is a refusal.
"""

import ipaddress
import queue
import socket
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext_lazy as _

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
ALLOWED_SCHEMES = ("http", "https")
MAX_URL_LENGTH = 500
RESOLVE_TIMEOUT_SECONDS = 5.0


class AddressRefused(Exception):
    """The URL may not be delivered to; `message` says why (translatable)."""

    def __init__(self, message):
        self.message = message
        super().__init__(str(message))


@dataclass(frozen=True, slots=True)
class Target:
    scheme: str
    host: str  # as written in the URL (for the Host header and TLS)
    port: int
    path: str  # path and query
    addresses: tuple[str, ...]  # checked, in getaddrinfo's order

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


def is_forbidden(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None and is_forbidden(mapped):
            return True
        if address.teredo is not None or address.is_site_local:
            return True
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def parse(url: str) -> tuple[str, str, int, str]:
    """Scheme, host, port, path of an http(s) URL; AddressRefused when it is not one."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise AddressRefused(_("Enter an http or https URL of at most 500 characters."))
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise AddressRefused(_("This URL is not valid.")) from None
    if parts.scheme not in ALLOWED_SCHEMES:
        raise AddressRefused(_("Only http and https URLs can receive webhooks."))
    if not parts.hostname:
        raise AddressRefused(_("This URL has no host."))
    if parts.username is not None or parts.password is not None:
        raise AddressRefused(_("A webhook URL cannot carry a user name or password."))
    if not url.isascii():
        raise AddressRefused(_("Write the host name in ASCII (punycode)."))
    default = 443 if parts.scheme == "https" else 80
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.scheme, parts.hostname, port or default, path


def _getaddrinfo(host: str, port: int, timeout: float) -> list:
    """getaddrinfo in a daemon thread, waited for at most `timeout` seconds (a lookup that
    hangs is left to finish on its own)."""
    answer: queue.Queue = queue.Queue(maxsize=1)

    def lookup() -> None:
        try:
            answer.put(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (UnicodeError, OSError) as exc:
            answer.put(exc)

    threading.Thread(target=lookup, daemon=True, name="webhook-dns").start()
    try:
        found = answer.get(timeout=max(timeout, 0.001))
    except queue.Empty:
        raise AddressRefused(_("The host name of this URL did not resolve in time.")) from None
    if isinstance(found, Exception):
        raise AddressRefused(_("The host name of this URL does not resolve."))
    return found


def resolve(host: str, port: int, *, timeout: float = RESOLVE_TIMEOUT_SECONDS) -> tuple[str, ...]:
    infos = _getaddrinfo(host, port, timeout)
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = sockaddr[0].split("%", 1)[0]  # an IPv6 zone id
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise AddressRefused(_("The host name of this URL does not resolve."))
    return tuple(addresses)


def check(
    url: str, *, allow_private: bool | None = None, timeout: float = RESOLVE_TIMEOUT_SECONDS
) -> Target:
    """The URL's target with its checked addresses; AddressRefused when it may not be used
    (also when the host name does not resolve within `timeout` seconds)."""
    if allow_private is None:
        allow_private = settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES
    scheme, host, port, path = parse(url)
    addresses = resolve(host, port, timeout=timeout)
    if not allow_private:
        for address in addresses:
            if is_forbidden(ipaddress.ip_address(address)):
                raise AddressRefused(
                    _(
                        "This URL points to a private, loopback or otherwise internal address:"
                        " webhooks are only sent to public addresses."
                    )
                )
    return Target(scheme=scheme, host=host, port=port, path=path, addresses=addresses)
