"""What the pilot services refuse, each with the message the customer reads and the HTTP
status the upload endpoint answers with."""

from django.utils.translation import gettext_lazy as _


class PilotError(Exception):
    """A pilot rule refused the request; `message` is shown to the customer (or sent back to
    diagnose.py as {"error": message}). `language` is the order's customer's, once known."""

    message = _("This request cannot be completed.")
    status = 400

    def __init__(self, message=None, *, language: str | None = None):
        if message is not None:
            self.message = message
        self.language = language
        super().__init__(str(self.message))


# ------------------------------------------------------------------ the upload token


class TokenMissing(PilotError):
    status = 401
    message = _(
        "This upload needs the token of the order's diagnostics kit, sent as "
        "“Authorization: Bearer <token>” (diagnose.py --upload does it). You can also upload "
        "the report file on the order page."
    )


class TokenUnknown(PilotError):
    status = 401
    message = _(
        "This upload token is not valid. Download the diagnostics kit again from the order "
        "page, or upload the report file there."
    )


class TokenOfAnotherOrder(PilotError):
    status = 403
    message = _(
        "This upload token belongs to another order: it can only add reports to the order "
        "whose kit it came with. Use the diagnose.py of this order's kit, or upload the report "
        "on this order's page."
    )


class TokenReplaced(PilotError):
    status = 401
    message = _(
        "This upload token was replaced: a newer diagnostics kit was downloaded for this "
        "order. Use the diagnose.py of the latest kit, or upload the report file on the order "
        "page."
    )


class TokenExpired(PilotError):
    status = 401
    message = _("This upload token expired with the rental: the order no longer accepts reports.")


# ------------------------------------------------------------------ the report and the order


class ReportTooLarge(PilotError):
    status = 413

    def __init__(self, *, limit_bytes: int, language: str | None = None):
        super().__init__(
            _(
                "The report is larger than %(limit)d KiB, the most the site accepts: send the "
                "report.json that diagnose.py wrote, unchanged."
            )
            % {"limit": limit_bytes // 1024},
            language=language,
        )


class ReportOfAnotherOrder(PilotError):
    status = 400

    def __init__(self, *, reported: str, order: str, language: str | None = None):
        super().__init__(
            _(
                "This report is for order %(reported)s, not for order %(order)s: run the "
                "diagnose.py of this order's kit."
            )
            % {"reported": reported, "order": order},
            language=language,
        )


class ReportsClosed(PilotError):
    status = 403
    message = _(
        "This order does not accept reports now: they are accepted once the order is paid "
        "and until the rental ends."
    )


class TooManyReports(PilotError):
    status = 409

    def __init__(self, *, limit: int, language: str | None = None):
        super().__init__(
            _(
                "This order already has %(limit)d reports, the most it may keep. Record your "
                "decision, or ask our operators."
            )
            % {"limit": limit},
            language=language,
        )


class KitUnavailable(PilotError):
    status = 409
    message = _(
        "The kits are available once the order is paid, until the rental ends: nothing was "
        "generated."
    )


# ------------------------------------------------------------------ decisions


class DecisionsClosed(PilotError):
    status = 409
    message = _("Decisions are recorded for an order that was paid; this one was not.")


class MotivationRequired(PilotError):
    message = _("Write the motivation: what the pilot showed and why this decision follows.")


class UnknownDecision(PilotError):
    message = _(
        "Choose a decision: launch the planned volume, fix the environment or revise the "
        "configuration."
    )


class ReportNotOfThisOrder(PilotError):
    message = _("Choose one of this order's reports, or none.")


class TooManyDecisions(PilotError):
    status = 409

    def __init__(self, *, limit: int):
        super().__init__(
            _("This order already has %(limit)d decisions, the most it may keep.")
            % {"limit": limit}
        )
