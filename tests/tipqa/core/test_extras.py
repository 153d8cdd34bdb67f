"""Optional packages: a missing one is an error naming the extra that installs it."""

from __future__ import annotations

import pytest

from tipqa.core.errors import MissingExtraError
from tipqa.core.extras import KRIPPENDORFF, SCIKIT_LEARN, Extra, require


def test_a_missing_package_names_its_extra() -> None:
    absent = Extra("tipqa_no_such_package", "annotation")
    with pytest.raises(MissingExtraError, match=r"the agreement needs .*tipqa\[annotation\]"):
        require((absent,), needed_by="the agreement")


@pytest.mark.needs("sklearn", "krippendorff")
def test_installed_packages_pass() -> None:
    require((SCIKIT_LEARN, KRIPPENDORFF), needed_by="the agreement")
