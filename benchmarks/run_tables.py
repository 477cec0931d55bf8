"""The speed benchmark's report (:mod:`benchmarks.run`): the rows of each game's table from the
measurements of :mod:`benchmarks.run_ours` and :mod:`benchmarks.run_anchors`, and the
performance targets judged on them (PASS / FAIL).
"""

from __future__ import annotations

from typing import Any

from benchmarks.harness import DASH, Report, Row, fmt_num, fmt_rate, fmt_us

# the project's performance targets (printed with PASS/FAIL in the report)
TARGET_AEC_VS_RLCARD = 10.0  # AEC env steps/s >= 10x RLCard's env steps/s
TARGET_RAW_VS_OPENSPIEL = 5.0  # raw engine decisions/s >= 5x OpenSpiel's
TARGET_FREE_LEAD_US = 5.0  # free-lead legal-move generation <= 5 us on a 20-card hand
TARGET_WILD_VS_DDZ4 = 10.0  # wulong move generation <= 10x 4-player Dou Dizhu's (25 cards)
TARGET_PDK_VS_WAKENG = 1.5  # paodekuai free-lead Game.legal and AEC steps/s vs Wakeng's


def build_rows(name: str, m: dict[str, Any], a: dict[str, Any], rep: Report,
               anchors: dict[str, bool]) -> None:
    """The markdown rows of one game; fills ``rep.values`` for the targets."""
    ddz = name == "doudizhu"
    game, pos, module = m["game"], m["pos"], m["module"]
    g = m.get
    kf, pf, gf, kw, pw, gw = g("kf"), g("pf"), g("gf"), g("kw"), g("pw"), g("gw")
    raw, raw_e, aec, aec_no = g("raw"), g("raw_e"), g("aec"), g("aec_no")
    dz_free, dz_follow = a.get("dz_free"), a.get("dz_follow")
    os_free, os_follow = a.get("os_free"), a.get("os_follow")
    osr, ose, osc, rl = a.get("osr"), a.get("ose"), a.get("osc"), a.get("rl")
    h_free, h_follow = m["h_free"], m["h_follow"]
    n_free, n_follow = len(pos.free_counts), len(pos.follow_counts)

    def note(ours: str, *theirs: str) -> str:
        return "; ".join([ours] + (list(t for t in theirs if t) if ddz else []))

    mg = m["mg"]
    wild = bool(getattr(getattr(game, "rules", None), "wilds", 0))  # wild jokers
    gen_note = (f"{mg.name}: the game's own generator (the plain `gen_legal` on a table of "
                f"effective plays would ignore the wild jokers)" if wild else
                f"{mg.name}: the game's own generator (its play rules on top of `gen_legal`)"
                if mg.wild else mg.name)
    first = "right after the auction" if game.blocks.get("bid") else "at the start of the play"
    v = rep.values
    if kf:
        v[f"{name}.free_kernel_us"] = kf[0]
    if kw:
        v[f"{name}.follow_kernel_us"] = kw[0]
    if gf:
        v[f"{name}.free_legal_us"] = gf[0]
    if m.get("kf25"):
        v[f"{name}.free25_kernel_us"] = m["kf25"][0]
    v[f"{name}.free_hand"] = h_free
    if raw:
        v[f"{name}.raw_dps"] = raw["decisions_per_s"]
        if raw["max_abs_reward_sum"] != 0 and game.info.zero_sum:
            rep.extra.append(f"**Warning**: {name} random deals were not zero-sum "
                             f"(max |sum| {raw['max_abs_reward_sum']}).\n")
    if aec:
        v[f"{name}.aec"] = aec[0]
    if aec_no:
        v[f"{name}.aec_noobs"] = aec_no[0]
    if ddz and osr:
        v["openspiel.dps"] = osr["decisions_per_s"]
        v["openspiel.dps_with_deal"] = osr["games_per_s"] * osr["decisions_per_game"]
    if ddz and osc:
        v["openspiel.cpp_dps"] = osc["decisions_per_s"]
    if ddz and rl:
        v["rlcard.steps"] = rl[0]
    na = "n/a" if ddz and anchors["openspiel"] else DASH

    rows = [
        Row(f"legal moves, free lead ({h_free:.0f}-card hand): kernel, µs/call",
            fmt_us(kf[0] if kf else None), openspiel=na,
            note=note(f"{gen_note}, prev = -1, in a numba loop over {n_free} leads {first}",
                      "OpenSpiel's C++ generator is reachable only through Python")),
        Row("legal moves, free lead: move generator from Python, µs/call",
            fmt_us(pf), douzero=fmt_us(dz_free["mg_us"]) if dz_free else DASH,
            note=note(f"{mg.name}, prev = -1, numba dispatch included",
                      "DouZero: `MovesGener(hand).gen_moves()`")),
        Row("legal moves, free lead: full legal-action call from Python, µs/call",
            fmt_us(gf[0] if gf else None),
            douzero=fmt_us(dz_free["full_us"]) if dz_free else DASH,
            openspiel=fmt_us(os_free[0]) if os_free else DASH,
            note=note("`Game.legal(state, out)`",
                      "DouZero: `GameEnv.get_legal_card_play_actions()`",
                      "OpenSpiel: `state.legal_actions()` (building the Python list included)")),
        Row("legal moves per free lead (mean)",
            fmt_num(gf[1] if gf else None),
            douzero=fmt_num(dz_free["full_mean"]) if dz_free else DASH,
            openspiel=fmt_num(os_free[1]) if os_free else DASH,
            note=note("`Game.legal` ids: one per effective play (which jokers stand in is a "
                      "follow-up decision), plus any other action open then (Wulong's 报牌)"
                      if wild else "one action per (cards, reading)",
                      "the packages' move sets differ")),
    ]
    if m.get("kf25"):
        rows.append(Row("legal moves, free lead (25-card hand of a seat that is not leading): "
                        "kernel, µs/call", fmt_us(m["kf25"][0]),
                        note=f"{m['h25_n']} hands of the other seats at the free leads above: "
                             f"the hand size of Lanxi Wulong (its move-generation target)"))
    if n_follow:
        skipped = []
        if dz_follow and dz_follow["skipped"]:
            skipped.append(f"DouZero: {dz_follow['skipped']} leads it cannot read skipped")
        if a.get("os_skipped"):
            skipped.append(f"OpenSpiel: {a['os_skipped']} leads outside its move set skipped")
        rows += [
            Row(f"legal moves, follow ({h_follow:.0f}-card hand, random legal lead): kernel, µs/call",
                fmt_us(kw[0] if kw else None), openspiel=na,
                note=f"{n_follow} follows: the next seat against a uniformly random legal lead"),
            Row("legal moves, follow: move generator from Python, µs/call", fmt_us(pw),
                note=mg.name),
            Row("legal moves, follow: full legal-action call from Python, µs/call",
                fmt_us(gw[0] if gw else None),
                douzero=fmt_us(dz_follow["full_us"]) if dz_follow else DASH,
                openspiel=fmt_us(os_follow[0]) if os_follow else DASH,
                note=note("as for free leads, pass included", *skipped)),
            Row("legal moves per follow (mean, pass included)", fmt_num(gw[1] if gw else None),
                douzero=fmt_num(dz_follow["full_mean"]) if dz_follow else DASH,
                openspiel=fmt_num(os_follow[1]) if os_follow else DASH),
        ]
    rows += [
        Row("raw engine: random games/s",
            fmt_rate(raw["games_per_s"] if raw else None),
            openspiel=fmt_rate(osr["games_per_s"]) if osr else DASH,
            note=note("`random_rollouts`: the whole game in numba (deal and every phase)",
                      "OpenSpiel: Python loop, the deal's 52 chance steps included")),
        Row("raw engine: random decisions/s",
            fmt_rate(raw["decisions_per_s"] if raw else None),
            openspiel=fmt_rate(osr["decisions_per_s"]) if osr else DASH,
            note=note("every action of the deal (auction and play)" if ddz else
                      "every decision of every phase",
                      "OpenSpiel: `legal_actions()` + `apply_action()` from Python, time of the "
                      "chance steps left out")),
    ]
    if osc:
        rows.append(Row(
            "raw engine, no Python in the loop: games/s / decisions/s",
            f"{fmt_rate(raw['games_per_s'])} / {fmt_rate(raw['decisions_per_s'])}" if raw else DASH,
            openspiel=f"{fmt_rate(osc['games_per_s'])} / {fmt_rate(osc['decisions_per_s'])}",
            note="OpenSpiel: `pyspiel.evaluate_bots` with three `make_uniform_random_bot` "
                 "(its C++ loop, deal included)"))
    rows += [
        Row("raw engine + observation encoding: decisions/s",
            fmt_rate(raw_e["decisions_per_s"] if raw_e else None),
            openspiel=fmt_rate(ose["decisions_per_s"]) if ose else DASH,
            note=note("`k_encode` of the seat to move at every decision",
                      "OpenSpiel: plus `observation_tensor(player)`")),
        Row("env steps/s, masked random policy (with observation)",
            fmt_rate(aec[0] if aec else None),
            rlcard=fmt_rate(rl[0]) if rl else DASH,
            note=note(f"`{module}.env()`: `env.last()` + uniform pick from `env.legal_actions()`",
                      "RLCard: `env.step` with its state encoding, uniform legal action")),
        Row("env steps/s without observe", fmt_rate(aec_no[0] if aec_no else None),
            note="`env.last(observe=False)`"),
        Row("decisions per game (mean)",
            fmt_num(raw["decisions_per_game"] if raw else None),
            rlcard=fmt_num(rl[1]) if rl else DASH,
            openspiel=fmt_num(osr["decisions_per_game"]) if osr else DASH,
            note=note("auction included" if ddz else "every decision, all phases, default options",
                      "RLCard has no auction")),
    ]
    rep.sections.append((f"{game.info.title} (`{name}`)", rows))

    prof, pl = m.get("profile"), m.get("planes_us")
    if prof and kf:
        pl_text = f" `planes(counts)` alone takes {pl:.3f} µs of the {kf[0]:.2f} µs." if pl else ""
        rep.extra.append(
            f"**Free-lead kernel profile** ({name}, {h_free:.0f}-card hands, "
            f"{m['profile_n']} positions): the table has {prof['rows']:,.0f} rows in "
            f"{prof['groups']:,.0f} body groups (largest {prof['largest_group']:,.0f} rows) and "
            f"{prof['segments']:,.0f} segments ({prof['regular_segments']:,.0f} regular runs of "
            f"bodies). A free lead visits {prof['visited']:.1f} segments on average, one run "
            f"mask each (the others are jumped over: no body of a shorter chain fits)"
            + (f", and tests {prof['irregular_bodies']:.1f} bodies of irregular segments one "
               f"by one" if prof["regular_segments"] < prof["segments"] else "") +
            f"; {prof['fit_groups']:.1f} groups fit, and their kicker rows cost "
            f"{prof['rows_tested']:.0f} row tests on average (median "
            f"{prof['rows_tested_p50']:.0f}, p90 {prof['rows_tested_p90']:.0f}, p99 "
            f"{prof['rows_tested_p99']:.0f}), plus {prof['lone_rows']:.1f} single-row groups "
            f"emitted without a test and {prof.get('rows_from_index', 0):.1f} rows read from "
            f"kicker / row-bit indexes, for {prof['rows_emitted']:.1f} rows emitted."
            f"{pl_text}\n")


