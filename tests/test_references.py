"""Every module the library's own text names exists: dotted names (``sova_lib.x.y``) and paths (``sova_lib/x/y``).

Docstrings, comments and other string literals of ``sova_lib`` (and the docs, README, notebooks and benches)
name modules, functions and files; after a
rename or a removal a stale name reads as true. Each dotted name must resolve to a module of the source tree
or to a name bound in one (a function, class, constant or import, or an attribute of a class defined there),
and each ``sova_lib/...`` path to a file or folder of the checkout. Nothing is imported: the names are
resolved in the source, so the check needs none of the optional dependencies.
"""
import ast
import re
import tokenize
from functools import lru_cache
from pathlib import Path

import pytest

from tests.paths import ROOT

DOTTED = re.compile(r"(?<![\w/.])sova_lib(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"(?<![\w/.])sova_lib/[\w./*<>-]*\w")


def _module_file(parts: tuple[str, ...]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def _bindings(path: Path) -> dict[str, ast.AST | str]:
    """Top-level names of a module: name -> its ``ClassDef``, the dotted target of an import, or its node."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, ast.AST | str] = {}
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in tree.body:
        _bind(node, names, package)
    return names


def _bind(node, names, package):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names[node.name] = node
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    names[name.id] = node
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
        for alias in node.names:
            names[alias.asname or alias.name] = f"{base}.{alias.name}"
    elif isinstance(node, ast.Import):
        for alias in node.names:
            names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    elif isinstance(node, (ast.If, ast.Try)):  # names bound under a condition or a fallback still exist
        for child in node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", []) + \
                [n for h in getattr(node, "handlers", []) for n in h.body]:
            _bind(child, names, package)


def _class_names(node: ast.ClassDef) -> set[str]:
    found = set()
    for child in node.body:
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(child.name)
        elif isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
            found.add(child.target.id)
        elif isinstance(child, ast.Assign):
            found |= {t.id for t in child.targets if isinstance(t, ast.Name)}
    return found


def resolves(dotted: str, depth: int = 0) -> bool:
    """Whether ``dotted`` names a module of the tree or a name bound in one (see the module docstring)."""
    parts = tuple(dotted.split("."))
    for cut in range(len(parts), 0, -1):
        path = _module_file(parts[:cut])
        if path is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        bound = _bindings(path).get(rest[0])
        if bound is None:
            return False
        if isinstance(bound, str):  # an imported name: resolve it where it comes from
            if not bound.startswith("sova_lib"):
                return len(rest) == 1
            return depth < 5 and resolves(".".join((bound, *rest[1:])), depth + 1)
        if len(rest) == 1:
            return True
        return isinstance(bound, ast.ClassDef) and len(rest) == 2 and rest[1] in _class_names(bound)
    return False


def _texts(path: Path):
    """``(line, text)`` of every comment and string literal of a source file."""
    with open(path, "rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                yield tok.start[0], tok.string
            elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                yield tok.start[0], tok.string


def _sources() -> list[Path]:
    """The library's sources, and the pages, notebooks and benches that name its modules."""
    return sorted((ROOT / "sova_lib").rglob("*.py")) + sorted((ROOT / "docs").glob("*.md")) + [
        ROOT / "README.md", *sorted((ROOT / "notebooks").glob("*.py")), *sorted((ROOT / "bench").glob("*.py"))]


def references() -> list[tuple[str, int, str, str]]:
    """``(file, line, kind, name)`` of every dotted name and path the library's text mentions.

    In a Python file: its comments and string literals; in a Markdown page: the whole text.
    """
    found = []
    for path in _sources():
        rel = str(path.relative_to(ROOT))
        texts = _texts(path) if path.suffix == ".py" else [(1, path.read_text(encoding="utf-8"))]
        for line, text in texts:
            for m in DOTTED.finditer(text):
                found.append((rel, line + text[:m.start()].count("\n"), "name", m.group(0)))
            for m in PATH.finditer(text):
                found.append((rel, line + text[:m.start()].count("\n"), "path", m.group(0)))
    return found


def _path_exists(text: str) -> bool:
    text = text.rstrip(".")
    if any(c in text for c in "*<>"):  # a pattern: its fixed folder must exist
        text = re.split(r"[*<>]", text)[0].rsplit("/", 1)[0]
    return (ROOT / text).exists()


def test_the_resolver_tells_real_names_from_stale_ones():
    assert resolves("sova_lib.protocols") and resolves("sova_lib.protocols.get_protocol")
    assert resolves("sova_lib.protocols.Protocol.ids") and resolves("sova_lib.benchmarks.sovabench.load_split")  # re-exported
    assert resolves("sova_lib.describe.item.Item") and resolves("sova_lib.video.frames")
    assert not resolves("sova_lib.descriptions.read_descriptions")  # a module that does not exist
    assert not resolves("sova_lib.protocols.no_such_name") and not resolves("sova_lib.protocols.Protocol.nothing")
    assert not resolves("sova_lib.runner.describe_items")
    assert _path_exists("sova_lib/data/video") and not _path_exists("sova_lib/benchmarks/muvr/data.py")
    assert _path_exists("sova_lib/benchmarks/sovabench/data/*.tsv")  # a pattern: its folder exists


def test_the_scan_reads_comments_and_strings_with_their_lines(tmp_path):
    source = tmp_path / "demo.py"
    source.write_text('x = 1  # see sova_lib.gone.module\n"""Uses\n``sova_lib.metrics.mean_ap`` and sova_lib/data."""\n'
                      'y = "sova_lib.cli:main"\n')
    found = [(line, name) for line, text in _texts(source) for m in DOTTED.finditer(text)
             for name in [m.group(0)] for line in [line + text[:m.start()].count("\n")]]
    assert found == [(1, "sova_lib.gone.module"), (3, "sova_lib.metrics.mean_ap"), (4, "sova_lib.cli")]
    assert [m.group(0) for _, t in _texts(source) for m in PATH.finditer(t)] == ["sova_lib/data"]


@pytest.mark.parametrize("kind", ["name", "path"])
def test_every_module_the_library_names_exists(kind):
    found = [ref for ref in references() if ref[2] == kind]
    assert len(found) > {"name": 200, "path": 20}[kind], "the scan found too few references to be scanning"
    check = resolves if kind == "name" else _path_exists
    stale = [f"{file}:{line}: {name}" for file, line, _, name in found if not check(name)]
    assert stale == [], "stale references:\n" + "\n".join(stale)
