"""Lazy exports: a package's public names are imported from their modules on first use.

The pattern of SPEC 1 (``lazy_loader.attach``) and of CPython's own packages since PEP 562: ``import strom`` runs no
module of the API; ``strom.StreamExecutionEnvironment`` (or ``from strom import StreamExecutionEnvironment``)
imports the module that defines it, then keeps the name in the package's namespace, so the next access is a plain
attribute. A TaskManager process, which imports ``strom.runtime...`` and so ``strom`` first, pays for none of
the API it does not run. The package lists its names once more under ``if TYPE_CHECKING:`` for type checkers.

    _LAZY = LazyExports(__name__, {"strom.api.environment": ("StreamExecutionEnvironment",)})

    def __getattr__(name: str) -> object:
        return _LAZY.load(name)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping

__all__ = ["LazyExports"]


class LazyExports:
    """The names ``package`` exports, by the module defining each (``exports``: module → names). A name whose
    module is ``package`` itself is a submodule of it (``strom.datastream.async_retry_predicates``)."""

    def __init__(self, package: str, exports: Mapping[str, tuple[str, ...]]) -> None:
        self._package = package
        self._module_of: dict[str, str] = {}
        for module, names in exports.items():
            for name in names:
                if name in self._module_of:
                    raise ValueError(
                        f"expected each name of {package} exported once; got {name!r} from {self._module_of[name]} "
                        f"and {module}; hint: a name has one home module"
                    )
                self._module_of[name] = module

    @property
    def names(self) -> tuple[str, ...]:
        """Every name exported, sorted (what ``__all__`` lists)."""
        return tuple(sorted(self._module_of))

    def load(self, name: str) -> object:
        """The module-level ``__getattr__``: import ``name``'s module, keep the name in the package, return it."""
        module = self._module_of.get(name)
        if module is None:
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        if module == self._package:
            value: object = importlib.import_module(f"{module}.{name}")
        else:
            value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[self._package], name, value)
        return value

    def dir(self, namespace: Mapping[str, object]) -> list[str]:
        """The module-level ``__dir__``: what the package holds now and what it exports."""
        return sorted(set(namespace) | set(self._module_of))
