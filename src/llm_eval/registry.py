"""`Registry`: named extensions (scorers, tools, flows, providers) registered by decorator.

A registry belongs to one package folder. Its entries register themselves when their module
is imported, and the registry imports every module of that folder the first time it is read
(not when it is created), so a new extension is one file in the folder and nothing imports
it by name. Because no package `__init__` imports its extensions, an extension module may
import from its own package (`from llm_eval.scoring import register_scorer`) without a cycle.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator, MutableMapping
from typing import TypeVar

from llm_eval.errors import LlmEvalError

T = TypeVar("T")


class RegistryError(LlmEvalError, ValueError):
    """A name nobody registered, or an extension module that failed to import."""


class Registry(MutableMapping[str, T]):
    """Entries of one kind by name; reading it first imports every module of `package`."""

    def __init__(self, kind: str, package: str) -> None:
        """`kind` names an entry in messages ("scorer"); `package` is the folder to scan."""
        self.kind = kind
        self.package = package
        self._entries: dict[str, T] = {}
        self._loaded = False

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated object itself under `name`.

        It loads nothing, so modules of the folder (and the one defining the registry) may
        register at import time.
        """

        def decorate(entry: T) -> T:
            self._entries[name] = entry
            return entry

        return decorate

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self)

    def lookup(self, name: str) -> T:
        """The entry `name`; a `RegistryError` naming the known ones otherwise."""
        try:
            return self[name]
        except KeyError:
            known = ", ".join(self.names())
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def load(self) -> None:
        """Import every module of the package folder once, so their entries register."""
        if self._loaded:
            return
        # Set first: a module that reads the registry while it loads sees what is there.
        self._loaded = True
        try:
            for module in _modules_of(self.package):
                _import(module, self.kind)
        except BaseException:
            self._loaded = False
            raise

    def __getitem__(self, name: str) -> T:
        self.load()
        return self._entries[name]

    def __setitem__(self, name: str, entry: T) -> None:
        # Loaded first, so that an entry set here is not replaced by a module loaded later.
        self.load()
        self._entries[name] = entry

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self.load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self.load()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries


def _modules_of(package: str) -> list[str]:
    """Dotted names of the modules directly in `package`'s folder, private ones excluded."""
    paths = importlib.import_module(package).__path__
    found = {info.name for info in pkgutil.iter_modules(paths) if not info.name.startswith("_")}
    return [f"{package}.{name}" for name in sorted(found)]


def _import(module: str, kind: str) -> None:
    try:
        importlib.import_module(module)
    except Exception as exc:  # a broken extension is reported as the file it lives in
        spec = importlib.util.find_spec(module)
        where = spec.origin if spec is not None and spec.origin else module
        raise RegistryError(
            f"{where}: this {kind} module failed to import: {type(exc).__name__}: {exc}"
        ) from exc
