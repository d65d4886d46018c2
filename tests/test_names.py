"""One name per thing: two modules of ``sova_lib`` share a file name only when they play one named part.

``SHARED`` lists each file name that several modules carry; the architecture page (docs/architecture.md,
"One name per thing") says what part each plays. A module with a shared name says so in its docstring,
naming another module of its group (``sova_lib.x.y``), so a reader of either finds the other.
"""
import ast
import re
from collections import defaultdict

from tests.paths import ROOT

#: File name -> the modules that carry it.
SHARED = {
    "metrics.py": {"sova_lib.metrics", "sova_lib.benchmarks.muvr.metrics", "sova_lib.benchmarks.vantage.metrics"},
    "protocols.py": {"sova_lib.protocols", "sova_lib.benchmarks.sovabench.protocols",
                     "sova_lib.benchmarks.excerpts.protocols"},
    "synthetic.py": {"sova_lib.benchmarks.muvr.synthetic", "sova_lib.benchmarks.vantage.synthetic"},
    "hand_cases.py": {"sova_lib.benchmarks.muvr.hand_cases", "sova_lib.benchmarks.vantage.hand_cases"},
    "api.py": {"sova_lib.benchmarks.sovabench.api", "sova_lib.benchmarks.image_tasks.api",
               "sova_lib.benchmarks.muvr.api", "sova_lib.benchmarks.vantage.api"},
    "runner.py": {"sova_lib.describe.runner", "sova_lib.describe.contrastive.runner"},
    "ray_engine.py": {"sova_lib.describe.ray_engine", "sova_lib.describe.contrastive.ray_engine"},
    "evaluate.py": {"sova_lib.evaluate", "sova_lib.cli.evaluate"},
    "compare.py": {"sova_lib.paper.compare", "sova_lib.cli.compare"},
    "reproduce.py": {"sova_lib.paper.reproduce", "sova_lib.cli.reproduce"},
}


def _modules_by_file_name() -> dict[str, set[str]]:
    found = defaultdict(set)
    for path in (ROOT / "sova_lib").rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            found[path.name].add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_only_the_listed_file_names_are_shared():
    shared = {name: modules for name, modules in _modules_by_file_name().items() if len(modules) > 1}
    assert shared == SHARED


def test_a_module_with_a_shared_name_names_its_group_in_its_docstring():
    for modules in SHARED.values():
        for module in modules:
            path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            named = set(re.findall(r"sova_lib(?:\.\w+)+", doc))
            others = modules - {module}
            assert any(n == o or n.startswith(o + ".") for n in named for o in others), \
                f"{module}'s docstring names none of {sorted(others)}"


def test_the_architecture_page_lists_every_shared_name():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page[page.index("### One name per thing"):]
    for name in SHARED:
        assert f"`{name}`" in table, name
