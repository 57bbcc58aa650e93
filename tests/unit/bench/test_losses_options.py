"""The losses command's value-fit file: given with its pin, and only where facts are classed
(the questions' losses read the product's own head)."""

from __future__ import annotations

import pytest

from factledger.bench.evalsets.losses import main


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["bench/evalsets/blind3/dev", "--value-fit-file", "value-fit.npz"],
            "--value-fit-sha256: required with --value-fit-file",
        ),
        (
            [
                "bench/evalsets/blind3/dev",
                "--questions",
                "--value-fit-file",
                "value-fit.npz",
                "--value-fit-sha256",
                "0" * 64,
            ],
            "--value-fit-file: not with --questions",
        ),
    ],
)
def test_a_value_fit_file_needs_its_pin_and_classes_facts_only(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(argv)

    assert error in capsys.readouterr().err
