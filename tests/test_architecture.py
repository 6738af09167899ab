"""The architecture as a contract: the layers of docs/architecture.md (import-linter, configured
in pyproject.toml), no import cycles, small modules and functions, and a command line that loads
only what the command runs."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "emulator"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60  # a screen
HEAVY = ("aiohttp", "av", "faker", "jsonschema", "cryptography", "jwt")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over the package under ``root`` (a copy, or this tree), in a process of
    its own so that the package it analyses is the one on its path."""
    env = {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
         "sys.exit(lint_imports_command())", "--no-cache", "--no-logo", "pyproject.toml"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_the_layer_contract_and_the_acyclic_contract_are_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(
        PACKAGE, tmp_path / "emulator", ignore=shutil.ignore_patterns("__pycache__", "static")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.slow
def test_a_planted_upward_import_breaks_the_contract_and_names_the_modules(
    tmp_path: Path,
) -> None:
    root = _copy(tmp_path)
    findings = root / "emulator" / "findings.py"  # the lowest layer imports the command line
    findings.write_text(findings.read_text() + "\nfrom emulator.cli.lint import register  # noqa\n")
    result = lint_imports(root)
    assert result.returncode == 1, result.stdout
    assert "emulator.findings is not allowed to import emulator.cli" in result.stdout
    assert "emulator.findings -> emulator.cli.lint" in result.stdout


@pytest.mark.slow
def test_a_planted_import_between_independent_siblings_breaks_the_contract(
    tmp_path: Path,
) -> None:
    root = _copy(tmp_path)
    plugin = root / "emulator" / "pytest_plugin.py"  # pytest_plugin | demo: independent
    plugin.write_text(plugin.read_text() + "\nimport emulator.demo  # noqa\n")
    result = lint_imports(root)
    assert result.returncode == 1, result.stdout
    assert "emulator.pytest_plugin is not allowed to import emulator.demo" in result.stdout


def test_the_contract_is_the_picture_in_docs_architecture() -> None:
    """Every layer of the contract is drawn, on one line, in the same order, in the picture of
    docs/architecture.md (``cli/`` for a package, ``certs.py`` for a module)."""
    text = (ROOT / "pyproject.toml").read_text()
    block = text[text.index('id = "layers"') :]
    layers = re.findall(r'^\s+"(emulator[^"]*)",$', block[: block.index("]\n")], re.M)
    doc = (ROOT / "docs" / "architecture.md").read_text()
    start = doc.index("```\n") + 4
    drawing = doc[start : doc.index("```", start)].splitlines()
    rows = []
    for layer in layers:
        names = [n.strip().removeprefix("emulator.") for n in re.split(r"[|:]", layer)]
        drawn = [f"{n}/" if (PACKAGE / n).is_dir() else f"{n}.py" for n in names]
        row = next((i for i, line in enumerate(drawing)
                    if all(re.search(rf"(?<![\w/.]){re.escape(d)}", line) for d in drawn)), None)  # fmt: skip
        assert row is not None, f"docs/architecture.md does not draw the layer {' '.join(drawn)}"
        rows.append(row)
    assert rows == sorted(rows), "docs/architecture.md draws the layers in another order"


def test_every_package_says_what_it_is_and_what_it_may_import() -> None:
    for init in sorted(PACKAGE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc, f"{init.relative_to(ROOT)} has no docstring"
        assert re.search(r"\bimport", doc), (
            f"{init.relative_to(ROOT)} does not say what it may import"
        )
    packages = {p.parent for p in PACKAGE.rglob("*.py") if "static" not in p.parts}
    missing = [p for p in packages if not (p / "__init__.py").exists()]
    assert not missing, f"namespace packages (no __init__.py): {missing}"


def test_no_module_is_over_450_lines() -> None:
    sizes = {p: len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    over = {str(p.relative_to(ROOT)): n for p, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not over, over


def test_no_function_is_longer_than_a_screen() -> None:
    long: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = length
    assert not long, long


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (the top-level names, and
    the full names of botemu's own)."""
    probe = (f"{code}\nimport sys\nprint('LOADED', ' '.join(sorted("
             "{m.split('.')[0] for m in sys.modules} | {m for m in sys.modules if m.startswith('emulator')})))")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=60, cwd=ROOT)  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("LOADED"))
    return set(line.split()[1:])


@pytest.mark.slow
def test_botemu_version_loads_no_command_and_no_library() -> None:
    loaded = loaded_after(
        "from emulator.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass"
    )
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
    commands = {m for m in loaded if m.startswith("emulator.cli.")}
    assert commands == {"emulator.cli.common"}, commands
    assert "emulator.calling" not in loaded


@pytest.mark.slow
def test_botemu_lint_loads_only_the_workflow_rules(tmp_path: Path) -> None:
    workflow = ROOT / "examples" / "workflows" / "welcome.json"
    loaded = loaded_after(f"from emulator.cli import main\nmain(['lint', {str(workflow)!r}])")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


@pytest.mark.slow
def test_every_command_module_imports_its_library_only_when_it_runs() -> None:
    commands = sorted(p.stem for p in (PACKAGE / "cli").glob("*.py") if p.stem != "__init__")
    code = "\n".join(f"import emulator.cli.{name}" for name in commands)
    loaded = loaded_after(code)
    assert not loaded & {"aiohttp", "av", "faker", "jsonschema"}, loaded


@pytest.mark.slow
def test_placing_a_call_loads_no_audio_codec_and_no_faker_until_used() -> None:
    """PyAV (90 ms to import) codes audio only for a prompt file or a recording, Faker (100 ms)
    makes a caller's name, a manifest's samples and ``botemu serve``'s test users: imported
    when first used, they no longer cost every ``botemu call`` and ``botemu test`` their start,
    nor PyAV ``botemu serve`` its."""
    loaded = loaded_after("import emulator.calling.session, emulator.cli.call, "
                          "emulator.runner.suite, emulator.tokenservice.model")  # fmt: skip
    assert "emulator.calling.media" in loaded, loaded
    assert not loaded & {"av", "faker"}, loaded & {"av", "faker"}
    served = loaded_after("import emulator.service.hosting, emulator.manifest.check")
    assert "emulator.calling.media" in served and "av" not in served, served
