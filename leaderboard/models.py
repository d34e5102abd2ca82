"""The benchmark's data: operators and their sets, the methods being ranked, and what they submitted.

Chips and per-chip runs live in ``evaluation.models``; the catalog's declarative records (what an operator
*is*) live in ``evaluation.catalog`` and are mirrored here by the loader so pages and queries can use them.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models


class Source(models.TextChoices):
    ATEN = "aten", "ATen"
    VLLM = "vllm", "vLLM"
    CUBLAS = "cublas", "cuBLAS"


class Operator(models.Model):
    """One benchmark operator, as loaded from its catalog record (evaluation.catalog)."""

    operator_id = models.CharField(max_length=128, unique=True, help_text="e.g. aten::cos, vllm13::rms_norm")
    source = models.CharField(max_length=16, choices=Source.choices, db_index=True)
    name = models.CharField(max_length=128)
    description = models.TextField(blank=True)
    # [{"name", "signature", "aten_overload", "mutates", "compare_return"}]
    entry_points = models.JSONField(default=list)
    reference = models.TextField(blank=True, help_text="What the kernel is compared with, in words")
    public_cases = models.JSONField(default=list, help_text="The public tier's cases (never the held-out)")
    smoke_cases = models.JSONField(default=list)
    tolerance_rule = models.TextField(blank=True)
    judgement = models.CharField(max_length=16, default="allclose")
    judgement_notes = models.TextField(blank=True)
    cost_model = models.TextField(blank=True, help_text="How bytes and flops are counted")
    departures = models.TextField(blank=True)
    unavailable_reason = models.TextField(blank=True)
    definition_hash = models.CharField(max_length=64, blank=True)
    version = models.PositiveIntegerField(default=1, help_text="Bumped whenever the definition changes")
    in_mc = models.BooleanField(default=False, help_text="Part of KernelGenBench-MC (multi-chip)")
    active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source", "operator_id"]

    def __str__(self) -> str:
        return self.operator_id

    @property
    def file_stem(self) -> str:
        """``aten::cos`` -> ``aten__cos``, the original benchmark's kernel file name."""
        return self.operator_id.replace("::", "__")


class OperatorSet(models.Model):
    """A named group of operators a leaderboard can be computed over (built-in or curated by admins)."""

    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    operators = models.ManyToManyField(Operator, related_name="sets", blank=True)
    public = models.BooleanField(default=True)
    builtin = models.BooleanField(default=False, help_text="Maintained by the catalog loader")
    position = models.PositiveIntegerField(default=100)

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.slug


class MethodKind(models.TextChoices):
    SINGLE_SHOT = "single_shot", "Single-shot LLM"
    PASS_AT_K = "pass_at_k", "Pass@K"
    AGENT = "agent", "Agent"
    HUMAN = "human", "Human"
    LIBRARY = "library", "Library"


class Method(models.Model):
    """The thing being ranked: a scaffold driving a model (or a human, or a library)."""

    scaffold = models.CharField(max_length=120, help_text='e.g. "Claude Code", "AutoKernel", "Pass@5"')
    model = models.CharField(max_length=120, blank=True, help_text='e.g. "Opus-4.6"')
    kind = models.CharField(max_length=16, choices=MethodKind.choices, default=MethodKind.AGENT)
    link = models.URLField(blank=True)
    model_version = models.CharField(
        max_length=120, blank=True, help_text='The exact model build or snapshot, e.g. "2026-10-01"'
    )
    paper_url = models.URLField(blank=True, help_text="The paper or report describing the method")
    code_url = models.URLField(blank=True, help_text="The method's code (scaffold, prompts)")
    description = models.TextField(blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="methods"
    )
    public = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["scaffold", "model"]
        constraints = [
            models.UniqueConstraint(fields=["scaffold", "model", "owner"], name="method_unique_per_owner"),
        ]

    def __str__(self) -> str:
        return f"{self.scaffold} + {self.model}" if self.model else self.scaffold


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public"
    PRIVATE = "private", "Private (code visible to the owner and staff only)"


