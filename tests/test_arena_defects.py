"""Arena defects of issue 51: intervals over independent units (9), a damaged progress file
refused (16), one run's progress never lost to another's (17), result files written
consistently and with the umask's mode (18)."""

from __future__ import annotations

import copy
import json
import os

import numpy as np
import pytest

from cardenvs.arena import run_arena, write_results
from cardenvs.cli import main

DEALS = 160


# -- 9: intervals over deals, checked against a per-deal bootstrap ---------------------------------


def _fixed_outcomes(monkeypatch):
    """Replace the play by a fixed result: the landlord's seat and the winning side depend on
    the deal (its seed) and a little on the landlord's agent, so the games of one deal are
    strongly correlated, as duplicate replays of the same cards are.  Returns the log of
    every game played: (deal seed, agent class per seat, rewards)."""
    import cardenvs.arena as arena

    log = []

    def fake(env, deal_seed, lineup, solo_slot=None):
        u = np.random.default_rng([int(deal_seed) % 2**32, 7]).random(2)
        solo = int(u[0] * 3)
        names = [type(a).__name__ for a in lineup]
        edge = 0.15 if names[solo] == "RulesAgent" else 0.0
        sign = 1.0 if u[1] + edge > 0.55 else -1.0
        rew = np.array([2.0 * sign if s == solo else -sign for s in range(3)])
        log.append((int(deal_seed), names, rew, solo))
        return rew, solo, 1

    monkeypatch.setattr(arena, "play_deal", fake)
    return log


def _per_deal(log, deal_seeds, agent: str, role: str):
    """Per deal: the games, wins and summed score of ``agent`` in ``role``."""
    index = {s: i for i, s in enumerate(deal_seeds)}
    g = np.zeros(len(deal_seeds))
    w = np.zeros(len(deal_seeds))
    s = np.zeros(len(deal_seeds))
    for seed, names, rew, solo in log:
        if seed not in index:  # the warm-up deal
            continue
        d = index[seed]
        for seat, nm in enumerate(names):
            if nm == agent and (seat == solo) == (role == "landlord"):
                g[d] += 1
                w[d] += rew[seat] > 0
                s[d] += rew[seat]
    return g, w, s


def _bootstrap(num, den, reps: int = 4000):
    """Percentile 95% interval of sum(num) / sum(den), resampling the deals."""
    rng = np.random.default_rng(12345)
    idx = rng.integers(0, len(num), size=(reps, len(num)))
    ratio = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    return np.percentile(ratio, [2.5, 97.5])


def test_role_intervals_are_over_deals_as_a_per_deal_bootstrap(monkeypatch):
    log = _fixed_outcomes(monkeypatch)
    res = run_arena("doudizhu", "rules,random", deals=DEALS, seed=0, progress=False)
    seeds = list(dict.fromkeys(s for s, *_ in log))[1:]  # the warm-up deal first
    assert len(seeds) == DEALS
    for agent, cls in (("rules", "RulesAgent"), ("random", "RandomAgent")):
        for role in ("landlord", "farmer"):
            g, w, s = _per_deal(log, seeds, cls, role)
            st = res["by_role"][agent][role]
            assert st["games"] == g.sum() and st["win_rate"] == pytest.approx(w.sum() / g.sum())
            assert st["deals"] == int((g > 0).sum())
            for key, num, centre in (("win_rate_ci", w, w.sum() / g.sum()),
                                     ("score_ci", s, s.sum() / g.sum())):
                lo, hi = st[key]
                blo, bhi = _bootstrap(num, g)
                # the same width as resampling whole deals (the games of a deal counted as
                # independent make it about half as wide here) ...
                assert hi - lo == pytest.approx(bhi - blo, rel=0.12), (agent, role, key)
                # ... and about the same place
                tol = 0.15 * (bhi - blo)
                assert abs(lo - blo) < tol and abs(hi - bhi) < tol, (agent, role, key)
                assert lo < centre < hi


