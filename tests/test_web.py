"""``cardenvs serve``: the web app's sessions and server (Starlette's TestClient), a real
uvicorn server, and the page in headless Chromium (Debian's ``chromium``; those tests skip
without it), driven by mouse clicks over the DevTools protocol like the replay viewer's tests.

Run as a script to write a screenshot of the page: ``python tests/test_web.py OUT.png``.
"""

from __future__ import annotations

import copy
import json
import socket
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install -e .[web])")
pytest.importorskip("uvicorn", reason="the web extra is not installed (pip install -e .[web])")

import cardenvs
from cardenvs import replay as R
from cardenvs.core.state import hand_off
from cardenvs.web import STATIC
from cardenvs.web.server import create_app
from cardenvs.web.session import HIDDEN, GameSession
from starlette.testclient import TestClient

GAMES = list(cardenvs.GAMES)


# -- sessions ------------------------------------------------------------------------------------


def _zones(rep: dict) -> dict:
    """The card zones after the last action, as the page's table.js builds them: counts per
    rank, the last slot counting hidden cards ('?')."""
    ranks = rep["ranks"]

    def parse(s):
        c = np.zeros(len(ranks) + 1, np.int64)
        for ch in s:
            c[len(ranks) if ch == HIDDEN else ranks.index(ch)] += 1
        return c

    def deal(d):
        z = {f"hand {i}": parse(h) for i, h in enumerate(d["hands"])}
        z.update({f"played {i}": parse("") for i in range(rep["n_players"])})
        z.update({k: parse(v) for k, v in d["piles"].items()})
        return z

    z = deal(rep["deals"][0])
    for a in rep["actions"]:
        for src, dst, cards in a.get("moves", []):
            c = parse(cards)
            if src is not None:
                z[src] -= c
            if dst is not None:
                z[dst] += c
        if "deal" in a:
            z = deal(rep["deals"][a["deal"]])
    return z


def _split(c: np.ndarray) -> tuple[np.ndarray, int]:
    """(known cards, number of hidden ones) of a zone, as table.js draws it."""
    known = np.maximum(c[:-1], 0)
    return known, int(c[-1] + np.minimum(c[:-1], 0).sum())


def _play_out(s: GameSession, rng, check=None) -> None:
    while not s.done:
        if s.players_turn:
            v = s.view()
            if check is not None:
                check(s, v)
            s.act(v["legal"][rng.integers(len(v["legal"]))]["id"], v["turn"])
        else:
            s.agent_step()


@pytest.mark.parametrize("name", GAMES)
def test_the_players_view_hides_the_other_hands_and_adds_up(name):
    """At every turn of the player: the replay he receives has no seed, the other seats' dealt
    cards and the piles he cannot see as '?'; built as the page builds it, his own hand is the
    real one, every other zone holds as many cards as the real one, and no hidden count goes
    below zero; each legal card play takes cards he holds.  At the end the full replay comes,
    and it verifies."""
    opts = {"match": True, "target_score": 3} if name == "niangniang" else {}
    s = GameSession(name, opts, seat=1, agents="rules", seed=11)
    g = s.game
    n = g.n_players
    seen = {"turns": 0, "hidden_pile": False}

    def check(s, v):
        rep = v["replay"]
        assert "seed" not in rep and "deal_seed" not in rep and "rng_state" not in rep
        for d in rep["deals"]:
            for i, h in enumerate(d["hands"]):
                assert (set(h) <= {HIDDEN}) == (i != 1 and len(h) > 0) or not h
        z = _zones(rep)
        st = s.env.unwrapped.state_vec
        for i in range(n):
            real = np.asarray(st[hand_off(i):hand_off(i) + g.deck.n_ranks])
            known, hidden = _split(z[f"hand {i}"])
            assert hidden >= 0
            if i == 1:
                assert hidden == 0 and np.array_equal(known, real)
            else:
                assert known.sum() + hidden == real.sum()
                assert np.all(known <= real)  # cards shown in a hidden hand are really there
        for k, c in z.items():
            if not k.startswith(("hand ", "played ")):
                known, hidden = _split(c)
                assert hidden >= 0
                seen["hidden_pile"] |= hidden > 0
        hand = Counter(v["hands"]["1"])
        assert v["hands"]["1"] == s.hand(1)
        for m in v["legal"]:
            assert m["text"] == g.action_to_string(m["id"])
            if "cards" in m:
                assert not (Counter(m["cards"]) - hand), (m, v["hands"]["1"])
                assert sum(m["counts"]) == len(m["cards"]) == int(g.tab.counts[m["id"]].sum())
        seen["turns"] += 1

    _play_out(s, np.random.default_rng(3), check)
    assert seen["turns"] > 0
    if name in ("doudizhu", "wakeng", "wulong", "paodekuai", "doudizhu4"):
        # a kitty before the auction, Wakeng's buried cards or the unused cards stay hidden
        assert seen["hidden_pile"] or name == "paodekuai"
    v = s.view()
    assert v["done"] and v["replay"]["seed"] == 11 and v["legal"] == []
    rep = R.loads(v["replay_json"])
    assert rep["actions"] == v["replay"]["actions"]
    assert rep["result"]["rewards"] == v["rewards"]
    assert rep["players"] == [s.players[i] for i in range(n)] and rep["players"][1] == "you"


