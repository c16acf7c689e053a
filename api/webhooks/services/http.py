"""One webhook POST to an already checked address: short timeouts, no redirects followed,
the response body read up to a cap and discarded."""

import time
from dataclasses import dataclass

from django.conf import settings

from ..guard import Target


@dataclass(frozen=True, slots=True)
class PostResult:
    response_code: int | None
    error: str
    duration_ms: int

    @property
    def succeeded(self) -> bool:
        return self.response_code is not None and 200 <= self.response_code < 300


def post(target: Target, body: bytes, headers: dict[str, str]) -> PostResult:
    """POST to the first of the target's checked addresses that accepts the connection."""
    import urllib3
    from urllib3.exceptions import HTTPError, NewConnectionError

    timeout = urllib3.Timeout(
        connect=settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS, read=settings.WEBHOOK_READ_TIMEOUT_SECONDS
    )
    started = time.monotonic()
    error = ""
    for address in target.addresses:
        options = {"timeout": timeout, "retries": False, "maxsize": 1}
        if target.scheme == "https":
            pool = urllib3.HTTPSConnectionPool(
                address,
                target.port,
                server_hostname=target.host,
                assert_hostname=target.host,
                cert_reqs="CERT_REQUIRED",
                **options,
            )
        else:
            pool = urllib3.HTTPConnectionPool(address, target.port, **options)
        try:
            response = pool.urlopen(
                "POST",
                target.path,
                body=body,
                headers={**headers, "Host": target.host_header},
                redirect=False,
                preload_content=False,
                assert_same_host=False,
            )
            try:
                response.read(settings.WEBHOOK_MAX_RESPONSE_BYTES, decode_content=False)
            finally:
                response.release_conn()
                response.close()
            return PostResult(response.status, "", _elapsed(started))
        except NewConnectionError as exc:
            error = f"connection to {address} failed: {_reason(exc)}"
            continue  # the next address, if any
        except HTTPError as exc:
            return PostResult(None, _reason(exc)[:500], _elapsed(started))
        except OSError as exc:
            return PostResult(None, str(exc)[:500], _elapsed(started))
        finally:
            pool.close()
    return PostResult(None, error[:500], _elapsed(started))


def _reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None)
    return f"{type(exc).__name__}: {reason or exc}"


def _elapsed(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