def test_printout_says_the_intervals_are_over_deals(monkeypatch):
    _fixed_outcomes(monkeypatch)
    from cardenvs.arena import format_results

    res = run_arena("doudizhu", "rules,random", deals=12, seed=0, progress=False)
    text = format_results(res)
    assert "95% CIs over the 12 deals (the independent units" in text
    assert "over games" not in text
    st = res["by_role"]["rules"]["farmer"]
    assert f"games {st['games']:>5} in {st['deals']:>4} deals" in text


def test_role_interval_of_shared_outcomes_known_case():
    """100 deals, 2 farmer games a deal sharing their outcome, 90 deals won: the interval
    is Wilson's of 90 wins in 100 (the deals), not of 180 in 200 (the games)."""
    from cardenvs.arena import role_stats, wilson_ci

    games = np.full(100, 2.0)
    wins = np.where(np.arange(100) < 90, 2.0, 0.0)
    st = role_stats(games, wins, wins - (games - wins))
    _, lo, hi = wilson_ci(90, 100)
    assert st["win_rate"] == 0.9 and st["games"] == 200 and st["deals"] == 100
    # the effective number of games is 200 / design effect, the design effect
    # 200 * (n / (n - 1)) * sum((w - p g)^2) / 200^2 / (p (1 - p) / 200) = 2 * 100 / 99
    _, elo, ehi = wilson_ci(90 * 99 / 100, 99)
    assert st["win_rate_ci"] == pytest.approx([elo, ehi], abs=1e-12)
    assert st["win_rate_ci"] == pytest.approx([lo, hi], abs=2e-3)  # [0.826, 0.945]
    # all won: the deals holding the role are the units
    st = role_stats(games, games, games)
    assert st["win_rate_ci"] == pytest.approx(list(wilson_ci(100, 100)[1:]), abs=1e-12)
    with pytest.raises(ValueError, match="games, wins and score"):
        role_stats(games, wins[:5], wins)


# -- 16: a damaged progress file is refused, nothing written ---------------------------------------


def _interrupted_progress(tmp_path, monkeypatch, seed=4, deals=5, jobs=1):
    """An arena interrupted in deal 3 (``jobs=1``) or after one block; its progress file."""
    import cardenvs.arena as arena
    from cardenvs.arena import ArenaInterrupted

    if jobs == 1:
        real = arena.play_deal
        count = {"n": 0}

        def flaky(*a, **k):
            count["n"] += 1
            if count["n"] == 1 + 6 * 2 + 3:
                raise KeyboardInterrupt
            return real(*a, **k)

        monkeypatch.setattr(arena, "play_deal", flaky)
    else:
        real = arena._block_done

        def flaky(finished, block):
            real(finished, block)
            raise KeyboardInterrupt

        monkeypatch.setattr(arena, "_block_done", flaky)
    with pytest.raises(ArenaInterrupted):
        run_arena("wakeng", "rules,random", deals=deals, seed=seed, progress=False,
                  out_dir=tmp_path, save_seconds=1e9, jobs=jobs)
    monkeypatch.setattr(arena, "play_deal" if jobs == 1 else "_block_done", real)
    found = list(tmp_path.glob("*.progress.json"))
    assert len(found) == 1
    return found[0]


def _snapshot(folder):
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


SERIAL_DAMAGE = [
    ("no settings", lambda s: s.pop("settings"), "settings"),
    ("a NaN score", lambda s: s["score"][0].__setitem__(0, float("nan")), "score"),
    ("an infinite score", lambda s: s["score"][1].__setitem__(1, float("inf")), "score"),
    ("done beyond the deals", lambda s: s.__setitem__("done", 9), "done"),
    ("done not a number", lambda s: s.__setitem__("done", "2"), "done"),
    ("a short score", lambda s: s["score"].pop(), "score"),
    ("a win share above 1", lambda s: s["wins"][0].__setitem__(0, 3.0), "wins"),
    ("negative decisions", lambda s: s.__setitem__("decisions", -4), "decisions"),
    ("a bad generator state", lambda s: s["agent_rng"].__setitem__(0, {"rng": {"x": 1}}),
     "agent_rng"),
    ("no generator states", lambda s: s.pop("agent_rng"), "agent_rng"),
    ("a list, not an object", None, "not a JSON object"),
]


