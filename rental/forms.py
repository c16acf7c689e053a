from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.fields import ASCIIIntegerField
from accounts.forms import SshKeyForm

from .models import Duration, GpuModel, Preparation
from .pricing import MAX_LOTS, MIN_LOTS
from .services import Configuration

CUSTOM_PREPARATION_MAX_LENGTH = 2000

LOTS_MESSAGE = _("Enter a whole number of lots from 1 to 10.")


class OrderConfigurationForm(forms.Form):
    """The customer's choice. Prices and totals are never read from the request."""

    gpu_model = forms.ChoiceField(
        label=_("GPU model"),
        error_messages={
            "required": _("Choose a GPU model."),
            "invalid_choice": _("Choose a GPU model from the catalogue."),
        },
    )
    duration_days = forms.TypedChoiceField(
        label=_("Duration"),
        choices=Duration.choices,
        coerce=int,
        widget=forms.RadioSelect,
        error_messages={
            "required": _("Choose a duration of 3, 7 or 30 days."),
            "invalid_choice": _("Choose a duration of 3, 7 or 30 days."),
        },
    )
    lots = ASCIIIntegerField(
        label=_("Lots"),
        min_value=MIN_LOTS,
        max_value=MAX_LOTS,
        help_text=_("1 to 10 lots. A lot is one card; a B200 lot is two cards."),
        widget=forms.NumberInput(attrs={"inputmode": "numeric", "step": 1}),
        error_messages={
            "required": LOTS_MESSAGE,
            "invalid": LOTS_MESSAGE,
            "min_value": LOTS_MESSAGE,
            "max_value": LOTS_MESSAGE,
        },
    )
    preparation = forms.ChoiceField(
        label=_("Machine preparation"),
        choices=Preparation.choices,
        widget=forms.RadioSelect,
        error_messages={
            "required": _("Choose a preparation: Ubuntu, PyTorch, Blender or Custom."),
            "invalid_choice": _("Choose a preparation: Ubuntu, PyTorch, Blender or Custom."),
        },
    )
    custom_preparation = forms.CharField(
        label=_("What must be installed"),
        required=False,
        max_length=CUSTOM_PREPARATION_MAX_LENGTH,
        help_text=_(
            "Required for a custom preparation: the system packages, libraries and versions "
            "your project needs."
        ),
        widget=forms.Textarea(attrs={"rows": 4}),
        error_messages={
            "max_length": _(
                "Keep the description to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )

    def __init__(self, *args, catalogue: list[GpuModel], **kwargs):
        super().__init__(*args, **kwargs)
        self._models = {gpu_model.slug: gpu_model for gpu_model in catalogue}
        self.fields["gpu_model"].choices = [
            (model.slug, f"{model.name} · {model.vendor} · {model.get_compute_platform_display()}")
            for model in catalogue
        ]
        # The browser checks these too; the server checks them again in any case.
        self.fields["lots"].widget.attrs.update({"min": MIN_LOTS, "max": MAX_LOTS})

    def clean_gpu_model(self) -> GpuModel:
        return self._models[self.cleaned_data["gpu_model"]]

    def clean(self):
        cleaned = super().clean()
        is_custom = cleaned.get("preparation") == Preparation.CUSTOM
        described = cleaned.get("custom_preparation") or "custom_preparation" in self.errors
        if is_custom and not described:
            self.add_error(
                "custom_preparation",
                _("Describe what must be installed for a custom preparation."),
            )
        return cleaned

    def configuration(self) -> Configuration:
        data = self.cleaned_data
        is_custom = data["preparation"] == Preparation.CUSTOM
        return Configuration(
            gpu_model=data["gpu_model"],
            duration_days=data["duration_days"],
            lots=data["lots"],
            preparation=data["preparation"],
            custom_preparation=data["custom_preparation"] if is_custom else "",
        )

    def query_data(self) -> dict[str, str]:
        """The configuration as query parameters: the review page and login links carry it."""
        config = self.configuration()
        data = {
            "gpu_model": config.gpu_model.slug,
            "duration_days": str(config.duration_days),
            "lots": str(config.lots),
            "preparation": config.preparation,
        }
        if config.custom_preparation:
            data["custom_preparation"] = config.custom_preparation
        return data


class OrderSshKeyForm(SshKeyForm):
    """The SSH public key for one order; optionally saved on the account for the next ones."""

    save_on_account = forms.BooleanField(
        label=_("Also save this key on my account for my next orders"),
        required=False,
    )

    def __init__(self, *args, customer=None, **kwargs):
        super().__init__(*args, required=True, **kwargs)
        # Offered by default to an account that has no key yet; never replaces one silently.
        self.fields["save_on_account"].initial = not (customer and customer.ssh_public_key)

    def clean_ssh_public_key(self):
        try:
            return super().clean_ssh_public_key()
        except forms.ValidationError as error:
            if error.code == "private_key":
                # A private key pasted by mistake is never written back into the page.
                self.data = self.data.copy()
                self.data["ssh_public_key"] = ""
            raise
