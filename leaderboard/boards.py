"""What every board page reads from its query string, and the defaults a first visit lands on.

Each view is fully described by its URL (chip, set, filters, sort, toggles), so a board can be linked, cited
and downloaded exactly as shown; the tabs carry the same parameters from one view to the next.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef
from django.http import HttpRequest, QueryDict

from evaluation.models import Chip
from leaderboard import selectors
from leaderboard.models import BoardTotal, MethodKind, OperatorSet

# Parameters a view change keeps (the board-specific ones, sort and method, stay on their own board).
CARRIED_PARAMETERS = ("chip", "set", "kind", "model", "chips", "paper")


@dataclass
class BoardQuery:
    chips: list[Chip]
    sets: list[OperatorSet]
    chip: Chip | None
    operator_set: OperatorSet | None
    method_filter: selectors.MethodFilter
    sort: str
    show_paper: bool
    picked_chips: list[Chip]
    chips_with_data: set[int]  # ids of the chips with verified public rows on the set
    explicit_chips: bool  # the URL named the chips (else: every active chip)

    def carried(self, *, fixed_set: bool = False) -> QueryDict:
        """The resolved view as query parameters: what tabs, permalinks and downloads append."""
        params = QueryDict(mutable=True)
        if self.chip:
            params["chip"] = self.chip.slug
        if self.operator_set and not fixed_set:
            params["set"] = self.operator_set.slug
        params.setlist("kind", list(self.method_filter.kinds))
        if self.method_filter.model:
            params["model"] = self.method_filter.model
        if self.explicit_chips:
            params.setlist("chips", [chip.slug for chip in self.picked_chips])
        if self.show_paper:
            params["paper"] = "1"
        return params

    def context(self, *, fixed_set: bool = False) -> dict:
        carried = self.carried(fixed_set=fixed_set)
        with_sort = carried.copy()
        if self.sort:
            with_sort["sort"] = self.sort
        return {
            "chips": self.chips,
            "sets": self.sets,
            "chip": self.chip,
            "operator_set": self.operator_set,
            "kinds": MethodKind.choices,
            "picked_kinds": self.method_filter.kinds,
            "model": self.method_filter.model,
            "sort": self.sort,
            "show_paper": self.show_paper,
            "picked_chips": self.picked_chips,
            "curated_sets": [s for s in self.sets if not s.builtin],
            "chips_with_data": self.chips_with_data,
            "board_qs": carried.urlencode(),
            "view_qs": with_sort.urlencode(),
        }


def board_query(
    request: HttpRequest, *, default_set: str = "kgb-ms", fixed_set: OperatorSet | None = None
) -> BoardQuery:
    chips = list(Chip.objects.filter(active=True))
    sets = list(OperatorSet.objects.filter(public=True))
    requested_set = fixed_set or pick(sets, request.GET.get("set"), default=None)
    data_by_set = verified_chip_ids_by_set()
    operator_set = requested_set or _default_set(sets, default_set, data_by_set)
    with_data = data_by_set.get(operator_set.pk, set()) if operator_set else set()
    chip = pick(chips, request.GET.get("chip"), default=None) or default_chip(chips, with_data)
    picked_slugs = set(request.GET.getlist("chips"))
    picked_chips = [c for c in chips if c.slug in picked_slugs]
    kinds = tuple(kind for kind in request.GET.getlist("kind") if kind in MethodKind.values)
    paper = request.GET.get("paper")
    return BoardQuery(
        chips=chips,
        sets=sets,
        chip=chip,
        operator_set=operator_set,
        method_filter=selectors.MethodFilter(kinds=kinds, model=request.GET.get("model", "").strip()[:120]),
        sort=request.GET.get("sort", "")[:64],
        # With no verified rows anywhere, the paper's table is what a first visit should see (labelled).
        show_paper=paper == "1" or (paper is None and not any(data_by_set.values())),
        picked_chips=picked_chips or chips,
        chips_with_data=with_data,
        explicit_chips=bool(picked_chips),
    )


def pick(items: list, slug: str | None, default):
    return next((item for item in items if item.slug == slug), default)


def reference_chip(chips: list[Chip]) -> Chip | None:
    return next((c for c in chips if c.is_reference_platform), None) or (chips[0] if chips else None)


def default_chip(chips: list[Chip], with_data: set[int]) -> Chip | None:
    """The reference platform when it has verified rows, else the first chip that has, else the reference."""
    reference = reference_chip(chips)
    if reference is not None and reference.pk in with_data:
        return reference
    return next((c for c in chips if c.pk in with_data), reference)


def _default_set(sets: list[OperatorSet], slug: str, data_by_set: dict[int, set[int]]) -> OperatorSet | None:
    preferred = pick(sets, slug, default=sets[0] if sets else None)
    if preferred is None or data_by_set.get(preferred.pk):
        return preferred
    return next((s for s in sets if data_by_set.get(s.pk)), preferred)


def verified_chip_ids_by_set() -> dict[int, set[int]]:
    """Operator set id -> ids of the chips with at least one finished public verdict on one of its operators.

    Two small queries: the chips, then per set whether it has totals on each (an index probe each).
    """
    chip_ids = list(Chip.objects.order_by("pk").values_list("pk", flat=True))
    if not chip_ids:
        return {}
    has_rows = {
        f"chip_{chip_id}": Exists(BoardTotal.objects.filter(operator_set=OuterRef("pk"), chip_id=chip_id))
        for chip_id in chip_ids
    }
    result: dict[int, set[int]] = {}
    for set_id, *flags in OperatorSet.objects.order_by().annotate(**has_rows).values_list("pk", *has_rows):
        chips = {chip_id for chip_id, flag in zip(chip_ids, flags, strict=True) if flag}
        if chips:
            result[set_id] = chips
    return result
