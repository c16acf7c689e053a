"""What every resource view shares: the owner's 404 and the balance's shortfall.

Refusals of the services (RentalError, PaymentError, PilotError) are not caught here: they
reach api.problems, which answers each with its message (409 for the state, 400 for input).
The schema's problem responses are added to every operation by api.schema.
"""

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import NotFound

from api.problems import Problem, problem
from payments.exceptions import InsufficientBalance

NO_ORDER = gettext_lazy("No such order in your account.")
NO_PAYMENT = gettext_lazy("No such payment in your account.")


def no_order() -> NotFound:
    return NotFound(detail=NO_ORDER)


def no_payment() -> NotFound:
    return NotFound(detail=NO_PAYMENT)


def shortfall(exc: InsufficientBalance) -> Problem:
    """The balance's refusal, saying how much is missing."""
    missing = exc.required - exc.available
    detail = _("%(message)s %(missing)s USD are missing.") % {
        "message": exc.message,
        "missing": f"{missing:.2f}",
    }
    return problem(409, _("Insufficient balance"), detail, "insufficient-balance")
