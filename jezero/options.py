"""A connector type's options, declared as a pydantic model: check-config reports a misspelt or
mistyped option with its key before anything runs, and the type's build reads them validated."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from jezero.config import unset_variables_message
from jezero.ingest.files import expand


class Options(BaseModel):
    """The base of every connector type's options: an unknown key is an error, not ignored."""

    model_config = ConfigDict(extra="forbid")


def _folder(value: object) -> object:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a folder path (a string)")
    if "\x00" in value:
        raise ValueError("must be a folder path: a path cannot hold a NUL character")
    unset = unset_variables_message(value)
    if unset:
        raise ValueError(f"must be a folder path whose variables are set: it {unset}")
    return expand(value.strip())


# A folder or file path option: `~` and `$VARS` expanded, an empty or non-string value or one naming a
# variable that is not set refused.
FolderPath = Annotated[Path, BeforeValidator(_folder)]

O = TypeVar("O", bound=BaseModel)


def read_options(model: type[O], options: dict | None, type_name: str) -> O:
    """`options` validated by `model`; a ValueError with one line per problem otherwise (the
    value itself is never echoed: an option may hold a secret by mistake)."""
    try:
        return model.model_validate(dict(options or {}))
    except ValidationError as e:
        known = ", ".join(sorted(model.model_fields)) or "none"
        lines = []
        for err in e.errors():
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                lines.append(f"{type_name}: unknown option {key!r} (known: {known})")
            else:
                lines.append(f"{type_name}: option {key!r} {err['msg'].removeprefix('Value error, ')}")
        raise ValueError("; ".join(lines)) from None