class Submission(models.Model):
    """One upload of kernels by one method."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    method = models.ForeignKey(Method, on_delete=models.PROTECT, related_name="submissions")
    target_chip = models.ForeignKey(
        "evaluation.Chip",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="targeted_submissions",
        help_text="The chip the kernels were written for, if any",
    )
    visibility = models.CharField(max_length=8, choices=Visibility.choices, default=Visibility.PUBLIC)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"submission {self.pk} by {self.method}"

    @property
    def is_public(self) -> bool:
        return self.visibility == Visibility.PUBLIC


class Kernel(models.Model):
    """One kernel file for one operator within a submission."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="kernels")
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="kernels")
    source_code = models.TextField()
    sha256 = models.CharField(max_length=64, db_index=True)
    filename = models.CharField(max_length=255, blank=True)
    input_tokens = models.BigIntegerField(null=True, blank=True)
    output_tokens = models.BigIntegerField(null=True, blank=True)
    cache_creation_tokens = models.BigIntegerField(null=True, blank=True)
    cache_read_tokens = models.BigIntegerField(null=True, blank=True)
    total_tokens = models.BigIntegerField(null=True, blank=True)
    solve_seconds = models.FloatField(null=True, blank=True)
    round = models.PositiveIntegerField(default=1, help_text="Pass@K round (1-based)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["operator__operator_id", "round"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "operator", "round"], name="kernel_unique_per_round"),
        ]

    def __str__(self) -> str:
        return f"{self.operator} (round {self.round}) of submission {self.submission_id}"

    @staticmethod
    def hash_source(source_code: str) -> str:
        return hashlib.sha256(source_code.encode("utf-8")).hexdigest()


class PaperResult(models.Model):
    """A number reported in the KernelGenBench paper: shown beside verified results, never mixed in."""

    table = models.CharField(max_length=8)  # "MS" or "MC"
    method = models.CharField(max_length=120)
    model = models.CharField(max_length=120)
    view = models.CharField(max_length=16)  # overall / aten / vllm / cublas
    platform = models.CharField(max_length=64)
    accuracy_pct = models.FloatField(null=True, blank=True)
    speedup_geomean = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["table", "method", "model", "platform", "view"]
        constraints = [
            models.UniqueConstraint(
                fields=["table", "method", "model", "view", "platform"], name="paper_result_unique"
            ),
        ]


class PaperCost(models.Model):
    """Token and time cost reported in the paper (MS set)."""

    method = models.CharField(max_length=120)
    model = models.CharField(max_length=120)
    platform = models.CharField(max_length=64)
    operator_set = models.CharField(max_length=16)
    total_tokens_millions = models.FloatField()
    tokens_per_passed_operator_millions = models.FloatField()
    total_hours = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["method", "model", "platform", "operator_set"], name="paper_cost_unique"),
        ]


