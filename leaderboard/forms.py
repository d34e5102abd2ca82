"""Web forms. They parse and validate input shape only; services decide what is acceptable."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from evaluation.models import Chip
from leaderboard.models import Method, MethodKind, Operator, Visibility


class SignUpForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")


class SingleKernelForm(forms.Form):
    """One kernel file for one operator, with the method that wrote it and where to judge it."""

    operator = forms.ModelChoiceField(queryset=Operator.objects.filter(active=True), to_field_name="operator_id",
                                      help_text="The operator the file implements")
    kernel_file = forms.FileField(help_text="A Python file with @triton.jit kernels and the entry points")
    scaffold = forms.CharField(max_length=120, help_text='The scaffold or agent, e.g. "Claude Code"')
    model = forms.CharField(max_length=120, required=False, help_text='The model, e.g. "Opus-4.6"')
    kind = forms.ChoiceField(choices=MethodKind.choices, initial=MethodKind.AGENT)
    chips = forms.ModelMultipleChoiceField(queryset=Chip.objects.filter(active=True), to_field_name="slug",
                                           widget=forms.CheckboxSelectMultiple,
                                           help_text="Judge on these chips")
    target_chip = forms.ModelChoiceField(queryset=Chip.objects.filter(active=True), to_field_name="slug",
                                         required=False, help_text="The chip the kernel was written for, if any")
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.PUBLIC)
    total_tokens = forms.IntegerField(min_value=0, required=False, help_text="Tokens spent writing it")
    solve_seconds = forms.FloatField(min_value=0, required=False, help_text="Time spent writing it, seconds")
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        label_chips(self)


def label_chips(form: forms.Form) -> None:
    """Chips by the names pages use (public aliases where the vendor is anonymised), not their slugs."""
    for name in ("chips", "target_chip"):
        form.fields[name].label_from_instance = lambda chip: chip.label


class BatchUploadForm(forms.Form):
    """A zip or tar of ``<namespace>__<op>.py`` files, optional token usage, and the method that wrote them."""

    archive = forms.FileField(help_text="A .zip or .tar(.gz) of <namespace>__<op>.py files; a KernelGenBench run "
                                        "directory (kernels/ + progress.json) works as is")
    usage_file = forms.FileField(required=False, help_text="Optional token usage: progress.json, or a CSV/JSON with "
                                                           "operator, input_tokens, output_tokens, cache_creation, "
                                                           "cache_read, total, duration_seconds")
    method = forms.ModelChoiceField(queryset=Method.objects.none(), required=False,
                                    help_text="One of your methods, or leave empty and name a new one below")
    scaffold = forms.CharField(max_length=120, required=False, help_text='New method: scaffold, e.g. "Claude Code"')
    model = forms.CharField(max_length=120, required=False, help_text='New method: model, e.g. "Opus-4.6"')
    kind = forms.ChoiceField(choices=MethodKind.choices, initial=MethodKind.AGENT)
    chips = forms.ModelMultipleChoiceField(queryset=Chip.objects.filter(active=True), to_field_name="slug",
                                           widget=forms.CheckboxSelectMultiple, help_text="Judge on these chips")
    target_chip = forms.ModelChoiceField(queryset=Chip.objects.filter(active=True), to_field_name="slug",
                                         required=False, help_text="The chip the kernels were written for, if any")
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.PUBLIC)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        label_chips(self)
        if user is not None and user.is_authenticated:
            self.fields["method"].queryset = Method.objects.filter(owner=user)

    def clean(self) -> dict:
        data = super().clean()
        if not data.get("method") and not (data.get("scaffold") or "").strip():
            self.add_error("scaffold", "Choose one of your methods or name a new one (scaffold at least).")
        return data
