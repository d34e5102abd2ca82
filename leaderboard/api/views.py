"""API views: parse, authorise, call one selector or service, serialise. Private objects are filtered out of
querysets (a 404 for those who may not see them); writes go through leaderboard.services and
evaluation.services only."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import mixins, status, viewsets
from rest_framework import serializers as drf_fields
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.models import Chip, Run
from evaluation.services import run_rerun
from leaderboard import access, importers, intake, reads, selectors
from leaderboard.api import exports, serializers
from leaderboard.api.filters import KernelFilter, MethodFilter, OperatorFilter, RunFilter, SubmissionFilter
from leaderboard.api.permissions import IsStaff, ReadOnlyOrAuthenticatedCreate
from leaderboard.models import Kernel, Method, Operator, OperatorSet
from leaderboard.services import KernelUpload, SubmissionRejected, method_get_or_create

CHIP_PARAMETER = OpenApiParameter("chip", str, required=True, description="Chip slug, e.g. nvidia-h200")


def operator_prompt_text(operator_id: str, chip_slug: str) -> str | None:
    """The generator's prompt for an operator on a chip; None where the catalog has no record (or no prompts)."""
    try:
        from evaluation.catalog.prompts import operator_prompt
        from evaluation.catalog.registry import get_operator
    except ImportError:  # the prompt module is optional for the API: the rest works without it
        return None
    try:
        spec = get_operator(operator_id)
    except KeyError:
        return None
    return operator_prompt(spec, chip_slug)


def _prompt_item(operator: Operator, chip_slug: str) -> dict[str, Any]:
    return {
        "operator_id": operator.operator_id,
        "chip": chip_slug,
        "file_name": operator.file_stem + ".py",
        "prompt": operator_prompt_text(operator.operator_id, chip_slug),
    }


def _chip_slug(request: Request) -> str:
    slug = request.query_params.get("chip", "").strip()
    if not slug:
        raise ValidationError({"chip": "give the chip the prompt is for, e.g. ?chip=nvidia-h200"})
    if not Chip.objects.filter(slug=slug).exists():
        raise NotFound(f"no chip {slug!r}")
    return slug


# --- Catalog --------------------------------------------------------------------------------------------


class OperatorViewSet(viewsets.ReadOnlyModelViewSet):
    """The benchmark's operators with entry points and public cases (never the held-out ones)."""

    queryset = Operator.objects.prefetch_related("sets").order_by("source", "operator_id")
    lookup_field = "operator_id"
    lookup_value_regex = r"[^/]+"
    filterset_class = OperatorFilter

    def get_serializer_class(self):
        return serializers.OperatorDetailSerializer if self.action == "retrieve" else serializers.OperatorSerializer

    @extend_schema(parameters=[CHIP_PARAMETER], responses=serializers.PromptSerializer)
    @action(detail=True, methods=["get"])
    def prompt(self, request: Request, operator_id: str | None = None) -> Response:
        """The text a generator is given for this operator on a chip."""
        operator = self.get_object()
        return Response(_prompt_item(operator, _chip_slug(request)))