class BestVerdict(models.Model):
    """What the boards read instead of scanning runs: one row per (method, operator, chip, native) that has a
    finished public verdict, kept by ``leaderboard.best_verdicts`` in the transaction of every write that
    changes it (a verdict recorded, visibility or ownership edited, runs deleted) and rebuilt from the runs by
    ``manage.py rebuild_best_verdicts``.

    A run counts if its submission is public and its method public (PROTOCOL 7). ``native``: the kernels were
    written for this chip or for no chip in particular (ranked here); the others were ported (portability).
    Per kernel only its latest finished run counts, as on the boards. Whether the deciding verdict is stale is
    decided when read, from its versions: operator and judge versions move without touching this table.
    """

    # Indexed by the unique constraint (method first) and the (chip, operator) index.
    method = models.ForeignKey(Method, on_delete=models.CASCADE, db_index=False, related_name="+")
    operator = models.ForeignKey(Operator, on_delete=models.CASCADE, db_index=False, related_name="+")
    chip = models.ForeignKey("evaluation.Chip", on_delete=models.CASCADE, db_index=False, related_name="+")
    native = models.BooleanField()
    # Over each kernel's latest finished run here:
    attempts = models.PositiveIntegerField(help_text="Kernels with a finished verdict here")
    tokens = models.BigIntegerField(help_text="Their tokens, failed attempts included")
    solve_seconds = models.FloatField()
    solved = models.BooleanField(help_text="Some kernel's latest verdict passed")
    speedup = models.FloatField(null=True, help_text="The deciding (best passing) kernel's; null = unknown")
    log_speedup = models.FloatField(null=True, help_text="ln(speedup) where positive: boards sum it for geomeans")
    # The same deciding kernel's protocol speedup (PROTOCOL 6, the paper's): the kernel is chosen by the
    # device-time speedup above, so both figures of an operator are one kernel's.
    protocol_speedup = models.FloatField(null=True, help_text="The deciding kernel's protocol speedup; null = unknown")
    log_protocol_speedup = models.FloatField(null=True, help_text="ln(protocol_speedup) where positive")
    # How much of that figure is the launch race (evaluation.Run.protocol_launch_bound_share): boards show it
    # beside the protocol speedup, which moves 51-93 % between machines where nearly every case is launch-bound.
    protocol_launch_bound_share = models.FloatField(
        null=True,
        help_text="The deciding kernel's share of protocol-timed cases that are launch-bound (0-1); null = unknown",
    )
    flagged = models.BooleanField()
    operator_version = models.PositiveIntegerField(null=True, help_text="The deciding run's")
    judge_version = models.PositiveIntegerField(null=True, help_text="The deciding run's")
    # Over every finished run here, re-judgements included:
    runs = models.PositiveIntegerField()
    standing_run = models.ForeignKey(
        "evaluation.Run",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
        help_text="The operator page's run: the best clean pass, else the latest failure",
    )
    standing_passed = models.BooleanField()
    link_run = models.ForeignKey(
        "evaluation.Run",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
        help_text="The pass matrix's run: the fastest pass, else the latest verdict",
    )
    link_passed = models.BooleanField()
    link_speedup = models.FloatField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["method", "operator", "chip", "native"], name="best_verdict_unique"),
        ]
        indexes = [
            models.Index(fields=["chip", "operator"], name="best_verdict_chip_operator"),
            # Speedup figures (the matched board, the speedup plot) read only the clean passes with a known
            # speedup of kernels written for the chip: from the index alone on PostgreSQL (it includes the
            # speedup), instead of every row of the chip from the table.
            models.Index(
                fields=["chip", "operator", "method"],
                include=["speedup"],
                condition=models.Q(native=True, solved=True, flagged=False, speedup__isnull=False),
                name="best_verdict_clean_speedup",
            ),
            # The same for the protocol speedup and the launch-bound share beside it (the matched board's
            # ?figure=protocol, the protocol plots): both read in one scan of this index alone.
            models.Index(
                fields=["chip", "operator", "method"],
                include=["protocol_speedup", "protocol_launch_bound_share"],
                condition=models.Q(native=True, solved=True, flagged=False, protocol_speedup__isnull=False),
                name="best_verdict_clean_protocol",
            ),
        ]

    def __str__(self) -> str:
        return f"best verdict of method {self.method_id} on {self.operator_id} / chip {self.chip_id}"


class RooflinePoint(models.Model):
    """A point the roofline plot may draw: a counted run (public work, a kernel written for its chip or for
    none) that passed with a known speedup, and the share of the roofline it reached (the geometric mean over
    its timed cases of floor time / measured time; null when no case says). The plot reads two numbers per
    point instead of every run's per-case results. Kept with the best verdicts, group by group, by
    ``leaderboard.best_verdicts``; deleting the run deletes its point."""

    run = models.OneToOneField("evaluation.Run", primary_key=True, on_delete=models.CASCADE, related_name="+")
    chip = models.ForeignKey("evaluation.Chip", on_delete=models.CASCADE, db_index=False, related_name="+")
    method = models.ForeignKey(Method, on_delete=models.CASCADE, related_name="+")
    operator = models.ForeignKey(Operator, on_delete=models.CASCADE, db_index=False, related_name="+")
    speedup = models.FloatField()
    fraction = models.FloatField(null=True)

    class Meta:
        indexes = [models.Index(fields=["chip", "-run"], name="roofline_point_chip_run")]

    def __str__(self) -> str:
        return f"roofline point of run {self.run_id}"