@pytest.mark.parametrize("what,damage,word", SERIAL_DAMAGE, ids=[d[0] for d in SERIAL_DAMAGE])
def test_resume_refuses_a_damaged_progress_file(tmp_path, monkeypatch, capsys, what, damage,
                                                word):
    ppath = _interrupted_progress(tmp_path, monkeypatch)
    state = json.loads(ppath.read_text())
    if damage is None:
        state = [state]
    else:
        damage(state)
    ppath.write_text(json.dumps(state))  # NaN and Infinity as Python's json writes them
    before = _snapshot(tmp_path)
    rc = main(["arena", "wakeng", "--agents", "rules,random", "--deals", "5", "--seed", "4",
               "--out", str(tmp_path), "--no-progress", "--resume"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("cardenvs: error: --resume: ") and "Traceback" not in err
    assert word in err and str(ppath) in err
    assert _snapshot(tmp_path) == before  # nothing written, nothing removed


def test_resume_refuses_damaged_block_progress_and_bad_json(tmp_path, monkeypatch, capsys):
    ppath = _interrupted_progress(tmp_path, monkeypatch, deals=25, jobs=2)
    good = json.loads(ppath.read_text())
    cases = [("blocks", lambda s: s.__setitem__("blocks", [0, 0])),
             ("blocks", lambda s: s.__setitem__("blocks", [7])),
             ("per_role", lambda s: s["per_role"][0][0][0].__setitem__(0, -1)),
             ("score", lambda s: s["score"][0].__setitem__(0, float("nan"))),
             ("void", lambda s: s.__setitem__("void", [0] * 3))]
    for word, damage in cases:
        state = copy.deepcopy(good)
        damage(state)
        ppath.write_text(json.dumps(state))
        with pytest.raises(ValueError, match=f"--resume: .*{word}"):
            run_arena("wakeng", "rules,random", deals=25, seed=4, progress=False,
                      out_dir=tmp_path, resume=True, jobs=2)
    for text in ("{", "[" * 100000 + "]" * 100000, "\xff\xfe"):
        ppath.write_bytes(text.encode("latin-1"))
        with pytest.raises(ValueError, match="not a readable arena progress file"):
            run_arena("wakeng", "rules,random", deals=25, seed=4, progress=False,
                      out_dir=tmp_path, resume=True, jobs=2)


def test_resume_into_a_missing_folder_creates_nothing(tmp_path):
    where = tmp_path / "nowhere"
    with pytest.raises(ValueError, match="no saved progress"):
        run_arena("wakeng", "rules,random", deals=2, seed=0, progress=False, out_dir=where,
                  resume=True)
    assert not where.exists()


# -- 17: another run's progress is never lost ------------------------------------------------------


def test_a_shorter_run_keeps_the_interrupted_runs_progress(tmp_path, monkeypatch, capsys):
    full = run_arena("wakeng", "rules,random", deals=5, seed=4, progress=False)
    ppath = _interrupted_progress(tmp_path, monkeypatch)
    saved = ppath.read_bytes()
    capsys.readouterr()
    # a shorter run of the same agents, and one with another seed, in the same folder
    for deals, seed in (("2", "4"), ("5", "9")):
        assert main(["arena", "wakeng", "--agents", "rules,random", "--deals", deals, "--seed",
                     seed, "--out", str(tmp_path), "--no-progress"]) == 0
        assert "starting again" not in capsys.readouterr().err
        assert ppath.read_bytes() == saved
    results = sorted(p.name for p in tmp_path.glob("arena_*.json")
                     if not p.name.endswith(".progress.json"))
    assert len(results) == 2  # each run its own result
    # --resume with the first run's settings still finds its progress and completes it
    assert main(["arena", "wakeng", "--agents", "rules,random", "--deals", "5", "--seed", "4",
                 "--out", str(tmp_path), "--no-progress", "--resume"]) == 0
    assert not ppath.exists()
    out = capsys.readouterr().out
    name = out.strip().splitlines()[-1].split()[1]
    assert json.loads(open(name).read())["score_per_deal"] == full["score_per_deal"]


def test_resume_with_other_settings_names_the_progress_it_found(tmp_path, monkeypatch):
    ppath = _interrupted_progress(tmp_path, monkeypatch)
    with pytest.raises(ValueError, match=f"{ppath.name}.* is for other settings \\(seed 4, "
                                         f"not 5\\)"):
        run_arena("wakeng", "rules,random", deals=5, seed=5, progress=False,
                  out_dir=tmp_path, resume=True)


def test_file_names_carry_the_settings():
    from cardenvs.arena import progress_path, results_stem, run_settings

    a = run_settings("doudizhu", ["trained", "rules", "random"], 200, 0, {}, "auto", 1)
    stem = results_stem(a)
    assert stem.startswith("arena_doudizhu_trained_rules_random_200deals_seed0_")
    assert len(stem) == len("arena_doudizhu_trained_rules_random_200deals_seed0_") + 8
    others = [run_settings("doudizhu", ["trained", "rules", "random"], *x) for x in (
        (200, 0, {}, "auto", 2), (200, 0, {"preset": "rlcard"}, "auto", 1),
        (200, 0, {}, "rotate", 1), (200, 1, {}, "auto", 1), (20, 0, {}, "auto", 1))]
    assert len({results_stem(s) for s in [a] + others}) == 6
    assert progress_path("out", a).name == f"{stem}.progress.json"
    # weight files of the same name in other folders are other agents
    b = run_settings("wakeng", ["trained:x/w.npz", "rules"], 5, 0, {}, "auto", 1)
    c = run_settings("wakeng", ["trained:y/w.npz", "rules"], 5, 0, {}, "auto", 1)
    assert results_stem(b) != results_stem(c) and "trained-w_rules" in results_stem(b)


# -- 18: result files consistent, with the umask's mode ---------------------------------------------


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_result_and_progress_files_get_the_umask_mode(tmp_path, monkeypatch, umask022):
    ppath = _interrupted_progress(tmp_path, monkeypatch)
    assert ppath.stat().st_mode & 0o777 == 0o644
    res = run_arena("wakeng", "rules,random", deals=2, seed=1, progress=False)
    j, p = write_results(res, tmp_path / "r")
    assert j.stat().st_mode & 0o777 == 0o644 and p.stat().st_mode & 0o777 == 0o644
    os.umask(0o027)
    j, p = write_results(res, tmp_path / "r")
    assert j.stat().st_mode & 0o777 == 0o640 and p.stat().st_mode & 0o777 == 0o640


def test_a_kill_between_json_and_png_leaves_no_stale_png(tmp_path, monkeypatch):
    res = run_arena("wakeng", "rules,random", deals=2, seed=1, progress=False)
    j, p = write_results(res, tmp_path)
    old_png = p.read_bytes()
    new = copy.deepcopy(res)
    pair = next(iter(new["pairwise"]))
    new["pairwise"][pair]["score_diff"] += 1.0
    real = os.replace

    def killed_at_png(src, dst, *a, **k):
        if str(dst).endswith(".png"):
            raise KeyboardInterrupt  # the process dies here
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", killed_at_png)
    with pytest.raises(KeyboardInterrupt):
        write_results(new, tmp_path)
    monkeypatch.setattr(os, "replace", real)
    assert json.loads(j.read_text())["pairwise"][pair]["score_diff"] == \
        new["pairwise"][pair]["score_diff"]
    # the new JSON stands alone: no PNG of the earlier result beside it, no temporary file
    assert not p.exists() or p.read_bytes() != old_png
    assert sorted(x.name for x in tmp_path.iterdir()) == [j.name]
    # and a whole write leaves both
    j2, p2 = write_results(new, tmp_path)
    assert (j2, p2) == (j, p) and p.read_bytes()[:4] == b"\x89PNG"
