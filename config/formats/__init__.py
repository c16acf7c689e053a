"""Date and time formats, one per language (FORMAT_MODULE_PATH): every date and time the site
shows, on pages and in emails, is "1 December 2026, 14:05 UTC" / "1 dicembre 2026, 14:05 UTC".

The zone is part of the format (T), so no template appends it. DATETIME_FORMAT and
SHORT_DATETIME_FORMAT are the same on purpose: a timeline, a table and an email agree.
"""

DATE_FORMAT = "j F Y"
TIME_FORMAT = "H:i"
DATETIME_FORMAT = "j F Y, H:i T"
