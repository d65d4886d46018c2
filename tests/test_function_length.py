"""No function in ``sova_lib`` runs over 60 lines unless a comment inside it says why it is one piece.

A function's length is its full span in the file: from its ``def`` line to
its last line, docstring, comments and blank lines included, decorators left
out (``ast``'s ``lineno`` to ``end_lineno``, so a comment after the last
statement is outside it). Methods and nested functions
count on their own (a nested function's lines count in its parent's span as
well). The comment is a line inside that span, outside any nested function,
starting with ``# one piece:``.
"""
import ast
import textwrap

from tests.paths import ROOT

LIMIT = 60
MARK = "# one piece:"
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """``(qualified name, span)`` of each function of ``source`` longer than ``limit`` lines with no ``MARK`` line."""
    lines = source.splitlines()
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, FUNCTIONS):
                name = prefix + child.name
                span = child.end_lineno - child.lineno + 1
                inner = {n for f in ast.walk(child) if f is not child and isinstance(f, FUNCTIONS)
                         for n in range(f.lineno, f.end_lineno + 1)}
                marked = any(lines[n - 1].strip().startswith(MARK) for n in range(child.lineno, child.end_lineno + 1)
                             if n not in inner)
                if span > limit and not marked:
                    found.append((name, span))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def _function(name: str, body_lines: int, decorators: int = 0, mark: bool = False, indent: str = "") -> str:
    """A function of 1 ``def`` line + ``body_lines`` lines (the mark, when asked, is one of them)."""
    body = (["    # one piece: a test"] if mark else []) + [f"    x{i} = {i}" for i in range(body_lines - mark)]
    text = "\n".join(["@staticmethod"] * decorators + [f"def {name}():"] + body) + "\n"
    return textwrap.indent(text, indent)


def test_the_count_is_the_span_from_def_to_last_line_decorators_left_out():
    assert long_functions(_function("sixty", 59)) == []  # 1 + 59 = 60 lines: allowed
    assert long_functions(_function("sixty_one", 60)) == [("sixty_one", 61)]
    assert long_functions(_function("decorated", 59, decorators=3)) == []  # decorators do not count
    assert long_functions(_function("marked", 80, mark=True)) == []
    doc = 'def documented():\n    """' + "\n".join(["doc"] * 60) + '"""\n'  # a docstring counts: 1 + 60 lines
    assert long_functions(doc) == [("documented", 61)]
    method = "class Box:\n" + _function("method", 70, indent="    ")
    assert long_functions(method) == [("Box.method", 71)]
    # a long nested function marks only itself; its parent, longer still, is reported too
    nested = "def outer():\n" + _function("inner", 70, mark=True, indent="    ")
    assert long_functions(nested) == [("outer", 72)]


def test_no_long_function_without_a_reason():
    found = {}
    for path in sorted((ROOT / "sova_lib").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for name, span in long_functions(path.read_text(encoding="utf-8")):
            found[(rel, name)] = span
    assert not found, (f"functions over {LIMIT} lines: split them into named steps, or say why each is one "
                       f"piece with a '{MARK}' comment inside it: {found}")