def wild_vs_ddz4(rep: Report) -> None:
    """The wild-joker target: Lanxi Wulong's move generation (wild jokers) at most
    :data:`TARGET_WILD_VS_DDZ4` times slower than 4-player Dou Dizhu's on 25-card hands: free
    leads (4-player Dou Dizhu: the 25-card hands of the seats not leading) and follows (both
    games: the next seat's 25 cards against a random legal lead)."""
    v = rep.values
    name = f"Lanxi Wulong: move generation <= {TARGET_WILD_VS_DDZ4:g}x slower than 4-player " \
           f"Dou Dizhu's on 25-card hands (kernel)"
    pairs = [("free lead", "wulong.free_kernel_us", "doudizhu4.free25_kernel_us"),
             ("follow", "wulong.follow_kernel_us", "doudizhu4.follow_kernel_us")]
    have = [(what, v[a], v[b]) for what, a, b in pairs if a in v and b in v]
    if "wulong.free_kernel_us" not in v and "doudizhu4.free_kernel_us" not in v:
        return  # neither game measured
    if len(have) < len(pairs):
        rep.pending_targets.append((name, DASH, DASH, "not measured (run both games)", "SKIP"))
        return
    ratios = [w / d for _, w, d in have]
    rep.pending_targets.append((
        name,
        "; ".join(f"{what} {w:.2f} µs" for what, w, _ in have),
        "; ".join(f"{what} {d:.2f} µs" for what, _, d in have),
        "; ".join(f"{what} {r:.1f}x" for (what, _, _), r in zip(have, ratios)),
        "**PASS**" if max(ratios) <= TARGET_WILD_VS_DDZ4 else "**FAIL**"))


