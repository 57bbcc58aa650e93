"""The lab's command, `factledger-lab`: benchmarks, calibration fitting and evaluations."""