def _apply(rep, msg: dict) -> dict:
    """The replay after a ``state`` message, as the page's ``applyDelta`` makes it."""
    msg = json.loads(json.dumps(msg))
    if "replay" in msg:
        assert "delta" not in msg
        return msg["replay"]
    d = msg["delta"]
    assert len(rep["actions"]) == d["actions_from"] and 0 <= d["deals_from"] < len(rep["deals"])
    rep["actions"][d["actions_from"]:] = d["actions"]
    rep["deals"][d["deals_from"]:] = d["deals"]
    rep["result"] = d["result"]
    return rep


def _redone(s: GameSession) -> dict:
    """``s``'s view with the player's copy of the replay redacted again from scratch."""
    ref = copy.copy(s)
    ref._red_piles, ref._red_deals, ref._red_actions = None, [], []
    return ref.view()


@pytest.mark.parametrize("seat", [1, None], ids=["seat1", "watch"])
@pytest.mark.parametrize("name", GAMES)
def test_deltas_add_up_to_the_whole_replay(name, seat):
    """Given the ``sync`` of the message before, a view carries only what changed: the one new
    action and the last deal or two, however long the game (a Da Niangniang match of many
    deals); applied in turn they give the whole replay, the same as redacting it again from
    scratch, and at the end the env's own replay.  The whole replay comes again only where
    earlier records change (what the player sees of the piles) and at the end."""
    opts = {"match": True, "target_score": 3} if name == "niangniang" else {}
    s = GameSession(name, opts, seat=seat, agents="rules", seed=5)
    rng = np.random.default_rng(2)
    rep, sync, wholes, turns = None, None, 0, []
    while True:
        m = s.view(sync)
        assert m["sync"][1] == s.turn
        if "delta" in m:
            assert m["delta"]["actions_from"] == turns[-1]
            assert len(m["delta"]["actions"]) == s.turn - turns[-1] == 1
            assert len(m["delta"]["deals"]) <= 2
        else:
            wholes += 1
        rep = _apply(rep, m)
        sync = m["sync"]
        turns.append(s.turn)
        assert rep == json.loads(json.dumps(_redone(s)["replay"])), s.turn
        if s.done:
            break
        if s.players_turn:
            s.act(m["legal"][rng.integers(len(m["legal"]))]["id"], m["turn"])
        else:
            s.agent_step()
    assert "replay" in m and m["done"]
    assert rep == json.loads(json.dumps(R.replay_of(s.env, players=s.players)))
    assert rep == R.loads(m["replay_json"])
    # the first message, the last, and one per change of what the player sees of the piles
    assert 2 <= wholes <= (2 if seat is None else 2 + 2 * len(rep["deals"])), wholes
    if name == "niangniang":
        assert len(rep["deals"]) > 1 and s.turn > 100