def pdk_vs_wakeng(rep: Report) -> None:
    """Pao De Kuai's target: free-lead ``Game.legal`` at most :data:`TARGET_PDK_VS_WAKENG` times
    Wakeng's (same deck size class: 16-card hands) and AEC env steps/s at least 1 /
    :data:`TARGET_PDK_VS_WAKENG` of Wakeng's."""
    v = rep.values
    name = (f"Pao De Kuai: free-lead `Game.legal` and AEC env steps/s within "
            f"{TARGET_PDK_VS_WAKENG:g}x of Wakeng's")
    keys = ["paodekuai.free_legal_us", "wakeng.free_legal_us", "paodekuai.aec", "wakeng.aec"]
    if "paodekuai.free_legal_us" not in v and "wakeng.free_legal_us" not in v:
        return
    if any(k not in v for k in keys):
        rep.pending_targets.append((name, DASH, DASH, "not measured (run both games)", "SKIP"))
        return
    legal = v["paodekuai.free_legal_us"] / v["wakeng.free_legal_us"]
    steps = v["wakeng.aec"] / v["paodekuai.aec"]
    rep.pending_targets.append((
        name, f"{v['paodekuai.free_legal_us']:.2f} µs; {fmt_rate(v['paodekuai.aec'])} steps/s",
        f"{v['wakeng.free_legal_us']:.2f} µs; {fmt_rate(v['wakeng.aec'])} steps/s",
        f"Game.legal {legal:.2f}x; steps {steps:.2f}x slower",
        "**PASS**" if max(legal, steps) <= TARGET_PDK_VS_WAKENG else "**FAIL**"))