class BoardTotal(models.Model):
    """A board's figures before their last division: per operator set, method, chip, nativeness and operator
    source, the counts and sums of the best-verdict rows of the set's operators (``metrics.OutcomeTotals``).
    A board reads a few of these per method instead of a row per operator. Kept by ``leaderboard.
    best_verdicts`` with the rows they sum, and whenever a set's members or an operator's version change.

    Staleness is kept in two parts: verdicts against an older version of their operator than it had when
    these were written (``stale_by_operator``), and the other solved rows counted by the judge version that
    made them (``solved_by_judge``), so a newer judge makes them stale when read, with no write.
    """

    operator_set = models.ForeignKey(OperatorSet, on_delete=models.CASCADE, related_name="+")
    method = models.ForeignKey(Method, on_delete=models.CASCADE, db_index=False, related_name="+")
    chip = models.ForeignKey("evaluation.Chip", on_delete=models.CASCADE, db_index=False, related_name="+")
    native = models.BooleanField()
    source = models.CharField(max_length=16, choices=Source.choices)
    outcomes = models.PositiveIntegerField()
    solved = models.PositiveIntegerField(help_text="Passed cleanly (not flagged)")
    covered = models.PositiveIntegerField(help_text="Of those, with a known speedup")
    logged = models.PositiveIntegerField(help_text="Of those, with a positive speedup")
    log_sum = models.FloatField(help_text="Their speedups' natural logarithms, summed")
    # The protocol's speedup (PROTOCOL 6) over the same clean passes: older verdicts have none.
    protocol_covered = models.PositiveIntegerField(default=0, help_text="Clean passes with a known protocol speedup")
    protocol_logged = models.PositiveIntegerField(default=0, help_text="Of those, with a positive protocol speedup")
    protocol_log_sum = models.FloatField(default=0.0, help_text="Their protocol speedups' logarithms, summed")
    faster_than_0_8 = models.PositiveIntegerField()
    faster_than_1 = models.PositiveIntegerField()
    faster_than_1_5 = models.PositiveIntegerField()
    protocol_faster_than_0_8 = models.PositiveIntegerField(default=0, help_text="Clean protocol speedups over 0.8")
    protocol_faster_than_1 = models.PositiveIntegerField(default=0, help_text="Clean protocol speedups over 1")
    protocol_faster_than_1_5 = models.PositiveIntegerField(default=0, help_text="Clean protocol speedups over 1.5")
    # The launch-bound share of those protocol speedups, summed: a board's share is their mean over operators.
    protocol_launch_bound_covered = models.PositiveIntegerField(
        default=0, help_text="Clean passes with a known protocol speedup and a known launch-bound share"
    )
    protocol_launch_bound_sum = models.FloatField(default=0.0, help_text="Their launch-bound shares, summed")
    tokens = models.BigIntegerField()
    solve_seconds = models.FloatField()
    stale_by_operator = models.PositiveIntegerField()
    solved_by_judge = models.JSONField(default=dict, help_text='{"<judge version>": solved rows not stale by operator}')

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["operator_set", "method", "chip", "native", "source"], name="board_total_unique"
            ),
        ]
        indexes = [models.Index(fields=["operator_set", "chip"], name="board_total_set_chip")]

    def __str__(self) -> str:
        return f"totals of method {self.method_id} on set {self.operator_set_id} / chip {self.chip_id}"


class BoardGeneration(models.Model):
    """A counter per thing the boards' figures are made from ("method:<id>": its best verdicts, "set:<id>": a
    set's totals), bumped in the transaction of every write to it. Writers of one thing queue on its row (an
    UPDATE's lock, on every database), and the boards' memo is keyed on the sum, which only grows (rows are
    never deleted)."""

    key = models.CharField(max_length=40, unique=True)
    generation = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.key} at {self.generation}"
