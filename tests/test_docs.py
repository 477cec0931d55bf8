"""The rules pages in ``docs/rules/`` against the code, and no reference outside the repository.

The pages hold machine-readable tables, each right after a marker comment:

* ``<!-- options: GAME [GAME ...] -->`` (or ``env`` for the options every environment takes):
  ``| option | values | default | what it changes |``;
* ``<!-- actions: GAME [key=value ...] -->``: ``| block | ids | size | used for |``, ids written
  ``a..b`` or ``a``;
* ``<!-- observation: GAME -->``: ``| field | size | contents |``.

The options, their values and defaults, the action blocks and the observation fields are read
from the code (the games' option records, their constructors' signatures and checks, the
``blocks`` and ``layout`` of the compiled games), never from a list copied here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
from pathlib import Path

import pytest

from cardenvs import GAMES, REGISTRY, make_game
from cardenvs.core.aec import CardEnv

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules"
#: the rules page of each registered game
PAGES = {name: Path(s.rules_page).name for name, s in REGISTRY.items()}
#: keywords of the environments that are not game options
ENV_ONLY = {"self", "options"}

_MARK = re.compile(r"<!--\s*(options|actions|observation):\s*(.*?)\s*-->[ \t]*\n((?:[ \t]*\|.*(?:\n|$))+)")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(path: Path) -> list[tuple[str, list[str], list[list[str]]]]:
    """``(kind, marker arguments, body rows as cells)`` of every marked table of a page."""
    out = []
    for m in _MARK.finditer(path.read_text(encoding="utf-8")):
        lines = [ln for ln in m.group(3).splitlines() if ln.strip()]
        assert len(lines) >= 3, f"{path.name}: the {m.group(1)} table after {m.group(0)[:60]!r} is empty"
        assert set(lines[1].replace("|", "").strip()) <= set("-: "), f"{path.name}: no separator row"
        out.append((m.group(1), m.group(2).split(), [_cells(ln) for ln in lines[2:]]))
    return out


def _code(cell: str) -> str:
    """The text inside the backticks of a cell (the whole cell when it has none)."""
    m = re.fullmatch(r"`([^`]*)`", cell)
    assert m, f"expected one `code` item, got {cell!r}"
    return m.group(1)


def _literals(cell: str) -> list:
    """The Python literals written in backticks in a cell, e.g. ``"bid"``, ``3``, ``False``."""
    return [ast.literal_eval(t) for t in re.findall(r"`([^`]*)`", cell)]


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _game_args(args: list[str]) -> tuple[str, dict]:
    name, *rest = args
    opts = {}
    for kv in rest:
        k, v = kv.split("=", 1)
        opts[k] = ast.literal_eval(v)
    return name, opts


def _marked(kind: str) -> list[tuple[Path, list[str], list[list[str]]]]:
    return [(p, args, rows) for p in sorted(RULES.glob("*.md")) for k, args, rows in _tables(p)
            if k == kind]


def _game_options(name: str) -> dict:
    """Option name -> default, from the game's option record and its constructor."""
    game = make_game(name)
    params = inspect.signature(type(game).__init__).parameters
    sig = {k: p.default for k, p in params.items() if p.kind is p.KEYWORD_ONLY}
    assert set(sig) == set(game.info.options), (
        f"{name}: the option record {sorted(game.info.options)} and the constructor's keywords "
        f"{sorted(sig)} differ")
    for k, v in game.info.options.items():
        assert sig[k] == v, f"{name}: option {k!r} defaults to {sig[k]!r} but the record says {v!r}"
    return dict(game.info.options)


def _rejected(name: str, option: str, bad) -> Exception:
    with pytest.raises((ValueError, TypeError)) as e:
        make_game(name, **{option: bad})
    return e.value


# -- the pages exist -------------------------------------------------------------------------------


def test_every_game_has_a_rules_page_linked_from_the_index():
    assert set(PAGES) == set(GAMES), "a game without a rules page (or a page for no game)"
    index = (RULES / "README.md").read_text(encoding="utf-8")
    for name, page in PAGES.items():
        assert (RULES / page).is_file(), f"docs/rules/{page} is missing"
        assert f"`{name}`" in index and f"]({page}" in index, f"README.md does not list {name}"
        assert make_game(name).info.rules_page == f"docs/rules/{page}"


def test_each_page_has_its_tables():
    for name, page in PAGES.items():
        tables = _tables(RULES / page)
        assert any(k == "options" and name in a for k, a, _ in tables), f"{page}: no options table for {name}"
        assert any(k == "actions" and a == [name] for k, a, _ in tables), f"{page}: no default action table for {name}"
        assert any(k == "observation" and a == [name] for k, a, _ in tables), f"{page}: no observation table for {name}"
        text = (RULES / page).read_text(encoding="utf-8")
        assert "## What each seat sees" in text, f"{page}: no 'What each seat sees' section"


