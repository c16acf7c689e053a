from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.db import models
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _

from .ssh_keys import validate_ssh_public_key


class UserManager(BaseUserManager):
    """Users log in with their email; there is no username."""

    use_in_migrations = True

    def _create_user(self, email: str, password: str | None, **extra_fields):
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **extra_fields)
        user.set_password(password)
        user.full_clean(exclude=["password"])
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra_fields):
        extra_fields.setdefault("is_staff", False)
        extra_fields.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra_fields)

    def create_superuser(self, email: str, password: str | None = None, **extra_fields):
        extra_fields["is_staff"] = True
        extra_fields["is_superuser"] = True
        return self._create_user(email, password, **extra_fields)


class User(AbstractUser):
    """A customer, operator or finance user. Never holds an identity document (no KYC)."""

    username = None
    email = models.EmailField(_("email address"), unique=True)
    first_name = models.CharField(_("first name"), max_length=150)
    last_name = models.CharField(_("last name"), max_length=150)
    language = models.CharField(
        _("language"),
        max_length=8,
        choices=settings.LANGUAGES,
        default="en",
        help_text=_("Emails are written in this language."),
    )
    ssh_public_key = models.TextField(
        _("SSH public key"),
        blank=True,
        validators=[validate_ssh_public_key],
        help_text=_("One OpenSSH public key line; new orders use it to give you access."),
    )

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS = ["first_name", "last_name"]

    objects = UserManager()

    class Meta:
        verbose_name = _("user")
        verbose_name_plural = _("users")
        constraints = [
            models.UniqueConstraint(Lower("email"), name="user_email_ci_unique"),
            models.CheckConstraint(
                condition=~models.Q(first_name="") & ~models.Q(last_name=""),
                name="user_names_required",
            ),
        ]

    def __str__(self) -> str:
        return self.email


class BillingDetails(models.Model):
    """Optional details a customer may want on receipts (a company, a VAT number, an address).
    Never required, never an identity document."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="billing_details")
    company_name = models.CharField(_("company name"), max_length=200, blank=True)
    vat_number = models.CharField(_("VAT number"), max_length=40, blank=True)
    address = models.TextField(_("billing address"), max_length=500, blank=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("billing details")
        verbose_name_plural = _("billing details")

    def __str__(self) -> str:
        return f"{self.user_id}: {self.company_name or '—'}"

    def as_receipt(self) -> dict[str, str]:
        """What a receipt keeps of these details (only the fields filled in)."""
        fields = {
            "company_name": self.company_name,
            "vat_number": self.vat_number,
            "address": self.address,
        }
        return {key: value.strip() for key, value in fields.items() if value.strip()}
