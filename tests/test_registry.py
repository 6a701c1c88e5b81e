"""`Registry`: decorator registration, lazy discovery of a package folder, clear errors."""

from __future__ import annotations

import importlib
import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_eval.registry import Registry, RegistryError

_names = itertools.count()

# The package's __init__ holds the registry and imports none of its extensions, as
# llm_eval's scoring, tools, flows and providers packages do.
INIT = """
from llm_eval.registry import Registry

GREETERS: Registry[str] = Registry("greeter", __name__)
register_greeter = GREETERS.register
"""
# An extension that imports from its own package: a cycle if __init__ imported it.
HELLO = """
from {package} import register_greeter

register_greeter("hello")("Hello!")
"""


@pytest.fixture()
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A fresh importable package (name, folder) with one extension module, `hello`."""
    name = f"greeters_{next(_names)}"
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text(INIT, encoding="utf-8")
    (folder / "hello.py").write_text(HELLO.format(package=name), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, folder
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


def registry_of(name: str) -> Registry[str]:
    module = __import__(name)
    registry: Registry[str] = module.GREETERS
    return registry


def test_extensions_load_on_first_read_not_on_import(package: tuple[str, Path]) -> None:
    name, _ = package
    registry = registry_of(name)
    assert f"{name}.hello" not in sys.modules
    assert registry.names() == ["hello"]
    assert registry["hello"] == "Hello!" and f"{name}.hello" in sys.modules


def test_a_new_module_in_the_folder_is_found_and_private_ones_are_not(
    package: tuple[str, Path],
) -> None:
    name, folder = package
    (folder / "bonjour.py").write_text(
        f"from {name} import register_greeter\nregister_greeter('bonjour')('Bonjour !')\n",
        encoding="utf-8",
    )
    (folder / "_draft.py").write_text("raise RuntimeError('never imported')\n", encoding="utf-8")
    assert registry_of(name).names() == ["bonjour", "hello"]


def test_an_unknown_name_lists_the_known_ones(package: tuple[str, Path]) -> None:
    registry = registry_of(package[0])
    with pytest.raises(RegistryError, match=r"unknown greeter 'hi'; known: hello"):
        registry.lookup("hi")
    with pytest.raises(KeyError):
        registry["hi"]


def test_a_broken_module_names_its_file_and_a_fixed_one_then_loads(
    package: tuple[str, Path],
) -> None:
    name, folder = package
    broken = folder / "broken.py"
    broken.write_text("import no_such_module_here\n", encoding="utf-8")
    registry = registry_of(name)
    with pytest.raises(RegistryError) as caught:
        registry.names()
    assert str(broken) in str(caught.value) and "no_such_module_here" in str(caught.value)
    broken.write_text("", encoding="utf-8")
    assert registry.names() == ["hello"]


def test_entries_can_be_replaced_and_removed(package: tuple[str, Path]) -> None:
    registry = registry_of(package[0])
    registry["hello"] = "Hi!"
    assert registry["hello"] == "Hi!"
    del registry["hello"]
    assert "hello" not in registry and len(registry) == 0


def test_importing_a_package_imports_none_of_its_extensions() -> None:
    # In a fresh interpreter: the package's public names load no flow, provider or tool
    # module until a registry is read.
    code = (
        "import sys, llm_eval.flows, llm_eval.providers, llm_eval.tools, llm_eval.scoring\n"
        "print(sorted(m for m in sys.modules if m.startswith(('llm_eval.flows.',"
        " 'llm_eval.providers.', 'llm_eval.tools.'))))\n"
        "from llm_eval.flows import flow_names\n"
        "print(flow_names())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    before, after = result.stdout.splitlines()
    assert "llm_eval.flows.single_turn" not in before
    assert "llm_eval.providers.mock" not in before and "llm_eval.tools.python_exec" not in before
    assert after == str(["multi_round", "multi_turn", "single_turn", "tool_loop"])


def test_a_second_file_registering_a_name_is_an_error_naming_both_files(
    package: tuple[str, Path],
) -> None:
    name, folder = package
    copy = folder / "hello_again.py"
    copy.write_text(HELLO.format(package=name), encoding="utf-8")
    registry = registry_of(name)
    with pytest.raises(RegistryError) as caught:
        registry.names()
    message = str(caught.value)
    assert "greeter 'hello' is registered twice" in message
    assert f"{folder / 'hello.py'}:4" in message and f"{copy}:4" in message
    assert caught.value.problem is not None and caught.value.problem.path == str(copy)
    copy.unlink()
    assert registry.names() == ["hello"] and registry["hello"] == "Hello!"


def test_the_same_file_registering_again_replaces_its_own_entry(
    package: tuple[str, Path],
) -> None:
    name, _ = package
    registry = registry_of(name)
    assert registry["hello"] == "Hello!"
    importlib.reload(sys.modules[f"{name}.hello"])
    assert registry.names() == ["hello"]
