"""Query filters (django-filter) by operator, source, operator set, chip, method and status."""

from __future__ import annotations

import django_filters
from django import forms

from evaluation.models import Run, RunStatus
from leaderboard.models import Kernel, Method, MethodKind, Operator, Source, Submission, Visibility

MAX_ID = 2**63 - 1  # the database's BIGINT: a larger id is a 400, never an overflow in the query


class IdFilter(django_filters.NumberFilter):
    """An object id: a whole number from 1 to MAX_ID ("?method=1e400" or "?kernel=-1" is a 400 that says so)."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class OperatorFilter(django_filters.FilterSet):
    source = django_filters.ChoiceFilter(choices=Source.choices)
    set = django_filters.CharFilter(field_name="sets__slug", label="Operator set slug", distinct=True)

    class Meta:
        model = Operator
        fields = ["source", "set", "active", "in_mc"]


class MethodFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=MethodKind.choices)
    owner = django_filters.CharFilter(field_name="owner__username")

    class Meta:
        model = Method
        fields = ["kind", "owner", "scaffold", "model"]


class SubmissionFilter(django_filters.FilterSet):
    method = IdFilter(field_name="method_id")
    owner = django_filters.CharFilter(field_name="owner__username")
    chip = django_filters.CharFilter(field_name="target_chip__slug", label="Target chip slug")
    visibility = django_filters.ChoiceFilter(choices=Visibility.choices)

    class Meta:
        model = Submission
        fields = ["method", "owner", "chip", "visibility"]


class KernelFilter(django_filters.FilterSet):
    operator = django_filters.CharFilter(field_name="operator__operator_id", label="Operator id, e.g. aten::cos")
    source = django_filters.ChoiceFilter(field_name="operator__source", choices=Source.choices)
    set = django_filters.CharFilter(field_name="operator__sets__slug", label="Operator set slug", distinct=True)
    method = IdFilter(field_name="submission__method_id")
    submission = IdFilter(field_name="submission_id")

    class Meta:
        model = Kernel
        fields = ["operator", "source", "set", "method", "submission"]


class RunFilter(django_filters.FilterSet):
    operator = django_filters.CharFilter(
        field_name="kernel__operator__operator_id", label="Operator id, e.g. aten::cos"
    )
    source = django_filters.ChoiceFilter(field_name="kernel__operator__source", choices=Source.choices)
    set = django_filters.CharFilter(field_name="kernel__operator__sets__slug", label="Operator set slug", distinct=True)
    chip = django_filters.CharFilter(field_name="chip__slug")
    method = IdFilter(field_name="kernel__submission__method_id")
    submission = IdFilter(field_name="kernel__submission_id")
    kernel = IdFilter(field_name="kernel_id")
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)

    class Meta:
        model = Run
        fields = ["operator", "source", "set", "chip", "method", "submission", "kernel", "status"]
