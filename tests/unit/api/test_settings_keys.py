"""Settings have one definition per rule: recall settings are `RecallPolicy`'s fields, nested
settings refuse unknown keys (naming them, never echoing values), schema names share a type."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, get_args, get_origin

import pytest
from pydantic import BaseModel

from factledger.adapters.sql_names import sql_name
from factledger.api.bootstrap.services import recall_policies
from factledger.api.settings import Settings, SettingsError, load_settings, unknown_sections
from factledger.application.recall.policy import RecallPolicy

POLICY_FIELDS = [f.name for f in dataclasses.fields(RecallPolicy)]


def _another_value(name: str) -> Any:
    """A valid value other than the field's default."""
    default = getattr(RecallPolicy(), name)
    if isinstance(default, bool):
        return not default
    if isinstance(default, Enum):
        return next(member for member in type(default) if member is not default)
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default + 0.25
    if default is None and name == "under_floor":
        return 0.2  # a number where the default is off (ADR 0150)
    raise AssertionError(f"no test value for {name}")


def _env_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value.value if isinstance(value, Enum) else value)


@pytest.mark.parametrize("name", POLICY_FIELDS)
def test_every_policy_field_is_settable_through_the_constructor(name: str) -> None:
    value = _another_value(name)
    policies = recall_policies(load_settings(recall={name: value}).recall)
    assert getattr(policies.default, name) == value
    assert type(policies.default) is RecallPolicy


@pytest.mark.parametrize("name", POLICY_FIELDS)
def test_every_policy_field_is_settable_through_the_environment(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = _another_value(name)
    monkeypatch.setenv(f"FACTLEDGER_RECALL__{name.upper()}", _env_text(value))
    monkeypatch.setenv("FACTLEDGER_RECALL__TENANTS", '{"acme": {}}')
    policies = recall_policies(load_settings().recall)
    assert getattr(policies.default, name) == value
    assert getattr(policies.for_tenant("acme"), name) == value


@pytest.mark.parametrize("name", POLICY_FIELDS)
def test_every_policy_field_is_settable_per_tenant(name: str) -> None:
    value = _another_value(name)
    policies = recall_policies(load_settings(recall={"tenants": {"acme": {name: value}}}).recall)
    assert getattr(policies.for_tenant("acme"), name) == value
    assert getattr(policies.default, name) == getattr(RecallPolicy(), name)


def test_a_misspelt_tenant_key_is_named_at_start_up_through_the_constructor() -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(recall={"tenants": {"acme": {"enable": "sekrit-value"}}})
    assert "recall.tenants.acme.enable" in str(refused.value)
    assert "sekrit-value" not in str(refused.value)


def test_a_misspelt_tenant_key_is_named_at_start_up_through_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_RECALL__TENANTS", '{"acme": {"enable": false}}')
    with pytest.raises(SettingsError, match=r"recall\.tenants\.acme\.enable"):
        load_settings()


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"RECALL__ENABLE": "x"}, "recall.enable"),
        ({"SYNC__BATCHSIZE": "x"}, "sync.batchsize"),
        (
            {"SYNC__STORE__KIND": "postgres", "SYNC__STORE__SCHEMA": "x"},
            "sync.store.postgres.schema",
        ),
        ({"API__PORTS": "x"}, "api.ports"),
        ({"EMBEDDER__THREAD": "x"}, "embedder.onnx.thread"),
        (
            {"BACKEND__KIND": "in_memory", "BACKEND__SCHEMA_NAME": "x"},
            "backend.in_memory.schema_name",
        ),
    ],
)
def test_a_misspelt_nested_key_in_the_environment_is_named(
    variables: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable, value in variables.items():
        monkeypatch.setenv(f"FACTLEDGER_{variable}", "sekrit-value" if value == "x" else value)
    with pytest.raises(SettingsError) as refused:
        load_settings()
    assert named in str(refused.value)
    assert "sekrit-value" not in str(refused.value)


def test_a_misspelt_nested_key_in_the_constructor_is_named() -> None:
    with pytest.raises(SettingsError, match=r"auth\.issuers"):
        load_settings(auth={"issuers": "x"})


def _nested_types(annotation: Any) -> list[type]:
    found: list[type] = []
    if isinstance(annotation, type) and (
        issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)
    ):
        found.append(annotation)
        if issubclass(annotation, BaseModel):
            for field in annotation.model_fields.values():
                found += _nested_types(field.annotation)
        else:
            for field in dataclasses.fields(annotation):
                found += _nested_types(annotation.__pydantic_fields__[field.name].annotation)
    for arg in get_args(annotation) if get_origin(annotation) is not None else ():
        found += _nested_types(arg)
    return found