def test_forged_and_stale_ids_leave_the_game_unchanged():
    s = GameSession("wakeng", {}, seat=0, agents="rules", seed=4)
    rng = np.random.default_rng(0)
    while not s.players_turn:
        s.agent_step()
    u = s.env.unwrapped
    legal = set(u.legal_actions().tolist())
    illegal = next(a for a in range(u.game.n_actions) if a not in legal)
    before, hist = u.state_vec.copy(), list(u.history)
    cases = [(illegal, s.turn, "is not a legal move now"), (10**9, s.turn, "not a legal move"),
             (-1, s.turn, "not a legal move"), (min(legal), s.turn - 1, "stale"),
             (min(legal), s.turn + 1, "stale"), ("3", s.turn, "must be an integer"),
             (True, s.turn, "must be an integer"), (min(legal), None, "must be an integer")]
    for a, turn, msg in cases:
        with pytest.raises(ValueError, match=msg):
            s.act(a, turn)
        assert np.array_equal(u.state_vec, before) and list(u.history) == hist
    s.act(min(legal), s.turn)
    assert len(u.history) == len(hist) + 1
    _play_out(s, rng)
    with pytest.raises(ValueError, match="the game is over"):
        s.act(min(legal), s.turn)
    watch = GameSession("wakeng", {}, seat=None, agents="rules", seed=4)
    with pytest.raises(ValueError, match="watching"):
        watch.act(0, 0)


def test_bad_arguments_are_clear_errors():
    for kw, msg in [(dict(agents=["nope"]), "unknown agent 'nope'"),
                    (dict(agents=["search:bogus=1"]), "unknown keyword 'bogus'"),
                    (dict(agents=["trained:/no/such.npz"]), "no weight file"),
                    (dict(agents=[""]), "non-empty string"),
                    (dict(agents=3), "agents must be"),
                    (dict(seat=3), "seat must be 0..2"),
                    (dict(seed=-1), "seed must be"),
                    (dict(options={"bombs": "yes"}), "bombs"),
                    (dict(options=[1]), "options must be")]:
        with pytest.raises((ValueError, TypeError), match=msg):
            GameSession("wakeng", **{"options": {}, **kw})
    with pytest.raises(ValueError, match="unknown game"):
        GameSession("chess")


# -- the server ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(delay=0)) as c:
        yield c


def _until(ws, pred, limit: int = 2000):
    """Messages until one satisfies ``pred``; errors fail the test."""
    for _ in range(limit):
        m = ws.receive_json()
        assert m["type"] != "error", m
        if pred(m):
            return m
    raise AssertionError("no such message")


def _players_turn_or_end(m):
    return m["type"] == "state" and (m["done"] or m["to_move"] == m["seat"])


def test_the_page_and_its_files_only(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for src in ("/static/table.js", "/static/app.js", "/static/table.css", "/static/app.css"):
        assert src in page.text
        assert client.get(src).status_code == 200
    for path in ("/static/../server.py", "/static/../session.py", "/server.py", "/favicon.ico",
                 "/static/missing.js"):
        assert client.get(path).status_code == 404, path
    # offline: nothing is loaded from elsewhere
    for f in STATIC.iterdir():
        text = f.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, f
    info = client.get("/api/games").json()
    assert list(info["games"]) == GAMES and "rules" in info["agents"] and "search" in info["agents"]
    assert info["games"]["niangniang"]["options"]["match"] is False


def test_a_finished_game_and_forged_ids_over_the_websocket(client):
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "start", "game": "paodekuai", "seat": 2,
                      "agents": ["rules", "random"], "seed": 9})
        forged = 0
        while True:
            m = _until(ws, _players_turn_or_end)
            if m["done"]:
                break
            ids = [x["id"] for x in m["legal"]]
            for bad in ({"id": max(ids) + 1 if max(ids) + 1 not in ids else -5, "turn": m["turn"]},
                        {"id": ids[0], "turn": m["turn"] - 1}, {"id": "x", "turn": m["turn"]}):
                ws.send_json({"type": "act", **bad})
                err = ws.receive_json()
                assert err["type"] == "error" and err["message"], err
                forged += 1
            ws.send_json({"type": "act", "id": ids[-1], "turn": m["turn"]})
        assert forged >= 3
        rep = R.loads(m["replay_json"])
        assert rep["players"] == ["rules", "random", "you"] and rep["seed"] == 9
        assert m["rewards"] == rep["result"]["rewards"] and sum(m["rewards"]) == 0
        ws.send_json({"type": "act", "id": 0, "turn": m["turn"]})
        assert ws.receive_json() == {"type": "error",
                                     "message": "the game is over: start a new one"}
        ws.send_json({"type": "bogus"})
        assert "unknown message type" in ws.receive_json()["message"]
        ws.send_text("not json")
        assert ws.receive_json()["message"] == "not a JSON message"


