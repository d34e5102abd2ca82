"""Web forms. They parse and validate input shape only; the intake and services decide what is acceptable."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from evaluation.models import Chip
from leaderboard.intake import IntakeOptions
from leaderboard.models import Method, MethodKind, OperatorSet, Visibility
from leaderboard.progress import chip_has_live_worker

VISIBILITY_HELP = (
    "Public: code and results are shown to everyone and ranked on the boards. Private: code and "
    "results are visible to you and staff only, and private work is never ranked."
)


class SignUpForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")


class UploadOptionsForm(forms.Form):
    """What every upload asks besides the files: the method, where to judge, who may see it."""

    method = forms.ModelChoiceField(
        queryset=Method.objects.none(),
        required=False,
        help_text="One of your methods, or leave empty and name a new one below",
    )
    scaffold = forms.CharField(
        max_length=120, required=False, help_text='New method: scaffold or agent, e.g. "Claude Code"'
    )
    model = forms.CharField(max_length=120, required=False, help_text='New method: model, e.g. "Opus-4.6"')
    model_version = forms.CharField(
        max_length=120, required=False, help_text="New method: the exact model build or snapshot, if known"
    )
    kind = forms.ChoiceField(choices=MethodKind.choices, initial=MethodKind.AGENT)
    paper_url = forms.URLField(
        required=False, assume_scheme="https", label="Paper link", help_text="New method: its paper or report"
    )
    code_url = forms.URLField(
        required=False, assume_scheme="https", label="Code link", help_text="New method: its code"
    )
    chips = forms.ModelMultipleChoiceField(
        queryset=Chip.objects.filter(active=True),
        to_field_name="slug",
        widget=forms.CheckboxSelectMultiple,
        help_text="Judge on these chips; those with a worker online are ticked",
    )
    target_chip = forms.ModelChoiceField(
        queryset=Chip.objects.filter(active=True),
        to_field_name="slug",
        required=False,
        help_text="The chip the kernels were written for, if any",
    )
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.PUBLIC, help_text=VISIBILITY_HELP)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        live = {chip.pk for chip in Chip.objects.filter(active=True) if chip_has_live_worker(chip=chip)}
        self.fields["chips"].label_from_instance = lambda chip: (
            f"{chip.label} ({'worker online' if chip.pk in live else 'no worker now: runs wait'})"
        )
        self.fields["target_chip"].label_from_instance = lambda chip: chip.label
        # Ticked: the chips a worker serves now. With none live nothing is ticked: a run queued for a chip
        # nobody serves waits, and the uploader should choose that knowingly.
        self.fields["chips"].initial = [
            chip.slug for chip in Chip.objects.filter(active=True).order_by("slug") if chip.pk in live
        ]
        if user is not None and user.is_authenticated:
            self.fields["method"].queryset = Method.objects.filter(owner=user).order_by("scaffold", "model")
        self.fields["method"].label_from_instance = str

    def clean(self) -> dict:
        data = super().clean()
        if not data.get("method") and not (data.get("scaffold") or "").strip():
            self.add_error("scaffold", "Choose one of your methods or name a new one (scaffold at least).")
        return data

    def intake_options(self) -> IntakeOptions:
        data = self.cleaned_data
        return IntakeOptions(
            method=data.get("method"),
            scaffold=data.get("scaffold") or "",
            model=data.get("model") or "",
            kind=data.get("kind") or MethodKind.AGENT,
            method_fields={
                "model_version": data.get("model_version") or "",
                "paper_url": data.get("paper_url") or "",
                "code_url": data.get("code_url") or "",
            },
            chip_slugs=[chip.slug for chip in data.get("chips") or []],
            target_chip_slug=data["target_chip"].slug if data.get("target_chip") else None,
            visibility=data.get("visibility") or Visibility.PUBLIC,
            notes=data.get("notes") or "",
        )


class SingleKernelForm(UploadOptionsForm):
    """One kernel file for one operator; the operator comes from the file name unless named here."""

    kernel_file = forms.FileField(
        help_text="A Python file with @triton.jit kernels and the entry points; "
        "named <namespace>__<op>.py (aten__cos.py), it names its operator"
    )
    operator = forms.CharField(
        max_length=128,
        required=False,
        widget=forms.TextInput(
            attrs={"list": "operator-ids", "autocomplete": "off", "placeholder": "from the file name, e.g. aten::cos"}
        ),
        help_text="Leave empty to take it from the file name",
    )
    total_tokens = forms.IntegerField(min_value=0, max_value=2**62, required=False, help_text="Tokens spent writing it")
    solve_seconds = forms.FloatField(
        min_value=0, max_value=1e9, required=False, help_text="Time spent writing it, seconds"
    )

    field_order = [
        "kernel_file",
        "operator",
        "method",
        "scaffold",
        "model",
        "model_version",
        "kind",
        "paper_url",
        "code_url",
        "chips",
        "target_chip",
        "visibility",
        "total_tokens",
        "solve_seconds",
        "notes",
    ]


class BatchUploadForm(UploadOptionsForm):
    """A zip or tar of ``<namespace>__<op>.py`` files, optional token usage, and the method that wrote them."""

    archive = forms.FileField(
        help_text="A .zip or .tar(.gz) of <namespace>__<op>.py files; a KernelGenBench run "
        "directory (kernels/ + progress.json) works as is"
    )
    usage_file = forms.FileField(
        required=False,
        help_text="Optional token usage: progress.json, or a CSV/JSON with "
        "operator, input_tokens, output_tokens, cache_creation, "
        "cache_read, total, duration_seconds",
    )

    field_order = [
        "archive",
        "usage_file",
        "method",
        "scaffold",
        "model",
        "model_version",
        "kind",
        "paper_url",
        "code_url",
        "chips",
        "target_chip",
        "visibility",
        "notes",
    ]


class RejudgeForm(forms.Form):
    """Staff: judge a set's latest public kernels on a chip again, by today's judge."""

    operator_set = forms.ModelChoiceField(queryset=OperatorSet.objects.all(), to_field_name="slug", label="Set")
    chip = forms.ModelChoiceField(queryset=Chip.objects.filter(active=True), to_field_name="slug")
    stale_only = forms.BooleanField(
        required=False, help_text="Only verdicts made by an older judge or against an older operator version"
    )
