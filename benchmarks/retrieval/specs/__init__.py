"""The labelled sessions, one module per project. `all_specs()` is the data set."""

from __future__ import annotations

from ._base import NOW, Spec
from . import billing, data, distractors, infra, mobile, plume, shop


def all_specs() -> list[Spec]:
    specs = [*shop.specs(), *billing.specs(), *infra.specs(), *mobile.specs(), *data.specs(), *plume.specs(),
             *distractors.specs()]
    keys = [s.key for s in specs]
    dupes = {k for k in keys if keys.count(k) > 1}
    if dupes:
        raise ValueError(f"duplicate session keys: {sorted(dupes)}")
    return specs


__all__ = ["NOW", "Spec", "all_specs"]
