"""The on-disk play-table cache (cardenvs.core.table.cached): the same table as a fresh
build, a truncated file rebuilt, and nothing stale or broken left behind."""

from __future__ import annotations

import numpy as np

from cardenvs.core.table import Table, cached
from cardenvs.games import wakeng


def _same(a: Table, b: Table) -> None:
    assert len(a) == len(b)
    for x, y in zip(a.arrays, b.arrays):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert [a.row_string(i) for i in range(len(a))] == [b.row_string(i) for i in range(len(b))]


def test_cached_table_equals_a_fresh_build_and_survives_a_truncated_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CARDENVS_CACHE_DIR", str(tmp_path))
    build = wakeng.play_table.__wrapped__  # the enumeration itself
    fresh = build(True)
    first = cached(build)(True)  # builds and writes
    files = list((tmp_path / "tables").glob("*.pkl"))
    assert len(files) == 1
    _same(first, fresh)
    again = cached(build)(True)  # a new wrapper: read from the file
    _same(again, fresh)
    files[0].write_bytes(files[0].read_bytes()[:100])  # truncated: rebuilt and rewritten
    rebuilt = cached(build)(True)
    _same(rebuilt, fresh)
    assert files[0].stat().st_size > 100
    other = cached(build)(True, 6)  # other arguments (straights of 6+): another file
    assert len(list((tmp_path / "tables").glob("*.pkl"))) == 2
    _same(other, build(True, 6))
    assert len(other) < len(fresh)
    assert not list((tmp_path / "tables").glob(".table.*"))  # no temporary file left


def test_unwritable_cache_folder_still_builds(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CARDENVS_CACHE_DIR", str(blocker))  # tables/ cannot be created under it
    build = wakeng.play_table.__wrapped__
    _same(cached(build)(True), build(True))
