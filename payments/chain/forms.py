"""The (network, asset) choice every form that moves stablecoins starts from."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .selectors import StablecoinChoice, stablecoin_choices

CHOICE_MESSAGE = _("Choose a stablecoin and network from the list.")


class StablecoinForm(forms.Form):
    """One choice per (network, asset) among the enabled networks."""

    stablecoin = forms.ChoiceField(
        label=_("Stablecoin and network"),
        widget=forms.RadioSelect,
        error_messages={"required": CHOICE_MESSAGE, "invalid_choice": CHOICE_MESSAGE},
    )

    def __init__(self, *args, choices: list[StablecoinChoice] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.choices = {
            choice.value: choice
            for choice in (stablecoin_choices() if choices is None else choices)
        }
        self.fields["stablecoin"].choices = [
            (value, choice.label) for value, choice in self.choices.items()
        ]
        if len(self.choices) == 1 and not self.is_bound:
            self.initial.setdefault("stablecoin", next(iter(self.choices)))

    @property
    def available(self) -> bool:
        return bool(self.choices)

    def clean_stablecoin(self) -> StablecoinChoice:
        return self.choices[self.cleaned_data["stablecoin"]]
