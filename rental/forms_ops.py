"""Operators' forms: the hosts whose cards are rented out, their actions (the host key), the
tenancies waiting for an operator, and marking an order prepared."""

import ipaddress
import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.fields import ASCIIIntegerField

from .hosts.tenancy import MANUAL_TEARDOWN_CHECKLIST
from .models import MAX_CARDS_PER_HOST, GpuModel, Host, HostManagement

SSH_HOST_MAX_LENGTH = 253
SSH_USER_PATTERN = re.compile(r"^[a-z_][a-z0-9_-]{0,31}\Z")
# An absolute directory (the cards' device files) and a command or an absolute path (the
# vendor tool): handed to the host's shell and playbooks, so no spaces, quotes or $.
DEVICE_DIR_PATTERN = re.compile(r"^/[A-Za-z0-9._/-]{0,199}\Z")
GPU_TOOL_PATTERN = re.compile(r"^(/[A-Za-z0-9._/+-]{1,199}|[A-Za-z0-9._+-]{1,200})\Z")
DEFAULT_DEVICE_DIR = "/dev"
# What the operator types in the host form; the state is never one of them (it changes only
# through the host's actions, rental.hosts.services).
HOST_FORM_FIELDS = (
    "name",
    "gpu_model",
    "cards",
    "management",
    "ssh_host",
    "ssh_port",
    "ssh_user",
    "admin_user",
    "device_dir",
    "gpu_tool",
    "notes",
)
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
            "Hosts prepared by hand: the POSIX user customers log in as (lowercase letters, "
            "digits, _ and -, starting with a letter or _, at most 32 characters). On "
            "worker-managed hosts customers log in as their own tenant account instead."
        ),
        error_messages={
            "required": _("Enter the user customers log in as, such as ubuntu."),
            "invalid": USER_MESSAGE,
        },
    )
    management = forms.ChoiceField(
        label=_("Prepared"),
        choices=HostManagement.choices,
        initial=HostManagement.WORKER,
        help_text=_(
            "By the worker: it logs in with the administrative user, gives each order an account "
            "of its own with exactly its cards and erases it at the end; the host sells cards "
            "once its host key is confirmed and a host check passed. By hand: operators prepare "
            "the host and confirm its teardown here. Fixed once the host is added."
        ),
        error_messages={
            "required": _("Choose who prepares the host: the worker or operators by hand."),
            "invalid_choice": _("Choose who prepares the host: the worker or operators by hand."),
        },
    )
    admin_user = forms.RegexField(
        label=_("Administrative user"),
        regex=SSH_USER_PATTERN,
        required=False,
        widget=forms.TextInput(attrs={"maxlength": 32, "autocapitalize": "none"}),
        help_text=_(
            "Worker-managed hosts: the POSIX user the worker logs in as, with passwordless sudo "
            "(its private key is on the worker, never here)."
        ),
        error_messages={"invalid": USER_MESSAGE},
    )
    device_dir = forms.RegexField(
        label=_("Device directory"),
        regex=DEVICE_DIR_PATTERN,
        required=False,
        initial=DEFAULT_DEVICE_DIR,
        widget=forms.TextInput(attrs={"maxlength": 200, "autocapitalize": "none"}),
        help_text=_("Where the cards' device files are; empty means /dev."),
        error_messages={
            "invalid": _(
                "Enter an absolute directory such as /dev: letters, digits, ., _, - and /, "
                "no spaces."
            ),
        },
    )
    gpu_tool = forms.RegexField(
        label=_("GPU tool"),
        regex=GPU_TOOL_PATTERN,
        required=False,
        widget=forms.TextInput(attrs={"maxlength": 200, "autocapitalize": "none"}),
        help_text=_(
            "The vendor tool that reads the cards, as a command or an absolute path; empty "
            "means nvidia-smi or rocm-smi on the host's PATH."
        ),
        error_messages={
            "invalid": _(
                "Enter a command such as nvidia-smi or an absolute path such as "
                "/usr/bin/nvidia-smi, without spaces."
            ),
        },
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            # Who prepares a host decides how its tenancies are given and taken back: it
            # cannot change under live rentals.
            self.fields["management"].disabled = True

    def clean_device_dir(self) -> str:
        value = self.cleaned_data["device_dir"]
        if ".." in value.split("/"):
            raise ValidationError(_("Write the directory without .. in it."), code="invalid")
        return value or DEFAULT_DEVICE_DIR

    def clean(self):
        cleaned = super().clean()
        worker = cleaned.get("management") == HostManagement.WORKER
        if worker and not cleaned.get("admin_user") and "admin_user" not in self.errors:
            self.add_error(
                "admin_user",
                ValidationError(
                    _(
                        "Enter the administrative user the worker logs in as: a worker-managed "
                        "host needs one."
                    ),
                    code="required",
                ),
            )
        return cleaned

    class Meta:
        model = Host
        fields = HOST_FORM_FIELDS
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


# ------------------------------------------------------------------------ host actions

FINGERPRINT_MAX_LENGTH = 100


class ConfirmHostKeyForm(forms.Form):
    """The fingerprint the operator read on the host's console (`ssh-keygen -lf` of its host
    key): pinned only when it is the offered key's."""

    fingerprint = forms.CharField(
        label=_("Fingerprint read on the host's console"),
        max_length=FINGERPRINT_MAX_LENGTH,
        widget=forms.TextInput(
            attrs={"autocapitalize": "none", "autocomplete": "off", "spellcheck": "false"}
        ),
        help_text=_(
            "On the host itself (its console, not over this network): ssh-keygen -lf "
            "/etc/ssh/ssh_host_ed25519_key.pub. Type or paste the SHA256:... part."
        ),
        error_messages={
            "required": _("Type the fingerprint you read on the host's console."),
            "max_length": _(
                "A fingerprint has at most %(limit_value)d characters (this has %(show_value)d)."
            ),
        },
    )


# ------------------------------------------------------------------------ tenancies

# The operator's statements when a host prepared by hand is torn down, in the operator's
# language; keyed like rental.hosts.tenancy.MANUAL_TEARDOWN_CHECKLIST (the service checks
# the keys, and writes its own English labels in the erasure summary).
TEARDOWN_LABELS = {
    "keys": _("The customer's keys are removed and the account is locked"),
    "processes": _("No process of the tenant runs"),
    "files": _("The tenant's home and its files in /tmp, /var/tmp and /dev/shm are removed"),
    "devices": _("The cards' device files are back to root only, the cards reset"),
    "login": _("A login as the tenant is refused"),
}


class ConfirmTeardownForm(forms.Form):
    """One required box per item of the manual teardown checklist."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, label in MANUAL_TEARDOWN_CHECKLIST:
            self.fields[key] = forms.BooleanField(
                label=TEARDOWN_LABELS.get(key, label),
                required=True,
                error_messages={"required": _("Check this item once it is done and verified.")},
            )

    def confirmed(self) -> set[str]:
        return {key for key, _label in MANUAL_TEARDOWN_CHECKLIST if self.cleaned_data.get(key)}


class OperatorStepForm(forms.Form):
    """What an operator did by hand on the host before the worker verifies the tenancy."""

    note = forms.CharField(
        label=_("What was done"),
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "For example: the custom software installed and its versions. Kept in the "
            "tenancy's history with your name; the worker then verifies the access as the "
            "tenant."
        ),
        error_messages={
            "required": _("Say what was done on the host."),
            "max_length": _("Keep the note to %(limit_value)d characters (it has %(show_value)d)."),
        },
    )