def test_every_nested_settings_model_forbids_unknown_keys() -> None:
    nested = {t for f in Settings.model_fields.values() for t in _nested_types(f.annotation)}
    assert len(nested) > 20  # the walk found the adapters' settings, the recall tenants too
    lenient = sorted(
        t.__name__
        for t in nested
        if (t.model_config if issubclass(t, BaseModel) else t.__pydantic_config__).get("extra")
        != "forbid"
    )
    assert lenient == []


@pytest.mark.parametrize(
    "settings",
    [
        {"event_store": {"kind": "postgres", "schema_name": "Bad-Name"}},
        {"views": {"kind": "postgres", "schema_name": "1views"}},
        {"short_term": {"kind": "postgres", "schema_name": "a" * 64}},
        {"sync": {"store": {"kind": "postgres", "schema_name": "sync;drop"}}},
        {"backend": {"kind": "pgvector", "schema_name": "Memory"}},
        {"backend": {"kind": "pgvector", "app_role": "app-role"}},
    ],
)
def test_every_schema_and_role_name_follows_the_one_sql_name_rule(
    settings: dict[str, Any],
) -> None:
    with pytest.raises(SettingsError):
        load_settings(**settings)


@pytest.mark.parametrize("name", ["Bad-Name", "1views", "a" * 64, "sync;drop", ""])
def test_the_adapters_refuse_the_names_the_settings_refuse(name: str) -> None:
    with pytest.raises(ValueError, match="must match"):
        sql_name(name)


def test_a_name_at_the_length_limit_is_accepted_on_both_sides() -> None:
    name = "a" * 63
    assert sql_name(name) == name
    assert load_settings(views={"kind": "postgres", "schema_name": name}).views.kind == "postgres"


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9000/hook", "http://localhost/h", "http://[fd00::1]/h"]
)
def test_a_webhook_on_an_internal_address_is_refused_naming_the_setting(url: str) -> None:
    endpoint = {"id": "crm", "tenant": "t1", "url": url, "secret": "s" * 32}
    with pytest.raises(SettingsError) as refused:
        load_settings(webhooks={"endpoints": [endpoint]})
    assert "webhooks.endpoints[0].url" in str(refused.value)
    assert url.split("//")[1].split("/")[0] not in str(refused.value)
    allowed = load_settings(webhooks={"endpoints": [endpoint], "allow_internal_addresses": True})
    assert allowed.webhooks.endpoints[0].id == "crm"


def test_a_webhook_on_a_public_name_is_accepted() -> None:
    endpoint = {"id": "crm", "tenant": "t1", "url": "https://crm.example.com/h", "secret": "s" * 32}
    assert load_settings(webhooks={"endpoints": [endpoint]}).webhooks.endpoints[0].id == "crm"


def test_a_nested_variable_of_no_section_is_refused_naming_it_not_its_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_RECAL__ENABLED", "secret-looking-value")

    with pytest.raises(SettingsError, match="no such section: FACTLEDGER_RECAL__ENABLED") as info:
        load_settings()

    assert "secret-looking-value" not in str(info.value)


def test_the_prefixs_own_variables_and_known_sections_are_left_to_their_readers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The client and the MCP server read variables of their own under the same prefix.
    monkeypatch.setenv("FACTLEDGER_MCP_TOKEN", "token")
    monkeypatch.setenv("FACTLEDGER_RECALL__ENABLED", "false")

    assert load_settings().recall.enabled is False
    assert (
        unknown_sections({"FACTLEDGER_URL": "x", "DATABASE_URL": "y", "factledger_api__x": ""})
        == []
    )
    assert unknown_sections({"FACTLEDGER_JUDGEMENT__HEADS_SHA256": "z"}) == [
        "FACTLEDGER_JUDGEMENT__HEADS_SHA256"
    ]
