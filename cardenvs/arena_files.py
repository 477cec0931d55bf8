"""The arena's files: results (JSON and PNG) and the progress of an unfinished run.

Both are named by every setting of the run (:func:`results_stem`): the game, the agents,
the number of deals and the seed in words, and a short hash of all the settings (the
agents' full specs, the options, the lineups, the blocks of a ``jobs > 1`` run), so that
runs of other settings in the same folder never replace each other's files, and an
unfinished run's progress is only ever continued, replaced or removed by a run of the same
settings.  Every file is written whole (:func:`write_atomic`) with the mode the umask gives
a new file; a progress file is checked in full before a run resumes from it
(:func:`read_progress`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

#: the longest agents part of a file name (the hash tells longer lists apart)
_MAX_AGENTS_CHARS = 100


#: a file or folder path: a string or an ``os.PathLike`` (``pathlib.Path``)
StrPath = Union[str, os.PathLike]


def labels_of(names: Sequence[str]) -> list[str]:
    """Unique labels: a repeated name gets ``_2``, ``_3`` ...; a weight file given as
    ``trained:path/to/NAME.npz`` is labelled ``trained:NAME`` (a spec with keywords,
    ``search:rollouts=1200``, is its own label)."""
    seen: dict[str, int] = {}
    out = []
    for nm in names:
        base, sep, arg = nm.partition(":")
        if sep and "=" not in arg:  # trained:runs/x/wakeng.npz -> trained:wakeng
            nm = f"{base}:{Path(arg).stem}"
        seen[nm] = seen.get(nm, 0) + 1
        out.append(nm if seen[nm] == 1 else f"{nm}_{seen[nm]}")
    return out


def _jsonable(x):
    """numpy scalars and big ints inside bit-generator states -> JSON (ints stay exact)."""
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the process's umask."""
    mask = os.umask(0o022)  # the only portable way to read it: set, then put back
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: StrPath, data: Union[bytes, str]) -> Path:
    """Write ``data`` (bytes or str) to ``path`` through a temporary file in the same folder
    and ``os.replace``: a reader (or a kill) never sees a half-written file.  The file gets
    the mode a new file gets under the umask (0o644 under umask 022; a temporary file
    alone would keep 0o600)."""
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), _new_file_mode())
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def check_writable(out_dir: StrPath) -> Path:
    """Create ``out_dir`` if needed and check a file can be written there (``ValueError``
    naming the folder otherwise): done before any deal is played."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out, prefix=".write-check.")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise ValueError(f"cannot write the results to {str(out)!r}: {e.strerror or e}") from None
    return out


# -- names ------------------------------------------------------------------------------------------


def settings_digest(settings: dict) -> str:
    """8 hex digits of the SHA-256 of the settings (as canonical JSON)."""
    text = json.dumps(_jsonable(settings), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def results_stem(settings: dict) -> str:
    """``arena_GAME_AGENTS_Ndeals_seedS_HASH``: the file name (without suffix) of the results
    and the progress of an arena run of ``settings`` (:func:`cardenvs.arena.run_settings`;
    ``HASH``: :func:`settings_digest`); unsafe characters are replaced by ``-``."""
    agents = "_".join(labels_of(settings["agents"]))[:_MAX_AGENTS_CHARS]
    stem = (f"arena_{settings['game']}_{agents}_{settings['deals']}deals_seed{settings['seed']}"
            f"_{settings_digest(settings)}")
    return "".join(c if c.isalnum() or c in "_-." else "-" for c in stem)


def progress_path(out_dir: StrPath, settings: dict) -> Path:
    """Where an unfinished arena of ``settings`` keeps its progress (removed when it
    completes): ``OUT/STEM.progress.json`` (:func:`results_stem`)."""
    return Path(out_dir) / f"{results_stem(settings)}.progress.json"


def settings_of_result(res: dict) -> dict:
    """The settings of the run that made ``res`` (its ``settings``, or for a result without
    them, those its fields give)."""
    if isinstance(res.get("settings"), dict):
        return res["settings"]
    specs = res.get("agent_specs") or {}
    out = {"game": res["game"], "agents": [specs.get(a, a) for a in res["agents"]],
           "deals": res["deals"], "seed": res["seed"], "options": res.get("options", {}),
           "lineups": res.get("lineup_mode", "auto")}
    if res.get("deal_blocks"):
        out["deal_blocks"] = res["deal_blocks"]
    return out


def _settings_diff(theirs: dict, mine: dict) -> str:
    mine = json.loads(json.dumps(_jsonable(mine)))
    keys = [k for k in {**theirs, **mine} if theirs.get(k) != mine.get(k)]
    return ", ".join(f"{k} {theirs.get(k)!r}, not {mine.get(k)!r}" for k in keys)


def other_progress(out_dir: StrPath, settings: dict) -> list[tuple[Path, str]]:
    """Progress files in ``out_dir`` of the same game and agents as ``settings`` but other
    settings: ``(path, what differs)`` for each (unreadable files are left out)."""
    found: list[tuple[Path, str]] = []
    if not Path(out_dir).is_dir():
        return found
    mine = progress_path(out_dir, settings)
    for p in sorted(Path(out_dir).glob("arena_*.progress.json")):
        if p == mine:
            continue
        try:
            theirs = json.loads(p.read_text(encoding="utf-8"))["settings"]
            same = theirs["game"] == settings["game"] and theirs["agents"] == settings["agents"]
        except (OSError, ValueError, RecursionError, KeyError, TypeError):
            continue
        if same:
            found.append((p, _settings_diff(theirs, settings)))
    return found


# -- progress ---------------------------------------------------------------------------------------


class _Bad(Exception):
    """A field of a progress file that cannot be used (its message says which)."""


def _array(state: dict, key: str, shape: tuple, low: float = -math.inf,
           high: float = math.inf, integer: bool = False) -> np.ndarray:
    if key not in state:
        raise _Bad(f"no {key!r}")
    try:
        a = np.asarray(state[key], np.float64)
    except (ValueError, TypeError, OverflowError):
        raise _Bad(f"{key!r} is not an array of numbers") from None
    if a.shape != shape:
        raise _Bad(f"{key!r} has shape {a.shape}, not {shape}")
    if not np.isfinite(a).all():
        raise _Bad(f"{key!r} holds a value that is not a finite number (NaN or infinite)")
    if (a < low).any() or (a > high).any():
        raise _Bad(f"{key!r} holds a value outside [{low}, {high}]")
    if integer and (a != np.round(a)).any():
        raise _Bad(f"{key!r} holds a value that is not a whole number")
    return a


def _int(state: dict, key: str, low: int, high: int) -> int:
    v = state.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Bad(f"{key!r} is {v!r}, not a whole number")
    if not low <= v <= high:
        raise _Bad(f"{key!r} is {v}, outside [{low}, {high}]")
    return v


#: the bit generators a saved agent state may name
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def _rng_states(state: dict, k: int) -> list:
    rngs = state.get("agent_rng")
    if not isinstance(rngs, list) or len(rngs) != k:
        raise _Bad(f"'agent_rng' is not a list of {k} agents' generator states")
    for i, st in enumerate(rngs):
        if not isinstance(st, dict):
            raise _Bad(f"'agent_rng' of agent {i} is not an object")
        for path, gen in st.items():
            name = gen.get("bit_generator") if isinstance(gen, dict) else None
            if name not in _BIT_GENERATORS:
                raise _Bad(f"'agent_rng' of agent {i} ({path}) names no numpy bit generator")
            try:
                getattr(np.random, name)().state = gen
            except (ValueError, TypeError, KeyError, OverflowError) as e:
                raise _Bad(f"'agent_rng' of agent {i} ({path}) is not a {name} state "
                           f"({e})") from None
    return rngs


def read_progress(path: StrPath, settings: dict, k: int, blocks: Optional[int]) -> dict:
    """The progress saved at ``path`` by an arena of ``settings`` with ``k`` agents, checked
    in full: ``ValueError`` (starting ``--resume:``, naming the file and what is wrong) for a
    file that is unreadable, of other settings, or holds a field of the wrong shape, a value
    out of range or not a finite number.  ``blocks``: the number of blocks of a ``jobs > 1``
    run, ``None`` for one in order.  Arrays come back as numpy arrays."""
    deals = int(settings["deals"])
    try:
        state = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        raise ValueError(f"--resume: {path} is not a readable arena progress file "
                         f"({type(e).__name__}: {e}); start again without --resume") from None
    try:
        if not isinstance(state, dict):
            raise _Bad("it is not a JSON object")
        if not isinstance(state.get("settings"), dict):
            raise _Bad("no 'settings' object")
        diff = _settings_diff(state["settings"], settings)
        if diff:
            raise ValueError(f"--resume: the progress in {str(path)!r} is for other settings "
                             f"({diff}); rerun with those settings, or without --resume to "
                             "start again")
        out = dict(state)
        if blocks is None:
            done = _int(state, "done", 0, deals)
            n = done
            out["void"] = _int(state, "void", 0, done)
            out["decisions"] = _int(state, "decisions", 0, 2**62)
            out["agent_rng"] = _rng_states(state, k)
        else:
            got = state.get("blocks")
            if (not isinstance(got, list) or len(set(map(repr, got))) != len(got) or any(
                    isinstance(b, bool) or not isinstance(b, int) or not 0 <= b < blocks
                    for b in got)):
                raise _Bad(f"'blocks' is not a list of distinct block numbers 0 to {blocks - 1}")
            n = deals
            out["void"] = _array(state, "void", (deals,), 0, 1, True).astype(np.int64)
            out["decisions"] = _array(state, "decisions", (deals,), 0, 2**62, True).astype(
                np.int64)
        out["score"] = _array(state, "score", (n, k))
        out["wins"] = _array(state, "wins", (n, k), 0, 1)
        role = _array(state, "per_role", (3, n, k, 2))
        if (role[:2] < 0).any() or (role[:2] != np.round(role[:2])).any():
            raise _Bad("'per_role' holds games or wins that are not whole numbers >= 0")
        if (role[1] > role[0]).any():
            raise _Bad("'per_role' holds more wins than games")
        out["per_role"] = role
    except _Bad as e:
        raise ValueError(f"--resume: {path} is not a usable arena progress file: {e}; "
                         "start again without --resume") from None
    return out


# -- results ----------------------------------------------------------------------------------------


def write_results(res: dict, out_dir: StrPath) -> tuple[Path, Optional[Path]]:
    """Write ``STEM.json`` and ``STEM.png`` (:func:`results_stem`; the PNG only with
    matplotlib), each atomically (:func:`write_atomic`), and consistently: the chart is drawn
    first (a failure there changes nothing), then the PNG of an earlier result of the same
    name is removed, the JSON written and the PNG last, so a kill at any point never leaves a
    PNG beside a JSON it does not show."""
    from .arena_report import plot_results

    out = check_writable(out_dir)
    stem = results_stem(settings_of_result(res))
    jpath, ppath = out / f"{stem}.json", out / f"{stem}.png"
    text = json.dumps(res, indent=1, allow_nan=True) + "\n"
    png = None
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
        plt: Any = pyplot
    except ImportError:
        plt = None
    if plt is not None:
        fig = plot_results(res, plt)
        try:
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=110)
            png = buf.getvalue()
        finally:
            plt.close(fig)
    with contextlib.suppress(FileNotFoundError):
        ppath.unlink()  # the earlier result's chart goes before its JSON does
    write_atomic(jpath, text)
    if png is None:
        return jpath, None
    return jpath, write_atomic(ppath, png)


def load_result(result: StrPath) -> tuple[dict, str]:
    """An arena result and its path: ``result`` is the JSON ``cardenvs arena --out DIR``
    writes, or ``DIR`` holding exactly one (``ValueError`` otherwise, or for a file that is
    not an arena result)."""
    path = os.fspath(result)
    if os.path.isdir(path):
        found = sorted(p for p in Path(path).glob("arena_*.json")
                       if not p.name.endswith(".progress.json"))
        if len(found) != 1:
            raise ValueError(f"{path!r} holds {len(found)} arena results (arena_*.json); "
                             "name the file")
        path = str(found[0])
    if not os.path.exists(path):
        raise ValueError(f"no arena result at {path!r}")
    try:
        with open(path) as f:
            res = json.load(f)
        for key in ("game", "agents", "deals", "seed", "pairwise"):
            res[key]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        raise ValueError(f"{path!r} is not an arena result ({e})") from None
    return res, path