def test_state_messages_carry_deltas_and_sync_resends_the_table(client):
    """Over the websocket the first state of a game carries the whole replay, the next ones a
    delta (applied in turn: the replay the final message carries, cut at that point); a
    ``sync`` message gets the whole table again, and deltas go on from it."""
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "start", "game": "doudizhu", "seat": None, "agents": "rules",
                      "seed": 8, "delay": 0})
        rep, kinds, synced = None, [], False
        while True:
            m = _until(ws, lambda m: m["type"] == "state")
            kinds.append("replay" if "replay" in m else "delta")
            rep = _apply(rep, m)
            assert len(rep["actions"]) == m["turn"]
            if m["done"]:
                break
            if not synced and m["turn"] >= 5:
                ws.send_json({"type": "pause"})
                ws.send_json({"type": "sync"})
                m = _until(ws, lambda m: m["type"] == "state" and "replay" in m)
                assert m["replay"] == rep | {"actions": m["replay"]["actions"],
                                             "deals": m["replay"]["deals"],
                                             "result": m["replay"]["result"]}
                assert m["replay"]["actions"][:len(rep["actions"])] == rep["actions"]
                rep = _apply(rep, m)
                synced = True
                if m["done"]:  # the deal ended before the pause: that was its last message
                    kinds.append("replay")
                    break
                ws.send_json({"type": "resume"})
        assert synced and kinds[0] == "replay" and kinds[-1] == "replay"
        assert kinds.count("delta") >= len(kinds) - 2
        assert rep == R.loads(m["replay_json"])


def test_two_sessions_in_parallel_keep_their_own_games(client):
    """Two connections play interleaved: each its own game, each replay verifies and is the
    game its session played (the same seed and actions as a fresh env stepped alike)."""
    with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
        a.send_json({"type": "start", "game": "wakeng", "seat": 0, "agents": "rules", "seed": 1})
        b.send_json({"type": "start", "game": "wakeng", "seat": 0, "agents": "rules", "seed": 2})
        pending = {"a": a, "b": b}
        last = {}
        while pending:
            for k, ws in list(pending.items()):
                m = _until(ws, _players_turn_or_end)
                last[k] = m
                if m["done"]:
                    del pending[k]
                else:
                    ws.send_json({"type": "act", "id": m["legal"][0]["id"], "turn": m["turn"]})
        ra, rb = R.loads(last["a"]["replay_json"]), R.loads(last["b"]["replay_json"])
        assert (ra["seed"], rb["seed"]) == (1, 2)
        assert ra["deals"][0]["hands"] != rb["deals"][0]["hands"]


def test_a_bad_agent_spec_is_an_error_and_the_server_keeps_running(client):
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "start", "game": "doudizhu", "seat": 0,
                      "agents": ["rules", "nope:x=1"]})
        m = ws.receive_json()
        assert m["type"] == "error" and "cannot start the game" in m["message"] \
            and "nope" in m["message"]
        ws.send_json({"type": "start", "game": "doudizhu", "options": {"auction": "nope"}})
        assert "auction" in ws.receive_json()["message"]
        ws.send_json({"type": "start", "game": "doudizhu", "delay": -1})
        assert "delay" in ws.receive_json()["message"]
        ws.send_json({"type": "act", "id": 1, "turn": 0})
        assert "no game yet" in ws.receive_json()["message"]
        # the same connection, and a new one, still play
        ws.send_json({"type": "start", "game": "doudizhu", "seat": None, "agents": "rules",
                      "seed": 3})
        m = _until(ws, lambda m: m["done"])
        assert R.loads(m["replay_json"])["players"] == ["rules"] * 3
    assert client.get("/api/games").status_code == 200


