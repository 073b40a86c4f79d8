"""The documentation runs: doctests, runnable examples and links of README.md and docs/.

Conventions of the Markdown pages (HTML comments do not show when the page is rendered):

* A fenced ``python`` block whose lines start with ``>>>`` is a **doctest**; every such
  block of a page runs in one namespace, top to bottom, with ``ELLIPSIS`` and
  ``NORMALIZE_WHITESPACE``.
* ``<!-- file: PATH -->`` right before a fenced block writes the block to ``PATH`` in the
  page's sandbox (a ``pytester`` directory shared by the page's examples).
* ``<!-- run: pytester [NAME.py] [PYTEST ARGS] => OUTCOME -->`` right before a ``python``
  block writes it as a test module (default ``test_example_<n>.py``) and runs
  ``pytest --fairness [PYTEST ARGS] NAME.py``; ``OUTCOME`` is what pytest says at the end,
  e.g. ``1 failed`` or ``2 passed, 1 skipped``.
* ``<!-- run: pytester -->`` right before a ``bash`` block runs each command line in the
  sandbox: ``pytest ...`` (through pytester), ``pytest-fairness ...`` (the console command)
  or ``python SCRIPT.py``. Each line ends with ``# => OUTCOME`` (``exit N`` for the last two).
* ``<!-- output -->`` right before a fenced block: its lines must appear, in order, in what
  the previous command printed (whitespace runs count as one space; ``...`` stands for any
  text, and a line that is only ``...`` is skipped).
* ``<!-- not run: REASON -->`` right before a ``python`` block exempts it (every other
  ``python`` block of docs/ must be a doctest, a file or a run).

Links: relative links must point at files of the repository that exist (and headings that
exist, for ``#anchors`` into Markdown pages); links may not leave the repository or name
absolute paths. ``http(s)`` links are not fetched.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import runpy
import shlex
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
MARKDOWN = [ROOT / "README.md", *PAGES]

#: Text that points users at material they do not have.
FORBIDDEN = ("../shared", "/work/", "DESIGN.md", "DESIGN §", "STYLE.md", "seed 00")

_DIRECTIVE = re.compile(r"^<!--\s*(?P<text>.*?)\s*-->\s*$")
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_OUTCOME = re.compile(r"(\d+)\s+(passed|failed|skipped|errors?|xfailed|xpassed|warnings?)")
_EXIT = re.compile(r"^exit\s+(\d+)$")


@dataclass
class Block:
    """A fenced code block and the directive comment right before it, if any."""

    lang: str
    body: str
    line: int  # 1-based line of the first body line
    directive: str | None


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, each with its directive."""
    lines = text.splitlines()
    found: list[Block] = []
    pending: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line.strip())
        fence = _FENCE.match(line.strip())
        if directive:
            pending = directive.group("text")
        elif fence:
            marker, info = fence.group("fence"), fence.group("info").strip()
            body: list[str] = []
            i += 1
            while i < len(lines) and not (lines[i].strip().startswith(marker)
                                          and lines[i].strip().strip(marker[0]) == ""):
                body.append(lines[i])
                i += 1
            lang = info.split()[0] if info else ""
            found.append(Block(lang, "\n".join(body) + "\n", i - len(body) + 1, pending))
            pending = None
        elif line.strip():
            pending = None
        i += 1
    return found


def _is_doctest(block: Block) -> bool:
    return block.lang in ("python", "pycon", "py") and any(
        line.startswith(">>>") for line in block.body.splitlines())


def _page_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- doctests ---------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_doctests(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    # Keep line numbers: everything but the doctest blocks becomes blank lines.
    lines = [""] * (len(text.splitlines()) + 1)
    for block in blocks(text):
        if _is_doctest(block):
            for offset, line in enumerate(block.body.splitlines()):
                lines[block.line - 1 + offset] = line
    source = "\n".join(lines)
    test = doctest.DocTestParser().get_doctest(source, {"__name__": "__docs__"},
                                               _page_id(page), str(page), 0)
    if not test.examples:
        pytest.skip("no doctest on this page")
    out = io.StringIO()
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=out.write)
    test.globs.clear()
    assert runner.failures == 0, out.getvalue()


# -- runnable examples ------------------------------------------------------------------