class OperatorSetViewSet(viewsets.ReadOnlyModelViewSet):
    """Named groups of operators a leaderboard is computed over."""

    lookup_field = "slug"

    def get_queryset(self) -> QuerySet[OperatorSet]:
        sets = OperatorSet.objects.annotate(operator_count=Count("operators"))
        if not self.request.user.is_staff:
            sets = sets.filter(public=True)
        return sets.order_by("position", "slug")

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.OperatorSetDetailSerializer
        return serializers.OperatorSetSerializer

    @extend_schema(parameters=[CHIP_PARAMETER], responses=serializers.PromptSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def prompts(self, request: Request, slug: str | None = None) -> Response:
        """Every operator's prompt for the chip: a prompt pack for a generation run."""
        operator_set = self.get_object()
        chip_slug = _chip_slug(request)
        return Response([_prompt_item(op, chip_slug) for op in operator_set.operators.order_by("operator_id")])


class ChipViewSet(viewsets.ReadOnlyModelViewSet):
    """Chips kernels are judged on, with whether a worker serves them now."""

    queryset = Chip.objects.filter(active=True).order_by("slug")
    serializer_class = serializers.ChipSerializer
    lookup_field = "slug"


# --- Methods --------------------------------------------------------------------------------------------


@extend_schema_view(
    create=extend_schema(
        request=serializers.MethodCreateSerializer,
        responses={200: serializers.MethodSerializer, 201: serializers.MethodSerializer},
    )
)
class MethodViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Methods (scaffold + model) being ranked. Private methods are visible to their owner and staff."""

    serializer_class = serializers.MethodSerializer
    permission_classes = [ReadOnlyOrAuthenticatedCreate]
    filterset_class = MethodFilter

    def get_queryset(self) -> QuerySet[Method]:
        # As the pages list them: a method whose only work is private is not listed for others.
        return reads.listed_methods(user=self.request.user).select_related("owner").order_by("scaffold", "model", "pk")

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Create a method owned by you (200 with the existing one when you already have it)."""
        data = serializers.MethodCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        existed = Method.objects.filter(
            scaffold=fields["scaffold"].strip(), model=fields["model"].strip(), owner=request.user
        ).exists()
        method = method_get_or_create(owner=request.user, **fields)
        return Response(
            serializers.MethodSerializer(method).data, status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED
        )


# --- Submissions, kernels, runs -------------------------------------------------------------------------


@extend_schema_view(
    create=extend_schema(
        request=serializers.SubmissionCreateSerializer,
        responses={201: serializers.SubmissionDetailSerializer, 400: serializers.ProblemsSerializer},
    ),
)
class SubmissionViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Uploads of kernels by a method. Private submissions are their owner's (and staff's) only."""

    permission_classes = [ReadOnlyOrAuthenticatedCreate]
    filterset_class = SubmissionFilter
    parser_classes = [JSONParser]

    def get_queryset(self) -> QuerySet:
        return (
            access.visible_submissions(user=self.request.user)
            .annotate(kernel_count=Count("kernels"))
            .order_by("-created_at", "-pk")
        )

    def get_serializer_class(self):
        if self.action == "list":
            return serializers.SubmissionSerializer
        return serializers.SubmissionDetailSerializer

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Create a submission from a JSON list of kernels; validated whole, saved whole or not at all."""
        data = serializers.SubmissionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        uploads = [
            KernelUpload(
                operator_id=item["operator_id"],
                source_code=item["code"],
                filename=item["filename"],
                round=item["round"],
                **{
                    name: item.get(name)
                    for name in (
                        "input_tokens",
                        "output_tokens",
                        "cache_creation_tokens",
                        "cache_read_tokens",
                        "total_tokens",
                        "solve_seconds",
                    )
                },
            )
            for item in options.pop("kernels")
        ]
        return self._create(request, options, uploads)

    @extend_schema(
        request={"multipart/form-data": serializers.SubmissionImportSerializer},
        responses={201: serializers.SubmissionDetailSerializer, 400: serializers.ProblemsSerializer},
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[MultiPartParser, FormParser],
        permission_classes=[IsAuthenticated],
    )
    def import_run(self, request: Request) -> Response:
        """Create a submission from an archive of a KernelGenBench run directory (kernels/, progress.json)."""
        data = serializers.SubmissionImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        archive = options.pop("archive")
        run = importers.read_run_archive(data=archive.read(), filename=archive.name)
        if run.problems:
            return Response({"problems": run.problems}, status=status.HTTP_400_BAD_REQUEST)
        options["notes"] = "\n".join(part for part in (options["notes"], run.summary_note()) if part)
        return self._create(request, options, run.uploads)

    @extend_schema(responses=serializers.ProgressSerializer)
    @action(detail=True, methods=["get"], pagination_class=None)
    def progress(self, request: Request, pk: str | None = None) -> Response:
        """Counts and per-run statuses; what `kgb submit` and `kgb status` poll."""
        return Response(serializers.progress_data(self.get_object()))

    def _create(self, request: Request, options: dict[str, Any], uploads: list[KernelUpload]) -> Response:
        """Through the one upload intake the web forms use: chips, method and checks resolved there."""
        try:
            submission = intake.submission_intake(
                owner=request.user,
                uploads=uploads,
                options=intake.IntakeOptions(
                    method_id=options.get("method_id"),
                    scaffold=options.get("scaffold", ""),
                    model=options.get("model", ""),
                    kind=options["kind"],
                    chip_slugs=options["chips"],
                    target_chip_slug=options.get("target_chip"),
                    visibility=options["visibility"],
                    notes=options["notes"],
                ),
            )
        except SubmissionRejected as rejected:
            return Response({"problems": rejected.problems}, status=status.HTTP_400_BAD_REQUEST)
        submission = self.get_queryset().get(pk=submission.pk)
        body = serializers.SubmissionDetailSerializer(submission, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)


class KernelViewSet(viewsets.ReadOnlyModelViewSet):
    """Kernel files; the code of a private submission is shown to its owner and staff only."""

    filterset_class = KernelFilter

    def get_queryset(self) -> QuerySet[Kernel]:
        visible = access.visible_submissions(user=self.request.user)
        return (
            Kernel.objects.filter(submission__in=visible)
            .select_related("operator", "submission")
            .prefetch_related("runs__chip")
            .order_by("pk")
        )

    def get_serializer_class(self):
        return serializers.KernelDetailSerializer if self.action == "retrieve" else serializers.KernelSerializer


