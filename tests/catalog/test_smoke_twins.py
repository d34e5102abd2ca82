"""The smoke tier's derived twins: what a twin keeps of its public case, that the data file is current, and
that the registry appends them (a bug living in a structure only the public grid had fails through one:
tests/evaluation/judge/test_judge_smoke_twins.py)."""

from __future__ import annotations

import json

from evaluation.catalog import smoke_twins
from evaluation.catalog.registry import all_operators, records_as_written
from evaluation.catalog.spec import Case


def test_a_twin_shrinks_every_size_by_one_map_keeping_zeros_ones_and_equal_sizes():
    public = Case(
        "add_Tensor", {"shape": [16, 128, 64, 60], "other_shape": [1, 128, 1, 60], "dtype": "float16", "alpha": 2}
    )

    twin = smoke_twins.shrink(public)

    # 16, 60, 64, 128 in increasing order become 3, 5, 7, 11; the broadcast's 1s and matching dims stay.
    assert twin.params["shape"] == [3, 11, 7, 5]
    assert twin.params["other_shape"] == [1, 11, 1, 5]
    assert twin.params["alpha"] == 2 and twin.params["dtype"] == "float16"
    assert smoke_twins.structure(twin) == smoke_twins.structure(public)
    assert not twin.timed


def test_small_sizes_are_kept_and_a_reduction_length_shrinks_with_its_dims():
    public = Case("sum_dim_IntList", {"shape": [2, 600], "dim": 1, "dtype": "float32"}, reduce_dim=600)

    twin = smoke_twins.shrink(public)

    # 2 keeps its own (smaller) value; 600 maps as late in the shrunk sizes as it must to keep a few hundred
    # values, here to the last one (2 x 47 is the most a two-size case gets).
    assert twin.params["shape"] == [2, smoke_twins.SHRUNK_SIZES[-1]]
    assert twin.reduce_dim == smoke_twins.SHRUNK_SIZES[-1]  # the tolerance's atol scales with the reduction done


def test_structure_tells_apart_ranks_broadcasts_dim_positions_and_flags_but_not_sizes_or_dtypes():
    def key(**params):
        return smoke_twins.structure(Case("amin", {"dtype": "float32", **params}))

    assert key(shape=[4, 17], dim=[1], keepdim=False) == key(shape=[1024, 3], dim=[-1], keepdim=False, dtype="bfloat16")
    assert key(shape=[4, 17], dim=[1], keepdim=False) != key(shape=[4, 17], dim=[1], keepdim=True)
    assert key(shape=[4, 17, 3], dim=[1], keepdim=False) != key(shape=[4, 17, 3], dim=[2], keepdim=False)
    assert key(shape=[4, 17], dim=[1], keepdim=False) != key(shape=[4, 1], dim=[1], keepdim=False)


def test_the_twins_file_holds_every_candidate_kept_or_dropped_with_a_reason():
    # Deriving runs each candidate's reference (a minute); this only checks that the file answers every
    # candidate the records give now, so a changed grid or smoke tier fails here until the script is rerun.
    data = json.loads(smoke_twins.TWINS_FILE.read_text())
    for operator_id, spec in records_as_written().items():
        candidates = [twin.case_id for _, twin in smoke_twins.candidate_twins(spec)]
        kept = [
            Case(item["entry_point"], item["params"], reduce_dim=item["reduce_dim"], timed=False).case_id
            for item in data["twins"].get(operator_id, [])
        ]
        dropped = list(data["dropped"].get(operator_id, {}))
        assert sorted(candidates) == sorted(kept + dropped), (
            f"{operator_id}: scripts/derive_smoke_twins.py has not been run since its records changed"
        )


def test_the_registry_appends_the_twins_each_bringing_a_structure_or_a_value_the_tier_lacked():
    twins = smoke_twins.load_twins()
    assert sum(len(cases) for cases in twins.values()) >= 500
    for operator_id, cases in twins.items():
        written = records_as_written()[operator_id]
        assert all_operators()[operator_id].smoke == written.smoke + cases
        if written.source != "aten":  # public cases as they are (bf16 read as fp16), each a value the tier lacked
            public_params = [smoke_twins._interpretable(case.params) for case in written.public]
            assert all(dict(case.params) in public_params for case in cases)
            continue
        public = {smoke_twins.structure(case) for case in written.public}
        structures = {smoke_twins.structure(case) for case in written.smoke}
        seen = set().union(*(smoke_twins.values(case) for case in written.smoke))
        for case in cases:
            new_structure = smoke_twins.structure(case) in public - structures
            new_value = not smoke_twins.values(case) <= seen
            assert new_structure or new_value, case.case_id
            structures.add(smoke_twins.structure(case))
            seen |= smoke_twins.values(case)


def test_no_twin_brings_bfloat16_to_the_interpreter():
    # Triton's CPU interpreter computes bf16 wrongly (judge/interpreter_defects.py): an honest kernel would
    # fail a bf16 twin there; the hand-written cases keep bf16 where the interpreter handles the kernel's.
    assert "bfloat16" not in smoke_twins.TWINS_FILE.read_text()


def test_a_loss_scalar_only_the_public_grid_had_gets_a_twin():
    # smooth_l1_loss_backward's hand-written cases pass beta = 1 only; a kernel that forgets to divide by
    # beta is right there (the second blind corpus round wrote one) and wrong at the public grid's 0.5.
    betas = {case.params["beta"] for case in all_operators()["aten::smooth_l1_loss_backward"].smoke}
    assert 0.5 in betas