def test_watch_mode_speed_and_pause(client):
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "start", "game": "wakeng", "seat": None, "agents": ["rules", "random",
                                                                                  "rules"],
                      "seed": 6, "delay": 0.05})
        first = _until(ws, lambda m: m["type"] == "state")
        # everything is shown when watching
        assert first["replay"]["seed"] == 6 and len(first["hands"]) == 3
        ws.send_json({"type": "pause"})
        t = time.monotonic()
        ws.send_json({"type": "speed", "delay": 0})
        ws.send_json({"type": "resume"})
        m = _until(ws, lambda m: m["done"])
        assert m["legal"] == [] and time.monotonic() - t < 60
        assert R.loads(m["replay_json"])["players"] == ["rules", "random", "rules"]
        ws.send_json({"type": "speed", "delay": "fast"})
        assert "delay must be" in ws.receive_json()["message"]


def test_the_app_runs_numpy_blas_on_one_thread():
    """While the app runs (its lifespan), numpy's BLAS uses one thread in the threads that run
    the sessions: they are the parallelism; afterwards the setting is restored."""
    from threadpoolctl import threadpool_info

    def blas_threads():  # as a new thread (a session's worker thread) sees them
        out: list = []
        t = threading.Thread(target=lambda: out.extend(
            x["num_threads"] for x in threadpool_info() if x["user_api"] == "blas"))
        t.start()
        t.join()
        return out

    before = blas_threads()
    if not before:
        pytest.skip("numpy has no BLAS threadpoolctl can see")
    with TestClient(create_app(delay=0)):
        assert set(blas_threads()) == {1}
    assert blas_threads() == before


def test_sessions_share_the_loaded_weights(tmp_path):
    """The ``trained`` agents of every session play one loaded network per weight file (read
    and checked once); a file written again is read again."""
    import importlib
    import os
    import shutil

    from cardenvs.arena import import_agents

    trained = importlib.import_module(import_agents().__name__ + ".trained")
    a = GameSession("wakeng", {}, seat=0, agents="trained", seed=1)
    b = GameSession("wakeng", {}, seat=None, agents="trained", seed=2)
    nets = {id(bot.net) for _, (_, bot) in [*a.bots.items(), *b.bots.items()]}
    assert len(nets) == 1
    path = tmp_path / "w.npz"
    shutil.copy(trained.default_weights_path("wakeng"), path)
    first = trained.shared_network(str(path))
    assert trained.shared_network(str(path)) is first
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = trained.shared_network(str(path))
    assert again is not first and np.array_equal(again.w_obs, first.w_obs)
    with pytest.raises(ValueError, match="no weight file"):
        trained.shared_network(str(tmp_path / "missing.npz"))
    with pytest.raises(TypeError, match="weights path"):
        trained.shared_network(3)


def test_serve_command_listens_on_localhost():
    import cardenvs.web.server as server
    from cardenvs import cli

    seen = {}
    orig = server.serve
    server.serve = lambda host, port, **kw: seen.update(host=host, port=port)
    try:
        assert cli.main(["serve"]) == 0
        assert seen == {"host": "127.0.0.1", "port": 8000}
        assert cli.main(["serve", "--host", "0.0.0.0", "--port", "8123"]) == 0
        assert seen == {"host": "0.0.0.0", "port": 8123}
    finally:
        server.serve = orig
    with pytest.raises(SystemExit):
        cli.main(["serve", "--port", "x"])


