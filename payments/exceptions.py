from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from rental.exceptions import RentalError


class PaymentError(RentalError):
    """A payment rule refused the request; `message` is shown to the user."""

    message = _("This payment cannot be made.")


class InsufficientBalance(PaymentError):
    def __init__(self, *, available, required):
        self.available = available
        self.required = required
        super().__init__(
            gettext(
                "The balance is %(available)s USD; %(required)s USD are needed. "
                "Nothing was charged."
            )
            % {"available": available, "required": required}
        )


class OrderNotPayable(PaymentError):
    message = _("This order is no longer awaiting payment.")


class IdempotencyConflict(PaymentError):
    message = _(
        "This form was already sent with other values; nothing new was posted. "
        "Open a new form for another operation."
    )


class PaymentNotDeclarable(PaymentError):
    message = _(
        "This payment is already settled or closed: there is nothing to declare. "
        "Its status on this page is the outcome."
    )
