"""The two forms of the order page's pilot section: upload a report file, record a decision."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import DecisionKind
from .services.decisions import MOTIVATION_MAX_LENGTH


class ReportUploadForm(forms.Form):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "id_upload_%s")  # apart from the decision form's ids
        super().__init__(*args, **kwargs)

    report = forms.FileField(
        label=_("Report file"),
        help_text=_("The report.json that “diagnose.py --json report.json” wrote."),
        allow_empty_file=True,  # an empty file gets the report's own message
        error_messages={
            "required": _("Choose the report.json file to upload."),
            "missing": _("Choose the report.json file to upload."),
            "invalid": _("Choose the report.json file to upload."),
        },
    )


class DecisionForm(forms.Form):
    """`reports` are (id, label) of this order's reports: another order's report id is not a
    choice, so it is refused with the field's message."""

    kind = forms.ChoiceField(
        label=_("Decision"),
        choices=DecisionKind.choices,
        widget=forms.RadioSelect,
        error_messages={
            "required": _(
                "Choose a decision: launch the planned volume, fix the environment or revise "
                "the configuration."
            ),
            "invalid_choice": _(
                "Choose a decision: launch the planned volume, fix the environment or revise "
                "the configuration."
            ),
        },
    )
    motivation = forms.CharField(
        label=_("Motivation"),
        max_length=MOTIVATION_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_(
            "What the pilot showed (accepted, still to correct) and why this decision follows."
        ),
        error_messages={
            "required": _(
                "Write the motivation: what the pilot showed and why this decision follows."
            ),
            "max_length": _(
                "Keep the motivation to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )
    report = forms.TypedChoiceField(
        label=_("Report it rests on"),
        required=False,
        coerce=int,
        empty_value=None,
        error_messages={"invalid_choice": _("Choose one of this order's reports, or none.")},
    )

    def __init__(self, *args, reports: list[tuple[int, str]], **kwargs):
        kwargs.setdefault("auto_id", "id_decision_%s")  # apart from the upload form's ids
        super().__init__(*args, **kwargs)
        self.fields["report"].choices = [
            ("", _("None")),
            *((str(pk), label) for pk, label in reports),
        ]
