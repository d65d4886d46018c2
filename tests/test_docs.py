"""The front door holds: every relative link of the README and the docs pages leads to a file (and heading) that
exists, every ``sova`` command line they show is spelled as the command line now takes it, and every cache folder
``cache/README.md`` names is the one committed."""
import argparse
import itertools
import re

import pytest

from sova_lib.cli import build_parser
from tests.paths import ROOT

#: Pages a newcomer reads: the front page, the docs, the notebooks' page and sources, the cache's page.
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "notebooks" / "README.md",
                ROOT / "cache" / "README.md", *(ROOT / "notebooks").glob("[0-9][0-9]_*.py")])
MARKDOWN = [p for p in PAGES if p.suffix == ".md"]


def _name(path) -> str:
    return str(path.relative_to(ROOT))


# --------------------------------------------------------------------------- links

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation other than '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page) -> set[str]:
    text = _FENCE.sub("", page.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def _relative_links(page) -> list[str]:
    text = _FENCE.sub("", page.read_text())
    return [t for t in _LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_slug_is_githubs():
    # worked by hand from GitHub's rule: "The words of the command line" -> lower case, spaces to hyphens;
    # "`--ties` and AP (expected)" -> backticks and parentheses dropped, the two spaces around "and" kept as '-'
    assert _slug("The words of the command line") == "the-words-of-the-command-line"
    assert _slug("`--ties` and AP (expected)") == "--ties-and-ap-expected"


@pytest.mark.parametrize("page", MARKDOWN, ids=_name)
def test_every_relative_link_leads_to_a_file_and_heading(page):
    links = _relative_links(page)
    for link in links:
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{_name(page)}: link {link!r} names {target}, which does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"{_name(page)}: link {link!r}: no heading #{anchor} in {target}"


def test_the_readme_links_every_docs_page():
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in _relative_links(ROOT / "README.md")}
    pages = sorted((ROOT / "docs").glob("*.md"))
    assert len(pages) >= 11, pages  # sovabench, gpu, scale-out, contrastive, image-tasks, muvr, vantage, ...
    assert [_name(p) for p in pages if p.resolve() not in linked] == []


def test_a_broken_link_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n[ok](page.md#top) [gone](nowhere.md) [web](https://example.org/x.md)\n"
                    "```\n[in code](not-a-link.md)\n```\n")
    assert _relative_links(page) == ["page.md#top", "nowhere.md"]
    assert _anchors(page) == {"top"}


# --------------------------------------------------------------------------- sova command lines

_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_START = re.compile(r"^(?:\$\s+)?(?:\.venv/bin/sova|python -m sova_lib|sova)\s+(?=[a-z<-])")


def _commands_in(text: str) -> list[str]:
    """Every ``sova`` command line of a page: code lines that start with it (continued by a trailing
    backslash) and inline code spans that start with it."""
    found = []
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k].strip().lstrip("#").strip()
        if _START.match(line):
            while line.endswith("\\") and k + 1 < len(lines):
                k += 1
                line = line[:-1] + " " + lines[k].strip().lstrip("#").strip()
            found.append(line)
        k += 1
    for m in _SPAN.finditer(text):
        span = " ".join(m.group(2).split())
        if _START.match(span) and span not in found:
            found.append(span)
    return found


def _tokens(command: str) -> list[str]:
    command = _START.sub("sova ", command.replace("\\|", "|"), count=1)
    command = re.split(r"\s(?:\||#|&&|;)\s|\s+#", command)[0]  # a pipe, a comment or the next command ends it
    return [t.strip("[](),;'\"") for t in command.split()]


