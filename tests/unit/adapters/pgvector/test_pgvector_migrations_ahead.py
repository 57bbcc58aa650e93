"""pgvector's migrations started ahead (`adapters.pgvector.migrations_ahead`): the backend
takes their result only when they were started for its database and options and succeeded;
otherwise it migrates itself (and reports its own error)."""

from __future__ import annotations

from concurrent.futures import Future

from factledger.adapters.pgvector.migrations_ahead import MigrationsAhead
from factledger.adapters.pgvector.schema import SchemaOptions

OPTIONS = SchemaOptions("pgvector", "factledger_app", 384)


def ahead(result: list[int] | Exception) -> MigrationsAhead:
    future: Future[list[int]] = Future()
    if isinstance(result, Exception):
        future.set_exception(result)
    else:
        future.set_result(result)
    return MigrationsAhead("dbname=one", OPTIONS, future)


async def test_the_result_is_taken_for_the_same_database_and_options() -> None:
    assert await ahead([1, 2, 13]).applied("dbname=one", OPTIONS) == [1, 2, 13]


async def test_another_database_or_dimension_migrates_itself() -> None:
    other = SchemaOptions("pgvector", "factledger_app", 768)
    assert await ahead([1]).applied("dbname=two", OPTIONS) is None
    assert await ahead([1]).applied("dbname=one", other) is None


async def test_a_failed_migration_ahead_leaves_the_backend_to_migrate() -> None:
    assert await ahead(OSError("connection refused")).applied("dbname=one", OPTIONS) is None