# -- a real server and a real browser -----------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """uvicorn serving the app on 127.0.0.1 in a thread (stopped by :meth:`close`)."""

    def __init__(self, delay: float = 0.0):
        import uvicorn

        self.port = free_port()
        config = uvicorn.Config(create_app(delay), host="127.0.0.1", port=self.port,
                                log_level="warning", ws="websockets-sansio")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.05)
        assert self.server.started, "uvicorn did not start"
        self.url = f"http://127.0.0.1:{self.port}/"

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def test_real_server_plays_over_websockets():
    """uvicorn with the websockets library: a client on 127.0.0.1 watches a deal."""
    from websockets.sync.client import connect

    srv = Server()
    try:
        with connect(f"ws://127.0.0.1:{srv.port}/ws") as ws:
            ws.send(json.dumps({"type": "start", "game": "niangniang", "seat": None,
                                "agents": "rules", "seed": 2, "delay": 0}))
            while True:
                m = json.loads(ws.recv(timeout=60))
                assert m["type"] == "state", m
                if m["done"]:
                    break
        assert R.loads(m["replay_json"])["result"]["done"]
    finally:
        srv.close()


try:
    from test_replay_html import CHROMIUM, Browser
except ImportError:  # pragma: no cover
    CHROMIUM, Browser = None, None

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install -y chromium)")


class Page:
    """The app in a browser: clicks with real mouse events at the elements' centres."""

    def __init__(self, browser, url: str):
        self.b = browser
        self.b.open(url)
        assert self.b.wait_for("document.querySelectorAll('#game option').length", len(GAMES),
                               tries=1200)

    def eval(self, expr: str):
        return self.b.eval(expr)

    def click(self, selector: str) -> None:
        at = self.eval(CENTRE_JS % json.dumps(selector))
        assert at is not None, f"nothing to click at {selector}"
        for typ in ("mousePressed", "mouseReleased"):
            self.b.send("Input.dispatchMouseEvent", self.b.session, type=typ, x=at[0], y=at[1],
                        button="left", clickCount=1)

    def setup(self, game: str, seat, agents: str, seed: int, delay: float, options=None) -> None:
        """Fill the form (as a person would choose) and press "new game"."""
        self.eval(SETUP_JS % json.dumps({
            "game": game, "seat": "watch" if seat is None else str(seat), "agents": agents,
            "seed": str(seed), "delay": str(delay), "options": options or {}}))
        self.click("#start")

    def state(self) -> dict:
        return self.eval(STATE_JS)


#: the centre of an enabled element, scrolled into view (null when there is none)
CENTRE_JS = """(() => { const e = document.querySelector(%s);
  if (!e || e.disabled) return null;
  e.scrollIntoView({block: 'center'});
  const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"""
#: fill the setup form from a config object
SETUP_JS = """((c) => { const $ = (id) => document.getElementById(id);
  $('game').value = c.game; $('game').dispatchEvent(new Event('change'));
  $('seat').value = c.seat; $('seat').dispatchEvent(new Event('change'));
  for (const i of document.querySelectorAll('#agents input')) i.value = c.agents;
  $('seed').value = c.seed; $('delay').value = c.delay;
  for (const [k, v] of Object.entries(c.options)) {
    const i = $('opt-' + k); if (i.type === 'checkbox') i.checked = v; else i.value = String(v); }
  return true; })(%s)"""
#: what the tests read of the app's state
STATE_JS = """JSON.stringify(App.state ? {turn: App.state.turn, to_move: App.state.to_move,
  seat: App.state.seat, done: App.state.done, legal: App.state.legal, game: App.state.game,
  hand: App.state.seat === null ? '' : App.state.hands[String(App.state.seat)],
  n_actions: App.state.replay.actions.length, n_log: document.querySelectorAll('#log li').length,
  rewards: App.state.rewards || null} : null)"""


def _wait_state(page: Page, pred, timeout: float = 120):
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        raw = page.state()
        st = json.loads(raw) if raw else None
        err = page.eval("document.getElementById('error').textContent")
        assert not err, err
        if st is not None and pred(st):
            return st
        time.sleep(0.03)
    raise AssertionError("the page did not get there")


