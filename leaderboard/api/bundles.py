"""Offline judging over the API (staff): export a chip's queued runs as a job bundle, import its results."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.bundles import BundleRefused, bundle_export, results_import
from leaderboard.api.permissions import IsStaff
from leaderboard.api.serializers import ProblemsSerializer


class BundleExportRequest(serializers.Serializer):
    chip = serializers.SlugField(help_text="Export this chip's queued runs")
    limit = serializers.IntegerField(min_value=1, max_value=5000, default=100)


class BundleExportView(APIView):
    """Claim a chip's queued runs for an offline job bundle and return the signed bundle (staff)."""

    permission_classes = [IsStaff]
    parser_classes = [JSONParser]

    @extend_schema(request=BundleExportRequest, responses={200: OpenApiTypes.OBJECT, 400: ProblemsSerializer})
    def post(self, request: Request) -> Response:
        data = BundleExportRequest(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            bundle = bundle_export(chip_slug=data.validated_data["chip"], limit=data.validated_data["limit"])
        except BundleRefused as refused:
            return Response({"problems": refused.problems}, status=status.HTTP_400_BAD_REQUEST)
        return Response(bundle)


class BundleImportView(APIView):
    """Import a results bundle judged offline (staff); refused whole when anything in it is wrong."""

    permission_classes = [IsStaff]
    parser_classes = [JSONParser]

    @extend_schema(
        parameters=[OpenApiParameter("chip", str, required=True, description="The chip the bundle was for")],
        request=OpenApiTypes.OBJECT,
        responses={200: OpenApiTypes.OBJECT, 400: ProblemsSerializer},
    )
    def post(self, request: Request) -> Response:
        chip = request.query_params.get("chip", "")
        if not chip:
            return Response(
                {"problems": ["give ?chip=<slug>: the chip the bundle was exported for"]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            report = results_import(request.data, chip_slug=chip)
        except BundleRefused as refused:
            return Response({"problems": refused.problems}, status=status.HTTP_400_BAD_REQUEST)
        return Response(report.to_json())
