"""The dispatch audit's policy as data: which aten ops a wrapper may run around its launches, and the
budgets for reading data back to the host and for drawing seeds (guard.AuditMode applies them; docs/judge.md,
"Convicted by behaviour")."""

from __future__ import annotations

# aten overload packets a wrapper may run on the host side of a launch.
ALLOWED_ATEN = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "empty_permuted",
        "new_empty",
        "new_empty_strided",
        "new_zeros",
        "new_ones",
        "new_full",
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "fill",
        "fill_",
        "zero",
        "zero_",
        "arange",
        "scalar_tensor",
        "lift_fresh",
        "lift_fresh_copy",
        "clone",
        "contiguous",
        "detach",
        "alias",
        # Lazily conjugated or negated views flip a bit, no value (resolve_conj's prompt names self.conj())
        "_conj",
        "conj",
        "_neg_view",
        "view",
        "_unsafe_view",
        "reshape",
        "_reshape_alias",
        "as_strided",
        "expand",
        "permute",
        "transpose",
        "t",
        "unsqueeze",
        "squeeze",
        "select",
        "slice",
        "narrow",
        "unfold",
        "split",
        "split_with_sizes",
        "chunk",
        "unbind",
        "diagonal",
        "view_as_real",
        "view_as_complex",
        "movedim",
        "resize_",
        "set_",
        "is_same_size",
        "_to_copy",
        "copy_",
        "unflatten",
        "flatten",
        "_reshape_copy",
        "expand_copy",
        "view_copy",
        "sym_size",
        "sym_stride",
        "sym_numel",
        "sym_storage_offset",
        "is_contiguous",
        "detach_",
        "_has_compatible_shallow_copy_type",
        # Dtype arithmetic: type promotion reads dtypes (and a 0-dim operand's category), never tensor data.
        "promote_types",
        "result_type",
        "can_cast",
    }
)
ALLOCATING_ATEN = frozenset(
    {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
)
DTYPE_CHANGING_COPIES = frozenset({"_to_copy", "copy_"})
# Reading tensor data back to the host is how a wrapper learns what Triton computed for it (the count that
# sizes an output, one flag); reading more is computing on the host. A call may read this many elements,
# whatever the size of its inputs. Counted: ``.item()`` and copies from a device to the host (``.cpu()``,
# ``.tolist()`` and ``.numpy()`` of device tensors go through them). CPU tensors are the host already: on the
# CPU interpreter only ``.item()`` is counted, and ghost replays catch host math there.
HOST_READ_BUDGET = 64
SCALAR_READS = frozenset({"_local_scalar_dense", "item"})
# Drawing a seed for a Triton RNG from torch's generator (``torch.randint(..., (1,), generator=g)``) is how
# random kernels honour ``generator=``: integer draws of at most this many elements are generator state, not
# the operator's work (no catalog operator is an integer draw).
SEED_DRAWS = frozenset({"random_", "random", "randint"})
SEED_DRAW_MAX_ELEMENTS = 2
