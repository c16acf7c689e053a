"""Second factors for test users, through allauth's own activation and code classes.

Staff pages open only for users with an authenticator app (accounts.roles), so every test that
makes an operator, a finance user or a superuser and opens a staff page enrols them here."""

import time

from allauth.mfa import app_settings
from allauth.mfa.models import Authenticator
from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes
from allauth.mfa.totp.internal.auth import TOTP, format_hotp_value, generate_totp_secret, hotp_value
from allauth.mfa.utils import decrypt


def enrol_totp(user) -> str:
    """Give `user` an authenticator app and recovery codes, as allauth's activation does;
    returns the TOTP secret (the one the app would have scanned). Enrolling twice keeps the
    first."""
    existing = Authenticator.objects.filter(user_id=user.pk, type=Authenticator.Type.TOTP).first()
    if existing is not None:
        return decrypt(existing.data["secret"])
    secret = generate_totp_secret()
    TOTP.activate(user, secret)
    RecoveryCodes.activate(user)
    return secret


CODE_MARGIN_SECONDS = 3


def totp_code(secret: str, *, offset_periods: int = 0) -> str:
    """The code an authenticator app shows now for `secret` (or `offset_periods` periods away):
    allauth's own HOTP over the current time step."""
    period = app_settings.TOTP_PERIOD
    if offset_periods == 0 and period - time.time() % period < CODE_MARGIN_SECONDS:
        # allauth accepts only the current period (MFA_TOTP_TOLERANCE 0): a code typed just
        # before the period ends would be refused by the time it is checked. Wait for the
        # next period, as a person reading the app would.
        time.sleep(period - time.time() % period + 0.05)
    counter = int(time.time()) // period + offset_periods
    return format_hotp_value(hotp_value(secret, counter))


def recovery_codes(user) -> list[str]:
    """The user's recovery codes not used yet."""
    authenticator = Authenticator.objects.get(
        user_id=user.pk, type=Authenticator.Type.RECOVERY_CODES
    )
    return authenticator.wrap().get_unused_codes()


def wrong_code(secret: str) -> str:
    """Six digits that are not the code of any period allauth accepts now."""
    accepted = {
        totp_code(secret, offset_periods=shift)
        for shift in range(-app_settings.TOTP_TOLERANCE - 1, app_settings.TOTP_TOLERANCE + 2)
    }
    return next(f"{n:06d}" for n in range(1_000_000) if f"{n:06d}" not in accepted)
