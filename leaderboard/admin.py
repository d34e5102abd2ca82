"""Admin for curators: operators, sets, methods, submissions, kernels and the paper's numbers."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html

from evaluation.models import Chip
from evaluation.services import RejudgeRefused, rejudge_set, runs_create_for_kernels
from leaderboard import best_verdicts
from leaderboard.models import Kernel, Method, Operator, OperatorSet, PaperCost, PaperResult, Submission


class AddToSetForm(forms.Form):
    operator_set = forms.ModelChoiceField(queryset=OperatorSet.objects.all())


class ChipChoiceForm(forms.Form):
    chip = forms.ModelChoiceField(queryset=Chip.objects.filter(active=True))


class RejudgeChipForm(ChipChoiceForm):
    stale_only = forms.BooleanField(
        required=False, help_text="Only verdicts made by an older judge or against an older operator version"
    )


def ask_for_object(modeladmin, request: HttpRequest, queryset: QuerySet, form_class, action: str, title: str):
    """Two-step admin action: show a small form, then return its cleaned data (or None to render it)."""
    if "apply" in request.POST:
        form = form_class(request.POST)
        if form.is_valid():
            return form.cleaned_data, None
    else:
        form = form_class()
    return None, render(
        request,
        "admin/kgb_action_form.html",
        {
            "title": title,
            "form": form,
            "queryset": queryset,
            "action": action,
            "opts": modeladmin.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        },
    )


class KeepsBestVerdicts:
    """An admin whose edits (``refresh_on_save``) and deletions change which runs count where: each write is
    wrapped in ``best_verdicts.kept``, so the boards' summary follows in the same transaction."""

    refresh_on_save = True

    def verdict_scope(self, pks: list[Any]) -> dict[str, list[Any]]:
        raise NotImplementedError

    def _kept(self, pks: list[Any]):
        return best_verdicts.kept(**self.verdict_scope(pks))

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not (change and self.refresh_on_save):  # a new object has no runs yet
            super().save_model(request, obj, form, change)
            return
        with self._kept([obj.pk]):
            super().save_model(request, obj, form, change)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with self._kept([obj.pk]):
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        with self._kept(list(queryset.values_list("pk", flat=True))):
            super().delete_queryset(request, queryset)