def _expected(text: str, where: str) -> dict[str, int] | int:
    """``1 failed, 2 passed`` → ``{"failed": 1, "passed": 2}``; ``exit 1`` → 1."""
    text = text.strip()
    exit_code = _EXIT.match(text)
    if exit_code:
        return int(exit_code.group(1))
    counts = {}
    for number, outcome in _OUTCOME.findall(text):
        key = {"error": "errors", "warning": "warnings"}.get(outcome, outcome)
        counts[key] = int(number)
    if not counts:
        raise AssertionError(f"{where}: cannot read the expected outcome {text!r}; write e.g. "
                             "'=> 1 failed' or '=> exit 0'.")
    return counts


def _check_outcome(result: pytest.RunResult, expected: dict[str, int] | int,
                   where: str) -> None:
    if isinstance(expected, int):
        raise AssertionError(f"{where}: a pytest run ends with outcomes such as '1 passed', "
                             f"not 'exit {expected}'.")
    got = result.parseoutcomes()
    got = {{"error": "errors", "warning": "warnings"}.get(k, k): v for k, v in got.items()}
    wanted = {k: v for k, v in expected.items() if k != "warnings"}
    seen = {k: got.get(k, 0) for k in ("passed", "failed", "skipped", "errors", "xfailed",
                                       "xpassed")}
    assert {k: v for k, v in seen.items() if v} == wanted, (
        f"{where}: expected {wanted}, pytest said {got}\n" + result.stdout.str()
        + result.stderr.str())


def _collapse(line: str) -> str:
    return " ".join(line.split())


def check_output(expected: str, printed: str, where: str) -> None:
    """Every line of ``expected`` appears in ``printed``, in order (see the module doc)."""
    out = [_collapse(line) for line in printed.splitlines()]
    position = 0
    for raw in expected.splitlines():
        want = _collapse(raw)
        if not want or want == "...":
            continue
        parts = [p for p in want.split("...")]
        for index in range(position, len(out)):
            line, start, ok = out[index], 0, True
            for part in parts:
                found = line.find(part, start)
                if found < 0:
                    ok = False
                    break
                start = found + len(part)
            if ok:
                position = index + 1
                break
        else:
            raise AssertionError(
                f"{where}: the documented output line\n    {raw.strip()}\nis not printed "
                f"(after line {position} of the output). The output was:\n{printed}")


class Sandbox:
    """The pytester directory of one page and what its last command printed."""

    def __init__(self, pytester: pytest.Pytester, page: Path) -> None:
        self.pytester = pytester
        self.page = page
        self.printed: str | None = None
        self.examples = 0

    def where(self, block: Block, offset: int = 0) -> str:
        return f"{_page_id(self.page)}:{block.line + offset}"

    def write(self, name: str, body: str) -> None:
        path = self.pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")

    def pytest(self, args: list[str], expected: dict[str, int] | int, where: str) -> None:
        result = self.pytester.runpytest("-p", "no:cacheprovider", *args)
        self.printed = result.stdout.str() + "\n" + result.stderr.str()
        _check_outcome(result, expected, where)

    def command(self, argv: list[str], expected: dict[str, int] | int, where: str) -> None:
        if not isinstance(expected, int):
            raise AssertionError(f"{where}: write '# => exit N' after {argv[0]} commands.")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            if argv[0] == "pytest-fairness":
                from pytest_fairness.cli import main

                code = main(argv[1:])
            elif argv[0] in ("python", "python3") and len(argv) >= 2:
                # As `python SCRIPT.py` would: the script's folder first on sys.path; the
                # modules it imports from the sandbox are forgotten afterwards.
                old_argv, old_path, old_modules = sys.argv, list(sys.path), set(sys.modules)
                sys.argv = argv[1:]
                sys.path.insert(0, str(self.pytester.path))
                try:
                    runpy.run_path(str(self.pytester.path / argv[1]), run_name="__main__")
                    code = 0
                except SystemExit as stop:
                    code = stop.code if isinstance(stop.code, int) else 1
                finally:
                    sys.argv, sys.path[:] = old_argv, old_path
                    for name in set(sys.modules) - old_modules:
                        module_file = getattr(sys.modules[name], "__file__", None) or ""
                        if module_file.startswith(str(self.pytester.path)):
                            del sys.modules[name]
            else:
                raise AssertionError(f"{where}: cannot run {argv[0]!r}; commands are pytest, "
                                     "pytest-fairness and python SCRIPT.py.")
        self.printed = out.getvalue()
        assert code == expected, (f"{where}: {shlex.join(argv)} exited {code}, expected "
                                  f"{expected}:\n{self.printed}")

    def run_module(self, block: Block, spec: str) -> None:
        where = self.where(block)
        head, sep, outcome = spec.partition("=>")
        if not sep:
            raise AssertionError(f"{where}: write the expected outcome: "
                                 "<!-- run: pytester => 1 failed -->")
        args = shlex.split(head)
        self.examples += 1
        name = (args.pop(0) if args and args[0].endswith(".py") and not args[0].startswith("-")
                else f"test_example_{self.examples}.py")
        self.write(name, block.body)
        self.pytest(["--fairness", *args, name], _expected(outcome, where), where)

    def run_commands(self, block: Block) -> None:
        logical: list[tuple[int, str]] = []
        pending = ""
        for offset, line in enumerate(block.body.splitlines()):
            if pending:
                pending += " " + line.strip()
            elif line.strip() and not line.lstrip().startswith("#"):
                pending, start = line.strip(), offset
            else:
                continue
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
                continue
            logical.append((start, pending))
            pending = ""
        if not logical:
            raise AssertionError(f"{self.where(block)}: a run block without commands")
        for offset, line in logical:
            where = self.where(block, offset)
            command, sep, outcome = line.partition("# =>")
            if not sep:
                raise AssertionError(f"{where}: end the command with '# => OUTCOME'.")
            argv = shlex.split(command)
            expected = _expected(outcome, where)
            if argv[0] == "pytest":
                self.pytest(argv[1:], expected, where)
            else:
                self.command(argv, expected, where)


