"""The tenants a command may name: those the deployment serves (`AuthSettings.tenants` and
`tenant_pattern`, the rule tokens meet too), so a misspelt `--tenant` is refused before
anything is written rather than starting a new tenant."""

from __future__ import annotations

import typer

from factledger.api.settings import AuthSettings


def checked_tenant(auth: AuthSettings, name: str, *, param: str = "--tenant") -> str:
    """`name`, or a usage error (exit 2) naming `param` and why it is not a tenant here."""
    refusal = auth.tenant_refusal(name)
    if refusal is not None:
        raise typer.BadParameter(f"{name!r}: {refusal}", param_hint=param)
    return name