@admin.register(Operator)
class OperatorAdmin(admin.ModelAdmin):
    list_display = ("operator_id", "source", "version", "active", "in_mc", "judgement", "updated_at")
    list_filter = ("source", "active", "in_mc", "judgement", "sets")
    search_fields = ("operator_id", "name", "description")
    readonly_fields = ("definition_hash", "version", "updated_at")
    actions = ("activate", "deactivate", "add_to_set")

    @admin.action(description="Activate selected operators")
    def activate(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.message_user(request, f"{queryset.update(active=True)} operators activated.")

    @admin.action(description="Deactivate selected operators (no new uploads)")
    def deactivate(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.message_user(request, f"{queryset.update(active=False)} operators deactivated.")

    @admin.action(description="Add selected operators to a set")
    def add_to_set(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        data, page = ask_for_object(self, request, queryset, AddToSetForm, "add_to_set", "Add operators to a set")
        if page:
            return page
        data["operator_set"].operators.add(*queryset)
        best_verdicts.sets_changed(set_ids=[data["operator_set"].pk])
        self.message_user(request, f"{queryset.count()} operators added to {data['operator_set']}.")
        return None


@admin.register(OperatorSet)
class OperatorSetAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "public", "builtin", "operator_count", "position")
    list_filter = ("public", "builtin")
    search_fields = ("slug", "title")
    filter_horizontal = ("operators",)
    prepopulated_fields = {"slug": ("title",)}
    actions = ("rejudge_on_chip",)

    @admin.action(description="Re-judge selected sets' latest public kernels on a chip")
    def rejudge_on_chip(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        data, page = ask_for_object(
            self, request, queryset, RejudgeChipForm, "rejudge_on_chip", "Re-judge on a chip by today's judge"
        )
        if page:
            return page
        for operator_set in queryset:
            try:
                batch = rejudge_set(
                    operator_set=operator_set,
                    chip=data["chip"],
                    stale_only=data["stale_only"],
                    requested_by=request.user,
                )
            except RejudgeRefused as refused:
                self.message_user(request, f"{operator_set.slug}: {refused}", messages.WARNING)
                continue
            link = reverse("leaderboard:rejudge", args=[batch.pk])
            self.message_user(
                request,
                format_html(
                    '{}: {} runs queued on {}; <a href="{}">what changed</a>',
                    operator_set.slug,
                    batch.runs.count(),
                    data["chip"].slug,
                    link,
                ),
                messages.SUCCESS,
            )
        return None

    @admin.display(description="Operators")
    def operator_count(self, obj: OperatorSet) -> int:
        return obj.operators.count()

    # A set's members change the boards' totals over it (the members are saved with the related objects).
    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        best_verdicts.sets_changed(set_ids=[form.instance.pk])

    def delete_model(self, request: HttpRequest, obj: OperatorSet) -> None:
        pk = obj.pk
        super().delete_model(request, obj)
        best_verdicts.sets_changed(set_ids=[pk])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        pks = list(queryset.values_list("pk", flat=True))
        super().delete_queryset(request, queryset)
        best_verdicts.sets_changed(set_ids=pks)


@admin.register(Method)
class MethodAdmin(KeepsBestVerdicts, admin.ModelAdmin):
    list_display = ("scaffold", "model", "kind", "owner", "public", "created_at")
    list_filter = ("kind", "public")
    search_fields = ("scaffold", "model", "owner__username")

    def verdict_scope(self, pks: list[Any]) -> dict[str, list[Any]]:
        return {"methods": pks}


class KernelInline(admin.TabularInline):
    model = Kernel
    fields = ("operator", "filename", "round", "total_tokens", "solve_seconds", "sha256")
    readonly_fields = fields
    extra = 0
    show_change_link = True


@admin.register(Submission)
class SubmissionAdmin(KeepsBestVerdicts, admin.ModelAdmin):
    list_display = ("id", "method", "owner", "visibility", "target_chip", "kernel_count", "created_at")
    list_filter = ("visibility", "target_chip", "method__kind")
    search_fields = ("method__scaffold", "method__model", "owner__username", "notes")
    inlines = (KernelInline,)
    actions = ("rerun_on_chip",)

    def verdict_scope(self, pks: list[Any]) -> dict[str, list[Any]]:
        return {"submissions": pks}

    @admin.display(description="Kernels")
    def kernel_count(self, obj: Submission) -> int:
        return obj.kernels.count()

    @admin.action(description="Re-run selected submissions on a chip")
    def rerun_on_chip(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        data, page = ask_for_object(self, request, queryset, ChipChoiceForm, "rerun_on_chip", "Re-run on a chip")
        if page:
            return page
        runs = runs_create_for_kernels(kernels=Kernel.objects.filter(submission__in=queryset), chips=[data["chip"]])
        self.message_user(request, f"{len(runs)} runs queued on {data['chip']}.", messages.SUCCESS)
        return None


@admin.register(Kernel)
class KernelAdmin(KeepsBestVerdicts, admin.ModelAdmin):
    list_display = ("id", "operator", "submission", "round", "total_tokens", "solve_seconds", "created_at")
    list_filter = ("operator__source",)
    search_fields = ("operator__operator_id", "sha256", "filename")
    readonly_fields = ("sha256",)

    def verdict_scope(self, pks: list[Any]) -> dict[str, list[Any]]:
        return {"kernels": pks}


@admin.register(PaperResult)
class PaperResultAdmin(admin.ModelAdmin):
    list_display = ("table", "method", "model", "view", "platform", "accuracy_pct", "speedup_geomean")
    list_filter = ("table", "view", "platform")
    search_fields = ("method", "model")


@admin.register(PaperCost)
class PaperCostAdmin(admin.ModelAdmin):
    list_display = (
        "method",
        "model",
        "platform",
        "operator_set",
        "total_tokens_millions",
        "tokens_per_passed_operator_millions",
        "total_hours",
    )


# Deleting an account deletes its submissions, and with them their runs.
User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(KeepsBestVerdicts, UserAdmin):
    refresh_on_save = False

    def verdict_scope(self, pks: list[Any]) -> dict[str, list[Any]]:
        return {"owners": pks}
