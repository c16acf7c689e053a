from django.utils.translation import gettext_lazy as _


class WebhookError(Exception):
    """A webhook rule refused the request; `message` is shown to the user (400 in the API)."""

    message = _("This webhook request cannot be done.")
    status = 400

    def __init__(self, message=None):
        if message is not None:
            self.message = message
        super().__init__(str(self.message))


class InvalidEndpoint(WebhookError):
    """The URL or the events are refused; `field` names which."""

    def __init__(self, message, *, field: str):
        self.field = field
        super().__init__(message)


class EndpointDisabled(WebhookError):
    message = _("This endpoint is disabled: enable it first, then redeliver.")
    status = 409


class TooManyEndpoints(WebhookError):
    message = _("An account can have at most 10 webhook endpoints.")
    status = 409


class AttemptInFlight(WebhookError):
    message = _(
        "An attempt of this delivery is in progress: wait for its result, then redeliver"
        " if it failed."
    )
    status = 409


class ReplayOutOfBounds(WebhookError):
    """`since` is too far back, in the future, or holds too many events; 400."""

    status = 400
