"""Operators' forms: the hosts whose cards are rented out, and marking an order prepared."""

import ipaddress
import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.fields import ASCIIIntegerField

from .models import MAX_CARDS_PER_HOST, GpuModel, Host, HostState
from .services.provisioning import HOST_FIELDS

SSH_HOST_MAX_LENGTH = 253
SSH_USER_PATTERN = re.compile(r"^[a-z_][a-z0-9_-]{0,31}\Z")
# One DNS label: letters, digits and hyphens, not starting or ending with a hyphen.
HOSTNAME_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
PORT_MESSAGE = _("Enter a port number from 1 to 65535.")
USER_MESSAGE = _(
    "Enter a POSIX user name: lowercase letters, digits, _ and -, starting with a letter or _, "
    "at most 32 characters."
)


def _interpolate(message, values: dict) -> str:
    return str(message) % values


# A translated message with its placeholders filled in when it is shown, in that language.
interpolate_lazy = lazy(_interpolate, str)

CARDS_MESSAGE = interpolate_lazy(
    _("Enter a whole number of cards from 1 to %(max)d."), {"max": MAX_CARDS_PER_HOST}
)
ACCESS_NOTES_MIN_LENGTH = 10
ACCESS_NOTES_MAX_LENGTH = 4000


class GpuModelChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: GpuModel) -> str:
        if obj.active:
            return obj.name
        return gettext("%(name)s (not in the catalogue)") % {"name": obj.name}


def validate_ssh_host(value: str) -> None:
    """A host name or an IP address, as `ssh` takes it: no scheme, no user, no port."""
    if any(char.isspace() for char in value):
        raise ValidationError(_("Write the host name or IP address without spaces."))
    if "://" in value:
        raise ValidationError(
            _("Write the host name or IP address only, without a scheme such as ssh://.")
        )
    if "@" in value:
        raise ValidationError(
            _("Write the host name or IP address only: the user goes in the SSH user field.")
        )
    try:
        ipaddress.ip_address(value)
    except ValueError:
        pass
    else:
        return
    labels = value.removesuffix(".").split(".")
    if not all(HOSTNAME_LABEL.fullmatch(label) for label in labels):
        if ":" in value:
            raise ValidationError(
                _("Write the host name or IP address only: the port goes in the SSH port field.")
            )
        raise ValidationError(
            _(
                "Enter a valid host name (letters, digits, hyphens and dots, such as "
                "gpu-01.example.net) or an IP address."
            )
        )


class HostForm(forms.ModelForm):
    """A host as operators describe it; `rental.services.provisioning.host_save` keeps the
    cards that are rented out."""

    gpu_model = GpuModelChoiceField(
        label=_("GPU model"),
        queryset=GpuModel.objects.order_by("display_order", "name"),
        error_messages={
            "required": _("Choose the GPU model of the host's cards."),
            "invalid_choice": _("Choose a GPU model from the list."),
        },
    )
    cards = ASCIIIntegerField(
        label=_("Cards"),
        min_value=1,
        max_value=MAX_CARDS_PER_HOST,
        help_text=interpolate_lazy(
            _("How many cards of that model the host has (1 to %(max)d)."),
            {"max": MAX_CARDS_PER_HOST},
        ),
        widget=forms.NumberInput(attrs={"inputmode": "numeric", "step": 1}),
        error_messages={
            "required": CARDS_MESSAGE,
            "invalid": CARDS_MESSAGE,
            "min_value": CARDS_MESSAGE,
            "max_value": CARDS_MESSAGE,
        },
    )
    ssh_host = forms.CharField(
        label=_("SSH host"),
        max_length=SSH_HOST_MAX_LENGTH,
        validators=[validate_ssh_host],
        help_text=_("Host name or IP address customers connect to, such as gpu-01.example.net."),
        error_messages={
            "required": _("Enter the host name or IP address customers connect to."),
            "max_length": _(
                "Keep the host name to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )
    ssh_port = ASCIIIntegerField(
        label=_("SSH port"),
        min_value=1,
        max_value=65535,
        initial=22,
        widget=forms.NumberInput(attrs={"inputmode": "numeric", "step": 1}),
        error_messages={
            "required": PORT_MESSAGE,
            "invalid": PORT_MESSAGE,
            "min_value": PORT_MESSAGE,
            "max_value": PORT_MESSAGE,
        },
    )
    ssh_user = forms.RegexField(
        label=_("SSH user"),
        regex=SSH_USER_PATTERN,
        widget=forms.TextInput(attrs={"maxlength": 32, "autocapitalize": "none"}),
        help_text=_(
            "The POSIX user customers log in as: lowercase letters, digits, _ and -, starting "
            "with a letter or _, at most 32 characters."
        ),
        error_messages={
            "required": _("Enter the user customers log in as, such as ubuntu."),
            "invalid": USER_MESSAGE,
        },
    )
    state = forms.ChoiceField(
        label=_("State"),
        choices=HostState.choices,
        help_text=_(
            "A host in maintenance offers no free cards: its rented cards stay with their "
            "orders until they end."
        ),
        error_messages={
            "required": _("Choose Available or Maintenance."),
            "invalid_choice": _("Choose Available or Maintenance."),
        },
    )

    class Meta:
        model = Host
        fields = HOST_FIELDS
        widgets = {"notes": forms.Textarea(attrs={"rows": 2})}
        error_messages = {
            "name": {
                "required": _("Give the host a name, such as gpu-h100-01."),
                "unique": _("A host with this name already exists: choose another name."),
                "max_length": _(
                    "Keep the name to %(limit_value)d characters (it has %(show_value)d)."
                ),
            },
            "notes": {
                "max_length": _(
                    "Keep the notes to %(limit_value)d characters (they have %(show_value)d)."
                ),
            },
        }
        help_texts = {"notes": _("Seen by operators only.")}


class PrepareForm(forms.Form):
    access_notes = forms.CharField(
        label=_("Access details for the customer"),
        min_length=ACCESS_NOTES_MIN_LENGTH,
        max_length=ACCESS_NOTES_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=_(
            "What was prepared (system, drivers, CUDA or ROCm, frameworks and their versions) "
            "and anything the customer needs beyond the SSH command. The customer sees this "
            "once SSH answers on every host."
        ),
        error_messages={
            "required": _("Describe what was prepared: the customer sees it with the access."),
            "min_length": _(
                "Describe what was prepared in at least %(limit_value)d characters "
                "(it has %(show_value)d)."
            ),
            "max_length": _(
                "Keep the access details to %(limit_value)d characters (they have %(show_value)d)."
            ),
        },
    )
    # The fingerprint of the key the operator saw on the page: if the customer replaced the key
    # meanwhile, marking prepared is refused rather than locking the order to a key the hosts
    # do not have.
    key_fingerprint = forms.CharField(widget=forms.HiddenInput, required=False, max_length=100)


class ResolveHandoverForm(forms.Form):
    """What the operator did about a handover problem: kept in the order's history."""

    note = forms.CharField(
        label=_("What was done"),
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "For example: card replaced on the host, or the difference explained to the "
            "customer. Kept in the order's history with your name."
        ),
        error_messages={
            "required": _("Say what was done about the handover problem."),
            "max_length": _("Keep the note to %(limit_value)d characters (it has %(show_value)d)."),
        },
    )