class RunViewSet(viewsets.ReadOnlyModelViewSet):
    """Verdicts: one kernel judged on one chip, with per-case results in the detail."""

    filterset_class = RunFilter

    def get_queryset(self) -> QuerySet[Run]:
        visible = access.visible_submissions(user=self.request.user)
        return (
            Run.objects.filter(kernel__submission__in=visible)
            .select_related("chip", "kernel__operator", "kernel__submission")
            .order_by("-created_at", "-pk")
        )

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.RunDetailSerializer
        return serializers.RunSerializer

    @extend_schema(request=serializers.RerunSerializer, responses={201: serializers.RunSerializer})
    @action(detail=True, methods=["post"], permission_classes=[IsStaff])
    def rerun(self, request: Request, pk: str | None = None) -> Response:
        """Judge the run's kernel again as a new run (staff). The old verdict stays as it was."""
        run = self.get_object()
        data = serializers.RerunSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        new_run = run_rerun(run=run, chip=data.validated_data.get("chip"))
        new_run = self.get_queryset().get(pk=new_run.pk)
        return Response(serializers.RunSerializer(new_run).data, status=status.HTTP_201_CREATED)


# --- Leaderboards and exports ----------------------------------------------------------------------------


class LeaderboardView(APIView):
    """The leaderboard of a chip and an operator set: the same numbers, by the same code, as the page."""

    permission_classes = [AllowAny]
    renderer_classes = [exports.PlainJSONRenderer, BrowsableAPIRenderer, exports.CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("chip", str, description="Chip slug; default: the reference chip (as the page)"),
            OpenApiParameter("set", str, description="Operator set slug; default: the first set (as the page)"),
            OpenApiParameter("operators", bool, description="Include each method's per-operator outcomes"),
            OpenApiParameter("format", str, enum=["json", "csv"]),
        ],
        responses={200: serializers.LeaderboardSerializer, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request: Request) -> Response:
        chips = list(Chip.objects.filter(active=True))
        sets = list(OperatorSet.objects.filter(public=True))
        chip = _pick(
            chips,
            request.query_params.get("chip"),
            next((c for c in chips if c.is_reference_platform), chips[0] if chips else None),
        )
        operator_set = _pick(sets, request.query_params.get("set"), sets[0] if sets else None)
        if chip is None or operator_set is None:
            raise NotFound("no such chip or operator set")
        with_outcomes = request.query_params.get("operators", "").lower() in ("1", "true", "yes")
        rows = selectors.leaderboard_rows(chip=chip, operator_set=operator_set, outcomes=with_outcomes)
        views = [view for view in selectors.SOURCE_VIEWS if rows and view in rows[0].summaries] or ["overall"]
        data = exports.leaderboard_json(rows, with_outcomes=with_outcomes)
        if request.accepted_renderer.format == "csv":
            flat, columns = exports.leaderboard_csv_rows(data, views)
            filename = f"leaderboard-{operator_set.slug}-{chip.slug}.csv"
            return Response(
                exports.rows_to_csv(flat, columns),
                content_type="text/csv",
                headers={"Content-Disposition": f'attachment; filename="{filename}"'},
            )
        return Response({"chip": chip.slug, "set": operator_set.slug, "views": views, "rows": data})


def _pick(items: list, slug: str | None, default):
    if slug:
        return next((item for item in items if item.slug == slug), None)
    return default


class RunsExportView(APIView):
    """Every run you may see (filters as /api/runs/), without per-case results, as CSV or JSON."""

    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer, exports.CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=["json", "csv"]),
            *[OpenApiParameter(name, str) for name in ("operator", "source", "set", "chip", "status")],
            *[OpenApiParameter(name, int) for name in ("method", "submission", "kernel")],
        ],
        responses={
            (200, "application/json"): serializers.RunSerializer(many=True),
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        visible = access.visible_submissions(user=request.user)
        runs = RunFilter(request.query_params, queryset=Run.objects.filter(kernel__submission__in=visible))
        if not runs.is_valid():
            raise ValidationError(runs.errors)
        rows = exports.run_rows(runs.qs.order_by("pk"))
        if request.accepted_renderer.format == "csv":
            response = StreamingHttpResponse(exports.csv_lines(rows, exports.RUN_COLUMNS), content_type="text/csv")
            response["Content-Disposition"] = 'attachment; filename="runs.csv"'
            return response
        return StreamingHttpResponse(exports.json_array_lines(rows), content_type="application/json")


class DatasetExportView(APIView):
    """All public kernels with their runs, one JSON object per line (JSONL)."""

    permission_classes = [AllowAny]

    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.STR})
    def get(self, request: Request) -> StreamingHttpResponse:
        response = StreamingHttpResponse(exports.dataset_lines(), content_type="application/x-ndjson")
        response["Content-Disposition"] = 'attachment; filename="kernelgenbench-web-kernels.jsonl"'
        return response


ME_RESPONSE = OpenApiResponse(
    inline_serializer("Me", {"username": drf_fields.CharField(), "is_staff": drf_fields.BooleanField()})
)


class MeView(APIView):
    """Who the token or session belongs to (``kgb login`` checks its token with this)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ME_RESPONSE)
    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username(), "is_staff": request.user.is_staff})
