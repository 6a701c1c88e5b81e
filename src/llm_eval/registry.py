"""`Registry`: named extensions (scorers, tools, flows, providers) registered by decorator.

A registry belongs to one package folder. Its entries register themselves when their module
is imported, and the registry imports every module of that folder the first time it is read
(not when it is created), so a new extension is one file in the folder and nothing imports
it by name. Because no package `__init__` imports its extensions, an extension module may
import from its own package (`from llm_eval.scoring import register_scorer`) without a cycle.

Because every module of the folder registers, a name taken twice (a scratch copy of a
scorer, a new module reusing "exact") is an error naming both files, never a silent
replacement of the first entry.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Iterator, MutableMapping
from types import FrameType
from typing import TypeVar

from llm_eval.errors import LlmEvalError, Problem

T = TypeVar("T")


class RegistryError(LlmEvalError, ValueError):
    """A name nobody registered, a name registered twice, or an extension module that failed
    to import; `problem` locates it in a file when a file is at fault."""

    def __init__(self, message: str, problem: Problem | None = None) -> None:
        super().__init__(message)
        self.problem = problem


Origin = tuple[str, int | None]
"""Where an entry was registered: its file and, when found, the line."""


class Registry(MutableMapping[str, T]):
    """Entries of one kind by name; reading it first imports every module of `package`."""

    def __init__(self, kind: str, package: str) -> None:
        """`kind` names an entry in messages ("scorer"); `package` is the folder to scan."""
        self.kind = kind
        self.package = package
        self._entries: dict[str, T] = {}
        self._origins: dict[str, Origin] = {}
        self._loaded = False

    def register(self, name: str, *, defined_by: object = None) -> Callable[[T], T]:
        """Decorator: register the decorated object itself under `name`.

        The entry's file is that of `defined_by` (default: the entry itself, a function or a
        class); a second file registering `name` raises a `RegistryError` naming both, while
        the same file registering it again (a reload) replaces its own entry. It loads
        nothing, so modules of the folder (and the one defining the registry) may register
        at import time.
        """

        def decorate(entry: T) -> T:
            origin = _origin_of(entry if defined_by is None else defined_by)
            first = self._origins.get(name)
            if name in self._entries and first is not None and first[0] != origin[0]:
                raise self._clash(name, first, origin)
            self._entries[name] = entry
            self._origins[name] = origin
            return entry

        return decorate

    def _clash(self, name: str, first: Origin, second: Origin) -> RegistryError:
        message = (
            f"{self.kind} {name!r} is registered twice: in {_where(first)} and in "
            f"{_where(second)}; rename one (a name may be registered once)"
        )
        return RegistryError(message, Problem(second[0], second[1], message))

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
        # Setting an item is a deliberate replacement, so it does not count as a clash.
        self.load()
        self._entries[name] = entry
        self._origins.pop(name, None)

    def __delitem__(self, name: str) -> None:
        del self._entries[name]
        self._origins.pop(name, None)

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
    except RegistryError as exc:
        if exc.problem is None:
            raise _import_failed(module, kind, exc) from exc
        raise  # a clash already names its files
    except Exception as exc:  # a broken extension is reported as the file it lives in
        raise _import_failed(module, kind, exc) from exc


def _import_failed(module: str, kind: str, exc: Exception) -> RegistryError:
    spec = importlib.util.find_spec(module)
    where = spec.origin if spec is not None and spec.origin else module
    message = f"this {kind} module failed to import: {type(exc).__name__}: {exc}"
    return RegistryError(f"{where}: {message}", Problem(where, None, message))


def _origin_of(defined_by: object) -> Origin:
    """The file of the module defining `defined_by` (a function or a class; for a plain
    value, the file registering it), and the line registering it there."""
    module = sys.modules.get(getattr(defined_by, "__module__", None) or "")
    path: str | None = getattr(module, "__file__", None)
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != (path or __file__):
        frame = frame.f_back
    if path is None:  # the first caller outside this file
        while frame is not None and frame.f_code.co_filename == __file__:
            frame = frame.f_back
        path = frame.f_code.co_filename if frame is not None else "?"
    return path, (frame.f_lineno if frame is not None else None)


def _where(origin: Origin) -> str:
    path, line = origin
    return f"{path}:{line}" if line is not None else path