def play_by_clicking(page: Page, game: str, seed: int, rng, options=None) -> dict:
    """A whole game of ``game`` at seat 0 against ``rules``, each move by clicking: the cards
    of a card play in the hand and then the play button, other moves by their buttons."""
    page.setup(game, 0, "rules", seed, 0, options)
    _wait_state(page, lambda s: s["game"] == game)
    moves = 0
    while True:
        st = _wait_state(page, lambda s: s["done"] or (s["to_move"] == s["seat"]
                                                      and not page.eval("App.waiting")))
        # the replay the page built from the messages' deltas holds every action so far
        assert st["n_actions"] == st["turn"] and st["n_log"] <= st["turn"]
        if st["done"]:
            return st
        m = st["legal"][rng.integers(len(st["legal"]))]
        if "cards" in m:
            want = Counter(m["cards"])
            i = 0
            while sum(want.values()):
                ch = page.eval(f"document.querySelector('#myhand .hcard[data-i=\"{i}\"]')"
                               f".dataset.card")
                if want[ch] > 0:
                    page.click(f'#myhand .hcard[data-i="{i}"]')
                    want[ch] -= 1
                i += 1
            page.click(f'#moves button.play[data-id="{m["id"]}"]')
        else:
            page.click(f'#buttons button[data-id="{m["id"]}"]')
        moves += 1
        _wait_state(page, lambda s: s["turn"] > st["turn"] or s["done"])


@pytest.fixture(scope="module")
def site():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    srv = Server(delay=0)
    b = Browser(width=1280, height=900)
    yield srv, b
    b.close()
    srv.close()


@needs_chromium
@pytest.mark.parametrize("name", GAMES)
def test_a_whole_deal_by_clicking_against_rules(site, name):
    srv, b = site
    page = Page(b, srv.url)
    opts = {"match": True, "target_score": 2} if name == "niangniang" else None
    st = play_by_clicking(page, name, 7, np.random.default_rng(len(name)), opts)
    rep = R.loads(page.eval("App.state.replay_json"))
    assert rep["game"] == name and rep["players"][0] == "you" and rep["result"]["done"]
    assert st["rewards"] == rep["result"]["rewards"]
    if name == "niangniang":
        assert rep["options"]["match"] is True
    # the page shows the result, every hand and a download of the replay
    text = page.eval("document.getElementById('result').textContent")
    assert "final rewards: " in text
    assert page.eval("document.getElementById('replay-download').download") == \
        f"cardenvs-{name}-seed7.json"
    hands = page.eval("[...document.querySelectorAll('.seat .hand')].map(e => e.textContent)")
    u = R.reproduce(rep).unwrapped
    g = u.game
    assert hands == [g.deck.format(u.state_vec[hand_off(i):hand_off(i) + 16])
                     for i in range(g.n_players)]


@needs_chromium
def test_a_card_selection_shows_only_matching_plays(site):
    """Selecting cards lists the legal plays that hold them; a selection no legal play matches
    exactly offers no play button (it cannot be sent)."""
    srv, b = site
    page = Page(b, srv.url)
    page.setup("paodekuai", 0, "rules", 3, 0)
    st = _wait_state(page, lambda s: s["to_move"] == s["seat"] and not s["done"])
    plays = [m for m in st["legal"] if "cards" in m]
    page.click('#myhand .hcard[data-i="0"]')
    ch = st["hand"][0]
    buttons = json.loads(page.eval("JSON.stringify([...document.querySelectorAll("
                                   "'#moves button.play')].map(b => +b.dataset.id))"))
    assert sorted(buttons) == sorted(m["id"] for m in plays if m["cards"] == ch)
    chips = json.loads(page.eval("JSON.stringify([...document.querySelectorAll("
                                 "'#moves button.chip')].map(b => b.dataset.cards))"))
    assert all(ch in c and c != ch for c in chips)
    # every card selected: no legal play uses the whole hand at the first lead
    for i in range(1, len(st["hand"])):
        page.click(f'#myhand .hcard[data-i="{i}"]')
    if not any(m["cards"] == st["hand"] for m in plays):
        assert page.eval("document.querySelectorAll('#moves button.play').length") == 0
    page.click("#clear")
    assert page.eval("document.querySelectorAll('#myhand .hcard.sel').length") == 0


