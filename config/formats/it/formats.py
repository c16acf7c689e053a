from django.utils.translation import gettext_noop

from config.formats import DATE_FORMAT, DATETIME_FORMAT, TIME_FORMAT  # noqa: F401

SHORT_DATETIME_FORMAT = DATETIME_FORMAT

# Italian writes month names in lower case ("1 dicembre 2026"), Django's own catalogue
# capitalises them. These are Django's msgids: marked here, they are in our catalogue, which
# comes first (LOCALE_PATHS), so the `F` of every format prints them in lower case.
MONTH_NAMES = [
    gettext_noop("January"),
    gettext_noop("February"),
    gettext_noop("March"),
    gettext_noop("April"),
    gettext_noop("May"),
    gettext_noop("June"),
    gettext_noop("July"),
    gettext_noop("August"),
    gettext_noop("September"),
    gettext_noop("October"),
    gettext_noop("November"),
    gettext_noop("December"),
]
