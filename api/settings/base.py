"""The base of every nested settings model."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from factledger.adapters.sql_names import SQL_NAME

# Every nested settings model refuses unknown keys: a misspelt option is a start-up error
# naming it, never an option silently ignored.
FORBID_EXTRA = ConfigDict(extra="forbid")


class NestedSettings(BaseModel):
    """Base of the nested settings models (see `FORBID_EXTRA`)."""

    model_config = FORBID_EXTRA


# A PostgreSQL schema or role name (`adapters.sql_names`, which the adapters check too).
SqlName = Annotated[str, Field(pattern=SQL_NAME.pattern)]
