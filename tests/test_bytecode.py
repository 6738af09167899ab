"""``tests/bytecode.py``: the byte code compiled before the workers start is the byte code their
imports would have written, and a file that does not compile is left for its import to report."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

from tests import bytecode

_USED = ("get_cache_dir", "PYC_TAIL", "try_makedirs", "_read_pyc", "_rewrite_test", "_write_pyc")
pytestmark = pytest.mark.skipif(
    not all(hasattr(rewrite, name) for name in _USED),
    reason=f"pytest {pytest.__version__} changed the functions of its assertion rewriting that "
    "tests/bytecode.py uses: the warm-up writes nothing, and the workers compile as before",
)

TEST_FILE = """
def helper(x):
    return x + 1


def test_something():
    assert helper(1) == 3, "a message"
"""


def test_a_test_file_gets_the_rewrite_pytest_makes_and_a_module_its_byte_code(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    test = tmp_path / "test_sample.py"
    test.write_text(TEST_FILE)
    module = tmp_path / "helpers.py"
    module.write_text("VALUE = 1\n")
    assert bytecode.warm([tmp_path], processes=2) == (2, True)
    assert bytecode.warm([tmp_path], processes=2) == (0, True)  # current: no process started

    pyc = rewrite.get_cache_dir(test) / (test.name[:-3] + rewrite.PYC_TAIL)
    cached = rewrite._read_pyc(test, pyc)
    assert cached is not None  # current: pytest's import hook takes it as its own
    _, made = rewrite._rewrite_test(test, pytestconfig)  # what the hook would have made
    assert cached == made  # the same code (a code object compares by its contents)
    assert "@pytest_ar" in cached.co_names  # the asserts are rewritten

    assert Path(importlib.util.cache_from_source(str(module))).is_file()
    assert not Path(importlib.util.cache_from_source(str(test))).exists()  # never imported so


def test_a_file_that_does_not_compile_is_skipped_and_the_rest_compiled(tmp_path: Path) -> None:
    (tmp_path / "test_broken.py").write_text("def test_x(:\n")
    good = tmp_path / "test_good.py"
    good.write_text(TEST_FILE)
    assert bytecode.warm([tmp_path], processes=1) == (2, False)
    pyc = rewrite.get_cache_dir(good) / (good.name[:-3] + rewrite.PYC_TAIL)
    assert rewrite._read_pyc(good, pyc) is not None


def test_a_changed_file_is_stale_again(tmp_path: Path) -> None:
    module = tmp_path / "helpers.py"
    module.write_text("VALUE = 1\n")
    assert bytecode.stale(module)
    bytecode.warm([tmp_path], processes=1)
    assert not bytecode.stale(module)
    module.write_text("VALUE = 22\n")  # another hash, and another size (within the same second)
    assert bytecode.stale(module)