@needs_chromium
def test_a_watch_mode_deal(site):
    srv, b = site
    page = Page(b, srv.url)
    page.setup("doudizhu", None, "rules", 5, 0.02)
    st = _wait_state(page, lambda s: s["done"] and s["game"] == "doudizhu")
    assert st["seat"] is None
    rep = R.loads(page.eval("App.state.replay_json"))
    assert rep["players"] == ["rules"] * 3
    n_log = page.eval("document.querySelectorAll('#log li').length")
    deal = rep["deals"][-1]
    assert n_log == len(rep["actions"]) - deal["start"]
    assert page.eval("document.getElementById('play').hidden") is True
    assert "game over" in page.eval("document.getElementById('status').textContent")


@needs_chromium
def test_a_bad_agent_spec_shows_on_the_page(site):
    srv, b = site
    page = Page(b, srv.url)
    page.setup("wakeng", 0, "nope", 1, 0)
    assert b.wait_for("document.getElementById('error').textContent"
                      ".includes(\"unknown agent 'nope'\")",
                      True)
    page.setup("wakeng", 0, "rules", 1, 0)
    _wait_state(page, lambda s: s["game"] == "wakeng")


def screenshot(path: str) -> None:
    """A screenshot of the page mid-game (Da Niangniang at seat 0, some cards selected)."""
    srv = Server(delay=0)
    b = Browser(width=1280, height=860)
    try:
        page = Page(b, srv.url)
        page.setup("niangniang", 0, "rules", 4, 0)
        rng = np.random.default_rng(0)
        for _ in range(6):
            st = _wait_state(page, lambda s: s["done"] or (s["to_move"] == s["seat"]
                                                          and not page.eval("App.waiting")))
            plays = [m for m in st["legal"] if "cards" in m]
            if not plays:
                page.click(f'#buttons button[data-id="{st["legal"][0]["id"]}"]')
            else:
                m = plays[rng.integers(len(plays))]
                page.eval(f"App.choose({json.dumps(m['cards'])})")
                page.click(f'#moves button.play[data-id="{m["id"]}"]')
            _wait_state(page, lambda s: s["turn"] > st["turn"] or s["done"])
        st = _wait_state(page, lambda s: s["to_move"] == s["seat"] and not s["done"])
        page.click('#myhand .hcard[data-i="0"]')
        Path(path).write_bytes(b.screenshot())
    finally:
        b.close()
        srv.close()


if __name__ == "__main__":
    screenshot(sys.argv[1] if len(sys.argv) > 1 else "web.png")


def test_a_sync_during_a_view_in_preparation_is_answered_with_the_whole_table():
    """The race behind a once-hanging test: a ``sync`` arrives while an agent move's view is
    being prepared (a delta to the last message).  The answer to the sync must carry the whole
    replay, not a delta to the message sent just before it."""
    import asyncio

    from cardenvs.web.server import Connection

    class FakeSocket:
        def __init__(self):
            self.sent: list[dict] = []

        async def send_text(self, text: str) -> None:
            self.sent.append(json.loads(text))

    session = GameSession("wakeng", {}, seat=None, agents="rules", seed=3)
    preparing, release = threading.Event(), threading.Event()
    view = session.view

    def slow_view(since=None):
        if since is not None and not release.is_set():
            preparing.set()
            release.wait(10)
        return view(since)

    session.view = slow_view  # type: ignore[method-assign]

    async def scenario() -> list[dict]:
        sock = FakeSocket()
        conn = Connection(sock, delay=0.0)  # type: ignore[arg-type]
        conn.session = session
        await conn.send_view(session)  # the first message: the whole table
        session.agent_step()
        move = asyncio.create_task(conn.send_view(session))  # a delta, held in preparation
        await asyncio.get_running_loop().run_in_executor(None, preparing.wait, 10)
        sync = asyncio.create_task(conn.handle({"type": "sync"}))
        await asyncio.sleep(0.05)  # the sync is waiting for the lock
        release.set()
        await asyncio.wait_for(asyncio.gather(move, sync), 20)
        return sock.sent

    sent = asyncio.run(scenario())
    assert ["replay" in m for m in sent] == [True, False, True]
    assert sent[2]["turn"] == sent[1]["turn"] == 1
