from django.utils.translation import gettext, ngettext
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
        if available <= 0:
            shortage = gettext("No lot of this model is available right now.")
        else:
            shortage = ngettext(
                "Only %(available)d lot of this model is available right now; "
                "you asked for %(requested)d.",
                "Only %(available)d lots of this model are available right now; "
                "you asked for %(requested)d.",
                available,
            ) % {"available": available, "requested": requested}
        advice = gettext("Choose fewer lots or another model.")
        super().__init__(f"{shortage} {advice}")


class TooManyUnpaidOrders(RentalError):
    def __init__(self, *, limit: int):
        self.limit = limit
        super().__init__(
            ngettext(
                "You already have %(limit)d order awaiting payment, the most one account may "
                "have at once. Pay or cancel it before placing another order.",
                "You already have %(limit)d orders awaiting payment, the most one account may "
                "have at once. Pay or cancel one of them before placing another order.",
                limit,
            )
            % {"limit": limit}
        )


class InvalidTransition(RentalError):
    message = _("This order cannot change to that status now.")


class OrderNotCancellable(InvalidTransition):
    message = _("Only an order awaiting payment can be cancelled.")


class OrderNotAwaitingPayment(RentalError):
    message = _("This order is no longer awaiting payment.")


class SshKeyMissing(RentalError):
    message = _("The customer has not given an SSH public key yet: the hosts cannot be prepared.")


class SshKeyLocked(RentalError):
    message = _(
        "The machines are already prepared with the SSH key given before; it can no longer change."
    )


class NotAwaitingCapacity(InvalidTransition):
    message = _("Only a paid order still waiting for cards can be allocated.")


class NotBeingProvisioned(InvalidTransition):
    message = _("Only an order being provisioned can be marked prepared or checked.")


class HostCardsInUse(RentalError):
    def __init__(self, *, needed: int):
        self.needed = needed
        super().__init__(
            ngettext(
                "A rented card of this host is card %(needed)d: keep at least %(needed)d card "
                "until that rental ends.",
                "A rented card of this host is card %(needed)d: keep at least %(needed)d cards "
                "until that rental ends.",
                needed,
            )
            % {"needed": needed}
        )


class HostModelLocked(RentalError):
    message = _("Cards of this host are rented out: its GPU model cannot change now.")


class NotReadinessFailed(InvalidTransition):
    message = _("SSH is checked again only after the worker gave up on this order.")


class SshKeyChanged(RentalError):
    message = _(
        "The customer replaced the SSH key after this page was loaded: install the key shown "
        "now on the hosts, then mark the order prepared again."
    )


class NoHandoverProblem(RentalError):
    message = _("This order has no open handover problem: nothing to resolve.")