def _subcommands(parser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _parsers(parser, words):
    """(path, parser) reached by the command words; a word of alternatives ('plan/extract', 'a|b') branches,
    a placeholder ('<verb>') ends the walk. Raises ``LookupError`` on a word that is no command."""
    states = [((), parser)]
    for word in words:
        if "<" in word or "..." in word or word.isupper():
            return [(path, None) for path, _ in states]
        if _subcommands(states[0][1]) is None:  # a leaf: the word is a positional argument
            break
        nxt = []
        for path, p in states:
            sub = _subcommands(p)
            for alternative in re.split(r"[|/]", word):
                if alternative not in sub.choices:
                    raise LookupError(f"'{' '.join(('sova', *path, alternative))}' is not a command")
                nxt.append(((*path, alternative), sub.choices[alternative]))
        states = nxt
    return states


def spelling_problems(command: str, parser=None) -> list[str]:
    """What in one ``sova`` command line is not the command line's current spelling (empty when it is)."""
    parser = parser or build_parser()
    tokens = _tokens(command)[1:]
    words = list(itertools.takewhile(lambda t: not t.startswith("-"), tokens))
    flags = {t.split("=", 1)[0] for t in tokens if re.match(r"--?[a-z]", t)}
    problems = []
    try:
        states = _parsers(parser, words)
    except LookupError as err:
        return [str(err)]
    for path, p in states:
        if p is None:
            continue
        for flag in sorted(flags):
            action = p._option_string_actions.get(flag)
            where = " ".join(("sova", *path))
            if action is None:
                problems.append(f"{where} has no option {flag}")
    return problems


COMMANDS = [(page, c) for page in PAGES for c in _commands_in(page.read_text())]


def test_the_pages_show_many_commands():
    # the README alone shows a dozen; a scan that found few would be looking in the wrong place
    assert len(COMMANDS) >= 60, len(COMMANDS)
    assert {p.name for p, _ in COMMANDS} >= {"README.md", "muvr.md", "vantage.md", "sovabench.md", "explore.md"}


def test_every_sova_command_line_is_spelled_as_now():
    parser = build_parser()
    bad = [f"{_name(page)}: {command!r}: {'; '.join(problems)}" for page, command in COMMANDS
           if (problems := spelling_problems(command, parser))]
    assert bad == [], "\n".join(bad)


@pytest.mark.parametrize("command, expected", [
    ("sova evaluate --protocol intra-pair --descriptions D", "'sova evaluate' is not a command"),
    ("sova describe --benchmark muvr --data ROOT", "sova describe has no option --benchmark"),
    ("sova describe --images coco/ --backend motion", "sova describe has no option --images"),
    ("sova clips plan --tsv inter-pair --cache-dir idx", "'sova clips' is not a command"),
    ("sova sovabench clips stats --manifest m.tsv --fps 30", "sova sovabench clips stats has no option --fps"),
    ("sova sovabench clips plan --tsv t --workers 2 --out m", "sova sovabench clips plan has no option --workers"),
    ("sova vantage score --task vqa", "'sova vantage score' is not a command"),
    ("sova vantage evaluate --task vqa --results-dir r/", "sova vantage evaluate has no option --results-dir"),
    ("sova reproduce --figures figs", "sova reproduce has no option --figures"),
    ("sova muvr evaluate --data R --version qa --parse strict", "sova muvr evaluate has no option --parse"),
    ("sova sovabench describe --protocol inter-pair --quiet", "sova sovabench describe has no option --quiet"),
])
def test_a_wrong_spelling_is_caught(command, expected):
    """The scan can fail: a command or option that the command line does not take is named."""
    assert any(expected in p for p in spelling_problems(command)), spelling_problems(command)


@pytest.mark.parametrize("command", [
    "sova describe --backend motion --fps 2 --protocol quickstart-direction --cache-dir /tmp/sova",
    "sova sovabench describe --protocol inter-pair --video-root clips/ --engine ray --workers 4 --fps 1",
    "sova sovabench clips stats --manifest m.tsv --source-fps 30",
    "sova sovabench clips plan|extract|stats",
    "sova vantage describe|evaluate|submit --task T",
    "sova <benchmark> <verb> --help",
    "sova compare --protocol intra-pair A B --out figures/results | head -1",
])
def test_current_spellings_pass(command):
    """--fps, --workers and --cache-dir are options of other commands than clips'."""
    assert spelling_problems(command) == []


def test_commands_are_found_in_code_and_in_spans():
    text = ("Run `sova evaluate\n--benchmark muvr` first, or ``sova reproduce``.\n\n```bash\n"
            "$ .venv/bin/sova sovabench evaluate --protocol intra-pair \\\n    --descriptions D  # a comment\n"
            "make test\n```\n")
    assert _commands_in(text) == ["$ .venv/bin/sova sovabench evaluate --protocol intra-pair  --descriptions D  "
                                  "# a comment", "sova evaluate --benchmark muvr", "sova reproduce"]
    assert _tokens(_commands_in(text)[0]) == ["sova", "sovabench", "evaluate", "--protocol", "intra-pair",
                                              "--descriptions", "D"]


# --------------------------------------------------------------------------- cache/README.md

def test_every_cache_folder_cache_readme_names_exists():
    text = (ROOT / "cache" / "README.md").read_text()
    cited = set(re.findall(r"\b((?:descriptions|frame-embeddings|embeddings)/[\w.+-]+__[0-9a-f]{12})\b", text))
    assert cited, "cache/README.md names no committed folder"
    missing = sorted(c for c in cited if not (ROOT / "cache" / c).is_dir())
    assert missing == [], f"cache/README.md names {missing}; cache/ holds " \
                          f"{sorted(p.name for p in (ROOT / 'cache' / 'descriptions').iterdir())}"


# --------------------------------------------------------------------------- the README runs as written

def _readme_blocks():
    """The README's fenced blocks in order, as (language, text)."""
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^```(\w*)\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)]


def test_the_readme_runs_as_written_on_an_empty_cache(tmp_path, capsys):
    """Every command block of the README (quickstart, comparison) on an empty cache folder in place of /tmp/sova,
    in order; the text block after each prints what its last command printed, line by line. The method's Python
    block prints its text block exactly, and the explorer's Python block runs, as written."""
    import shlex

    from sova_lib.cli import main

    blocks, ran, checked = _readme_blocks(), 0, 0
    for k, (language, text) in enumerate(blocks):
        text = text.replace("/tmp/sova", str(tmp_path / "sova"))
        if language == "bash" and ".venv/bin/sova" in text:
            for command in _commands_in(text):
                argv = shlex.split(command)
                assert argv[0] == ".venv/bin/sova", command
                capsys.readouterr()
                assert main(argv[1:]) == 0, command
                ran += 1
            out = capsys.readouterr().out.splitlines()
            if k + 1 < len(blocks) and blocks[k + 1][0] == "text":
                for line in blocks[k + 1][1].splitlines():
                    assert line.rstrip() in [x.rstrip() for x in out], f"README shows {line!r}; printed:\n" + \
                                                                        "\n".join(out)
                    checked += 1
        elif language == "python" and "explore.show" in text:
            exec(compile(text, "README.md", "exec"), {})  # the explorer on the six clips, as a newcomer runs it
            ran += 1
        elif language == "python" and "dense_similarity" in text:
            capsys.readouterr()
            exec(compile(text, "README.md", "exec"), {})  # the method's four steps on the quickstart's answers
            ran += 1
            assert blocks[k + 1][0] == "text"
            assert capsys.readouterr().out.splitlines() == blocks[k + 1][1].splitlines()  # line by line, exactly
            checked += len(blocks[k + 1][1].splitlines())
    # 2 quickstart commands, the method in Python, 2 comparison commands and the explorer; the 5 + 5 + 4 lines of
    # the three outputs shown
    assert (ran, checked) == (6, 14)
