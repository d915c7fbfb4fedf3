"""strom's modules import each other without cycles (issue 27 §4).

The import graph is built with :mod:`ast` from every ``import`` / ``from ... import`` of a strom module, at module
level and inside functions alike (an import hidden in a function is still a dependency); only imports under
``if TYPE_CHECKING:`` are left out, since they never run. A strongly connected component (Tarjan) with more than
one module is a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import strom

ROOT = Path(strom.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(node: ast.AST, *, type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test) and not type_checking:
            for orelse in child.orelse:
                yield from _imports_of(orelse, type_checking=type_checking)
            continue
        yield from _imports_of(child, type_checking=type_checking)


def _imports_of(node: ast.AST, *, type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node, type_checking=type_checking)


def _resolve(name: str, modules: set[str]) -> str | None:
    """The strom module *name* denotes (a module, or the package holding the imported attribute)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    files = {module_name(path): path for path in ROOT.rglob("*.py")}
    modules = set(files)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree, type_checking=type_checking):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [_resolve(alias.name, modules) for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.append(submodule if submodule in modules else _resolve(base, modules))
            graph[name].update(target for target in targets if target is not None and target != name)
    return graph


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph is a few hundred modules deep at most)."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = lowlink[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = lowlink[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    lowlink[node] = min(lowlink[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                lowlink[parent] = min(lowlink[parent], lowlink[node])
            if lowlink[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def import_cycles(*, type_checking: bool = False) -> list[list[str]]:
    components = strongly_connected_components(import_graph(type_checking=type_checking))
    return sorted(component for component in components if len(component) > 1)


def test_tarjan_finds_a_cycle_and_leaves_a_chain_alone() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert sorted(c for c in strongly_connected_components(graph) if len(c) > 1) == [["a", "b", "c"]]


def test_the_graph_sees_imports_inside_functions_but_not_under_type_checking() -> None:
    graph = import_graph()
    # strom.web.accessor imports the Dispatcher only for its annotations
    assert "strom.runtime.dispatcher.dispatcher" not in graph["strom.web.accessor"]
    assert "strom.runtime.dispatcher.dispatcher" in import_graph(type_checking=True)["strom.web.accessor"]
    # strom.cli imports the standalone TaskManager inside the function that runs it
    assert "strom.deploy.standalone.taskmanager" in graph["strom.cli"]


def test_the_checkpoint_driver_does_not_reach_the_job_master() -> None:
    graph = import_graph(type_checking=True)
    seen: set[str] = set()
    todo = ["strom.runtime.checkpoint.checkpoint_driver"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    assert not {m for m in seen if m.startswith("strom.runtime.jobmaster")}


def test_strom_has_no_import_cycles() -> None:
    cycles = import_cycles()
    message = "\n".join(" -> ".join(cycle) for cycle in cycles)
    assert not cycles, (
        f"expected no import cycles in strom/; got {len(cycles)}:\n{message}\n"
        "hint: pass a Protocol, or move the shared piece down into a module both import"
    )
