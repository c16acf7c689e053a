from django import forms
from django.utils.translation import gettext_lazy as _

from outbox.events import SUBSCRIBABLE_EVENT_TYPES


class EndpointForm(forms.Form):
    url = forms.CharField(
        label=_("URL"),
        max_length=500,
        help_text=_("Where we POST the events: an http or https address."),
        widget=forms.URLInput(attrs={"placeholder": "https://example.com/webhooks"}),
    )
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=list(SUBSCRIBABLE_EVENT_TYPES.items()),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Choose at least one event.")},
    )


class EnabledForm(forms.Form):
    enabled = forms.TypedChoiceField(
        choices=(("1", _("Enable")), ("0", _("Disable"))), coerce=lambda value: value == "1"
    )
