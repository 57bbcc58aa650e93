"""Recall settings become policies: the deployment default and per-tenant overrides."""

from __future__ import annotations

import pytest

from factledger.api.bootstrap.services import recall_policies
from factledger.api.settings import SettingsError, load_settings
from factledger.application.memory.types import SearchMode


def test_defaults_are_the_product_promise() -> None:
    policy = recall_policies(load_settings().recall).for_tenant("anyone")
    assert (policy.enabled, policy.recall_budget_s, policy.context_budget_s) == (True, 1.0, 2.0)
    assert (policy.threshold, policy.limit, policy.mode) == (0.55, 3, SearchMode.MEMORIES)
    assert not policy.include_inferred
    assert not policy.include_superseded
    # Rows under the threshold fill no empty place unless a deployment asks (ADR 0150).
    assert policy.under_floor is None


def test_tenant_overrides_merge_over_the_deployment_policy() -> None:
    settings = load_settings(
        recall={"limit": 5, "tenants": {"acme": {"enabled": False}, "lab": {"threshold": 0.3}}}
    )
    policies = recall_policies(settings.recall)
    assert not policies.for_tenant("acme").enabled
    assert policies.for_tenant("acme").limit == 5
    assert policies.for_tenant("lab").threshold == 0.3
    assert policies.for_tenant("other").threshold == 0.55
    assert policies.for_tenant(None).limit == 5


def test_an_invalid_override_is_refused_at_start_up() -> None:
    with pytest.raises(SettingsError, match=r"recall\.tenants\.acme\.limit"):
        load_settings(recall={"tenants": {"acme": {"limit": 0}}})


def test_an_invalid_budget_is_refused_by_field_name() -> None:
    with pytest.raises(SettingsError, match=r"recall\.recall_budget_s"):
        load_settings(recall={"recall_budget_s": 0})


def test_the_fill_under_the_threshold_is_a_setting_a_tenant_may_turn_off() -> None:
    settings = load_settings(
        recall={"under_floor": 0.2, "tenants": {"acme": {"under_floor": None}}}
    )
    policies = recall_policies(settings.recall)
    assert policies.for_tenant("other").under_floor == 0.2
    assert policies.for_tenant("acme").under_floor is None
    with pytest.raises(SettingsError, match=r"recall\.under_floor"):
        load_settings(recall={"under_floor": 1.5})