def _has_examples(page: Path) -> bool:
    return any(b.directive and b.directive.split(":")[0] in ("run", "file")
               for b in blocks(page.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def heavy_modules() -> None:
    """Import, before pytester takes its snapshot of sys.modules, what the examples load.

    Pytester runs pytest in this process and forgets the modules a run imported; numpy,
    torch and torchvision cannot be imported twice in one process, so they are imported
    here, once, and stay.
    """
    import filelock  # noqa: F401
    import matplotlib  # noqa: F401

    # The report draws with these; a second copy of matplotlib's classes breaks later tests.
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import PIL.Image  # noqa: F401
    import scipy.special  # noqa: F401
    import torch  # noqa: F401
    import torchvision.io  # noqa: F401
    import torchvision.transforms.functional  # noqa: F401

    with contextlib.suppress(ImportError):
        import faiss  # noqa: F401
    with contextlib.suppress(ImportError):  # its pytest plugin imports it at every run's end
        import hypothesis  # noqa: F401
    with contextlib.suppress(ImportError):
        import pyarrow  # noqa: F401


@pytest.mark.parametrize("page", [p for p in PAGES if _has_examples(p)], ids=_page_id)
def test_runnable_examples(page: Path, heavy_modules: None, pytester: pytest.Pytester) -> None:
    sandbox = Sandbox(pytester, page)
    for block in blocks(page.read_text(encoding="utf-8")):
        directive = block.directive or ""
        kind, _, rest = directive.partition(":")
        kind, rest = kind.strip(), rest.strip()
        if kind == "file":
            sandbox.write(rest, block.body)
        elif kind == "run":
            if not rest.startswith("pytester"):
                raise AssertionError(f"{sandbox.where(block)}: unknown runner in {directive!r}")
            spec = rest[len("pytester"):]
            if block.lang == "python":
                sandbox.run_module(block, spec)
            elif block.lang in ("bash", "sh", "console", "shell"):
                sandbox.run_commands(block)
            else:
                raise AssertionError(f"{sandbox.where(block)}: cannot run a {block.lang!r} "
                                     "block")
        elif kind == "output":
            if sandbox.printed is None:
                raise AssertionError(f"{sandbox.where(block)}: output shown before any run")
            check_output(block.body, sandbox.printed, sandbox.where(block))


# -- every page is exercised, every python block is accounted for -----------------------


def test_docs_exist() -> None:
    assert (DOCS / "index.md").is_file()
    assert len(PAGES) >= 10, [p.name for p in PAGES]


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_page_is_exercised(page: Path) -> None:
    found = blocks(page.read_text(encoding="utf-8"))
    assert any(_is_doctest(b) or (b.directive or "").startswith("run:") for b in found), (
        f"{_page_id(page)} has neither a doctest nor a runnable example")


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_python_block_runs(page: Path) -> None:
    for block in blocks(page.read_text(encoding="utf-8")):
        if block.lang != "python" or _is_doctest(block):
            continue
        kind = (block.directive or "").partition(":")[0].strip()
        assert kind in ("file", "run", "not run"), (
            f"{_page_id(page)}:{block.line}: a python block that is neither a doctest nor "
            "marked <!-- file: ... -->, <!-- run: pytester ... --> or <!-- not run: why -->")


def test_index_links_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    targets = {t.split("#")[0] for t in _links(index)}
    missing = [p.name for p in PAGES if p.name != "index.md" and p.name not in targets]
    assert not missing, f"docs/index.md does not link {missing}"


# -- links and references -------------------------------------------------------------

_INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
_HTML = re.compile(r"\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans (links there are code, not links)."""
    kept, inside, marker = [], False, ""
    for line in text.splitlines():
        fence = _FENCE.match(line.strip())
        if fence and (not inside or line.strip().startswith(marker)):
            if not inside:
                inside, marker = True, fence.group("fence")
            elif line.strip().strip(marker[0]) == "":
                inside = False
            kept.append("")
            continue
        kept.append("" if inside else line)
    return _CODE_SPAN.sub("", "\n".join(kept))


def _links(text: str) -> list[str]:
    prose = _prose(text)
    return [*_INLINE.findall(prose), *_REFERENCE.findall(prose), *_HTML.findall(prose)]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*]|<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown page (repeats get -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for line in _prose(text).splitlines():
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
    return out


@pytest.mark.parametrize("page", MARKDOWN, ids=_page_id)
def test_links_stay_in_the_repository_and_exist(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    problems = []
    for target in _links(text):
        if re.match(r"^https?://", target):
            continue
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("/", "\\", "~")):
            problems.append(f"{target}: not a relative link inside the repository")
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        try:
            resolved.relative_to(ROOT)
        except ValueError:
            problems.append(f"{target}: leaves the repository")
            continue
        if not resolved.exists():
            problems.append(f"{target}: {resolved.relative_to(ROOT)} does not exist")
            continue
        if anchor and resolved.suffix == ".md":
            if anchor not in anchors(resolved.read_text(encoding="utf-8")):
                problems.append(f"{target}: no heading #{anchor} in "
                                f"{resolved.relative_to(ROOT)}")
    assert not problems, f"{_page_id(page)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page", MARKDOWN, ids=_page_id)
def test_no_reference_to_material_users_lack(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = [word for word in FORBIDDEN if word.lower() in text.lower()]
    assert not found, f"{_page_id(page)} mentions {found}"


def test_readme_links_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/index.md" in _links(readme)


# -- the checker checks -------------------------------------------------------------------


def test_blocks_and_directives_are_parsed() -> None:
    text = ("<!-- file: conftest.py -->\n```python\nX = 1\n```\n\ntext\n\n"
            "<!-- stale -->\nprose\n```bash\nls\n```\n")
    found = blocks(text)
    assert [(b.lang, b.body, b.line, b.directive) for b in found] == [
        ("python", "X = 1\n", 3, "file: conftest.py"), ("bash", "ls\n", 11, None)]


def test_output_matching() -> None:
    printed = "a  b   c\n____ test_x ____\nFAIL max_gap=0.1: gap 0.25\n1 failed in 0.12s\n"
    check_output("a b c\n...\nFAIL max_gap=0.1\n1 failed in ...s\n", printed, "x")
    with pytest.raises(AssertionError, match="not printed"):
        check_output("FAIL max_gap=0.1\na b c\n", printed, "x")


def test_link_checker() -> None:
    text = ("[a](docs/x.md#top) `[b](nope.md)` ![c](img.png 'title')\n[d]: ../shared/x\n"
            '<a href="https://example.org">e</a>\n```\n[f](hidden.md)\n```\n')
    assert _links(text) == ["docs/x.md#top", "img.png", "../shared/x", "https://example.org"]
    assert slug("`max_gap` and `at=`") == "max_gap-and-at"
    assert slug("Gating a TPR gap (equal opportunity)") == "gating-a-tpr-gap-equal-opportunity"
    assert (slug("`variant=\"reference\"`: the released code")
            == "variantreference-the-released-code")
    assert anchors("# A\n## A\n") == {"a", "a-1"}
