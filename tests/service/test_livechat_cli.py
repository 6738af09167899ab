"""``botemu serve --max-live N``: the cap of live web chat conversations (emulator/cli/serve.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.cli import main


@pytest.mark.parametrize("value", ["-1", "1001"])
def test_max_live_out_of_range_is_a_usage_error(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["serve", "--max-live", value, "--db", str(tmp_path / "t.db")])
    assert code == 2
    assert "--max-live is from 0 to 1000" in capsys.readouterr().err