# -- options ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_page_names_every_option_with_its_default(name):
    options = _game_options(name)
    rows = [r for p, args, body in _marked("options") if name in args for r in body]
    documented = {_code(r[0]): r for r in rows}
    assert len(documented) == len(rows), f"{name}: an option is listed twice"
    assert set(documented) == set(options), (
        f"{name}: options in the code {sorted(options)}, on the page {sorted(documented)}")
    for opt, row in documented.items():
        (default,) = _literals(row[2])
        code = options[opt]
        assert default == code and type(default) is type(code), (
            f"{name}: the page says {opt}={default!r} by default, the code {code!r}")


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_values_on_the_page_are_the_values_the_code_accepts(name):
    """Choices: the page lists the values the code allows (read from the code's own rejection of a
    bad value, which names them); ranges: the page's bounds are the code's; bools: a non-bool is
    refused."""
    options = _game_options(name)
    for page, args, body in _marked("options"):
        if name not in args:
            continue
        games = [g for g in args if g in PAGES]
        for row in body:
            opt, values = _code(row[0]), row[1]
            default = options[opt]
            if isinstance(default, bool):
                assert _literals(values) == [False, True] or _literals(values) == [True, False]
                assert isinstance(_rejected(name, opt, "yes"), TypeError)
            elif isinstance(default, int):
                m = re.search(r"(-?[\d,]+) to (-?[\d,]+)", values)
                assert m, f"{page.name}: {opt} needs its range written 'lo to hi'"
                lo, hi = _number(m.group(1)), _number(m.group(2))
                for v in (lo, hi):
                    try:
                        make_game(name, **{opt: v})
                    except ValueError as e:
                        pytest.fail(f"{page.name}: {opt}={v} is within the page's range but refused: {e}")
                _rejected(name, opt, lo - 1)
                _rejected(name, opt, hi + 1)
            else:
                listed = set(_literals(values))
                allowed_here = _allowed(name, opt)
                allowed_anywhere = set().union(*(_allowed(g, opt) for g in games))
                assert allowed_here <= listed, f"{name}: {opt} also accepts {allowed_here - listed}"
                assert listed <= allowed_anywhere, f"{page.name}: {opt}: no game accepts {listed - allowed_anywhere}"


def _allowed(name: str, option: str) -> set:
    """The values the code allows for a choice option, from its error for a bad value."""
    bad = "no such value"
    msg = str(_rejected(name, option, bad))
    allowed = {v for v in re.findall(r"'([^']*)'", msg)} - {bad}
    assert allowed, f"{name}: the error for {option}={bad!r} does not list the allowed values: {msg}"
    for v in allowed:
        make_game(name, **{option: v})
    return allowed


def test_the_index_names_every_environment_option_with_its_default():
    params = inspect.signature(CardEnv.__init__).parameters
    env_opts = {k: p.default for k, p in params.items() if k not in ENV_ONLY}
    rows = [r for p, args, body in _marked("options") if args == ["env"] for r in body]
    documented = {_code(r[0]): r for r in rows}
    assert set(documented) == set(env_opts)
    for opt, row in documented.items():
        (default,) = _literals(row[2])
        assert default == env_opts[opt], f"{opt}: the page says {default!r}, the code {env_opts[opt]!r}"
        for v in _literals(row[1]):  # every listed value is accepted
            importlib.import_module("cardenvs.wakeng_v0").env(**{opt: v})


# -- action blocks and observations ----------------------------------------------------------------


def _ids(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"([\d,]+)(?:\.\.([\d,]+))?", text)
    assert m, f"ids must be written 'a..b' or 'a', got {text!r}"
    a = _number(m.group(1))
    b = _number(m.group(2)) if m.group(2) else a
    return a, b + 1


def test_action_tables_match_the_code():
    tables = _marked("actions")
    assert tables
    for page, args, rows in tables:
        name, opts = _game_args(args)
        game = make_game(name, **opts)
        blocks = [(_code(r[0]), _ids(r[1]), _number(r[2])) for r in rows]
        where = f"{page.name}, {' '.join(args)}"
        assert [b[0] for b in blocks] == list(game.blocks), f"{where}: blocks {list(game.blocks)}"
        for block, (a, b), size in blocks:
            assert (a, b) == game.blocks[block], f"{where}: {block} is {game.blocks[block]}"
            assert size == b - a, f"{where}: {block} has {b - a} ids, the page says {size}"
        assert blocks[-1][1][1] == game.n_actions
        text = page.read_text(encoding="utf-8")
        if not opts:
            assert f"N = {game.n_actions:,}" in text, f"{page.name}: N = {game.n_actions:,} not stated"


def test_observation_tables_match_the_code():
    for page, args, rows in _marked("observation"):
        (name,) = args
        fields = make_game(name).layout.fields
        assert [(_code(r[0]), _number(r[1])) for r in rows] == [(f.name, f.size) for f in fields], (
            f"{page.name}: the {name} observation is {[(f.name, f.size) for f in fields]}")


@pytest.mark.parametrize("name", sorted(PAGES))
def test_env_docstring_points_to_the_page_and_states_the_hidden_information(name):
    doc = importlib.import_module(f"cardenvs.{GAMES[name]}").__doc__
    assert f"docs/rules/{PAGES[name]}" in doc
    assert "**Hidden information.**" in doc


# -- no reference outside the repository -----------------------------------------------------------


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for rel in out.stdout.decode().split("\0"):
        p = ROOT / rel
        if rel and p.is_file():
            try:
                files.append((p, p.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                continue  # binary (weights, images)
    return files


def test_no_tracked_file_points_outside_the_repository():
    outside = ("shared" + "/", "/" + "work" + "/")  # split so this file does not match itself
    up = re.compile(r"(?<![\w.])((?:\.\./)+[\w.\-/]*)")
    link = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
    bad = []
    for path, text in _tracked_text_files():
        rel = path.relative_to(ROOT)
        for needle in outside:
            for m in re.finditer(re.escape(needle), text):
                bad.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {needle!r}")
        for m in up.finditer(text):
            target = (path.parent / m.group(1)).resolve()
            if ROOT.resolve() not in target.parents and target != ROOT.resolve():
                bad.append(f"{rel}: {m.group(1)!r} leaves the repository")
        if path.suffix == ".md":
            for m in link.finditer(text):
                t = m.group(1)
                if "://" in t or t.startswith("mailto:"):
                    continue
                target = (path.parent / t).resolve()
                if not target.exists() or ROOT.resolve() not in target.parents:
                    bad.append(f"{rel}: link {t!r} does not point to a file of the repository")
    assert not bad, "references outside the repository:\n" + "\n".join(bad)
