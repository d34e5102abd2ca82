"""Routes of /api/. Read endpoints for everything public; writes for submissions, methods, re-runs, bundles."""

from __future__ import annotations

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from leaderboard.api import bundles, tokens, views

app_name = "api"


class Router(DefaultRouter):
    # Operator ids contain dots and colons (aten::add.Tensor): no ``.json`` suffixes; use ?format= instead.
    include_format_suffixes = False


router = Router()
router.register("operators", views.OperatorViewSet, basename="operator")
router.register("operator-sets", views.OperatorSetViewSet, basename="operator-set")
router.register("chips", views.ChipViewSet, basename="chip")
router.register("methods", views.MethodViewSet, basename="method")
router.register("submissions", views.SubmissionViewSet, basename="submission")
router.register("kernels", views.KernelViewSet, basename="kernel")
router.register("runs", views.RunViewSet, basename="run")

urlpatterns = [
    path("leaderboards/", views.LeaderboardView.as_view(), name="leaderboard"),
    path("exports/runs/", views.RunsExportView.as_view(), name="export-runs"),
    path("exports/dataset.jsonl", views.DatasetExportView.as_view(), name="export-dataset"),
    path("bundles/export/", bundles.BundleExportView.as_view(), name="bundle-export"),
    path("bundles/import/", bundles.BundleImportView.as_view(), name="bundle-import"),
    path("me/", views.MeView.as_view(), name="me"),
    path("token/", tokens.token_page, name="token"),
    path("token/obtain/", tokens.ObtainTokenView.as_view(), name="token-obtain"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file (no inline script: docs/csp.md); ReDoc with
    # our template (no web fonts from outside hosts).
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema", template_name="api/redoc.html"), name="redoc"),
    path("", include(router.urls)),
]