def doudizhu_targets(rep: Report) -> None:
    """The three targets of 3-player Dou Dizhu (:data:`TARGET_AEC_VS_RLCARD`,
    :data:`TARGET_RAW_VS_OPENSPIEL`, :data:`TARGET_FREE_LEAD_US`) from ``rep.values``, appended
    to ``rep.targets``; an anchor not measured gives a SKIP."""
    v = rep.values

    def verdict(ok: bool) -> str:
        return "**PASS**" if ok else "**FAIL**"

    if "doudizhu.aec" in v and "rlcard.steps" in v:
        r = v["doudizhu.aec"] / v["rlcard.steps"]
        rn = v.get("doudizhu.aec_noobs", 0.0) / v["rlcard.steps"]
        rep.targets.append((
            f"Dou Dizhu: AEC env steps/s >= {TARGET_AEC_VS_RLCARD:g}x RLCard's",
            fmt_rate(v["doudizhu.aec"]), fmt_rate(v["rlcard.steps"]),
            f"{r:.1f}x (without observe {rn:.1f}x)", verdict(r >= TARGET_AEC_VS_RLCARD)))
    else:
        rep.targets.append((f"Dou Dizhu: AEC env steps/s >= {TARGET_AEC_VS_RLCARD:g}x RLCard's",
                            fmt_rate(v.get("doudizhu.aec")), "not measured", DASH, "SKIP"))
    if "doudizhu.raw_dps" in v and "openspiel.dps" in v:
        r = v["doudizhu.raw_dps"] / v["openspiel.dps"]
        more = [f"with its deal {v['doudizhu.raw_dps'] / v['openspiel.dps_with_deal']:.1f}x"]
        if "openspiel.cpp_dps" in v:
            more.append(f"vs its C++ loop {v['doudizhu.raw_dps'] / v['openspiel.cpp_dps']:.1f}x")
        rep.targets.append((
            f"Dou Dizhu: raw engine decisions/s >= {TARGET_RAW_VS_OPENSPIEL:g}x OpenSpiel's "
            "(Python loop, decision steps only)",
            fmt_rate(v["doudizhu.raw_dps"]), fmt_rate(v["openspiel.dps"]),
            f"{r:.1f}x ({'; '.join(more)})", verdict(r >= TARGET_RAW_VS_OPENSPIEL)))
    else:
        rep.targets.append((f"Dou Dizhu: raw engine decisions/s >= {TARGET_RAW_VS_OPENSPIEL:g}x "
                            "OpenSpiel's (Python loop, decision steps only)",
                            fmt_rate(v.get("doudizhu.raw_dps")), "not measured", DASH, "SKIP"))
    if "doudizhu.free_kernel_us" in v:
        us = v["doudizhu.free_kernel_us"]
        rep.targets.append((
            f"Dou Dizhu: free-lead move generation <= {TARGET_FREE_LEAD_US:g} µs "
            f"({v['doudizhu.free_hand']:.0f}-card hand, kernel)",
            f"{us:.2f} µs", DASH, f"{us:.2f} µs", verdict(us <= TARGET_FREE_LEAD_US)))
