"""Finding an operator record by id, tolerant of one broken record module.

``registry.get_operator`` imports every record module at once; one module with an import error would stop
every judgement. Here a failing module is skipped and only the one the job needs matters.
"""

from __future__ import annotations

import importlib

from evaluation.catalog.spec import OperatorSpec


def find_operator(operator_id: str) -> OperatorSpec:
    """The record for ``operator_id``; KeyError (with a readable message) when no module defines it."""
    from evaluation.catalog import registry

    try:
        return registry.get_operator(operator_id)
    except KeyError:
        raise
    except Exception:  # some record module is broken: look module by module
        pass
    for module_name in registry.RECORD_MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            continue
        for spec in getattr(module, "OPERATORS", []):
            if spec.operator_id == operator_id:
                return spec
    raise KeyError(f"unknown operator {operator_id!r}")
