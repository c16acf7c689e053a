from django.utils.translation import gettext_lazy as _


class RentalError(Exception):
    """A rule of the rental domain refused the request; `message` is shown to the user."""

    message = _("This request cannot be completed.")

    def __init__(self, message=None):
        if message is not None:
            self.message = message
        super().__init__(str(self.message))


class ModelUnavailable(RentalError):
    message = _("This GPU model is not available for ordering.")


class PriceUnavailable(RentalError):
    message = _("This GPU model has no price for the chosen duration.")


class InsufficientStock(RentalError):
    def __init__(self, *, requested: int, available: int):
        self.requested = requested
        self.available = available
        super().__init__(
            _(
                "Only %(available)d lot(s) of this model are available right now; "
                "you asked for %(requested)d. Choose fewer lots or another model."
            )
            % {"available": available, "requested": requested}
        )


class InvalidTransition(RentalError):
    message = _("This order cannot change to that status now.")


class OrderNotCancellable(InvalidTransition):
    message = _("Only an order awaiting payment can be cancelled.")
