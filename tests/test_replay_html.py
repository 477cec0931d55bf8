"""The replay viewer in a real browser: headless Chromium driven over the DevTools protocol.

Chromium is Debian's ``chromium`` package (``apt-get install -y chromium``; ``.ci/run``
installs it); without it these tests skip.  The protocol runs over a pipe
(``--remote-debugging-pipe``: NUL-separated JSON on file descriptors 3 and 4), so no Python
package beyond the standard library is needed.  Keys are sent with ``Input.dispatchKeyEvent``,
the page's text is read with ``Runtime.evaluate`` and checked against the env stepped in
Python.  Run as a script to write the screenshot in docs/:
``python tests/test_replay_html.py docs/replay.png``.
"""

from __future__ import annotations

import base64
import fcntl
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import cardenvs
from cardenvs import replay as R
from cardenvs.core.state import hand_off
from cardenvs.replay_html import write_html
from helpers import random_game

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install -y chromium; "
                             ".ci/run installs it when missing)")


class Browser:
    """Headless Chromium with one page, spoken to over ``--remote-debugging-pipe``."""

    def __init__(self, width: int = 1100, height: int = 700):
        self.profile = tempfile.mkdtemp(prefix="cardenvs-chromium-")
        to_child, from_us = os.pipe()
        to_us, from_child = os.pipe()
        # the child must find the pipe on fds 3 and 4: move ours out of the way first
        hi = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]
        os.close(to_child)
        os.close(from_child)

        def fds():
            os.dup2(hi[0], 3)
            os.dup2(hi[1], 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=fds, pass_fds=(3, 4))
        for fd in hi:
            os.close(fd)
        self.w = os.fdopen(from_us, "wb", buffering=0)
        self.r = os.fdopen(to_us, "rb", buffering=0)
        self.buf = b""
        self.n = 0
        self.events: list = []
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.enable", self.session)
        self.send("Emulation.setDeviceMetricsOverride", self.session, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def _read(self) -> dict:
        while b"\0" not in self.buf:
            chunk = self.r.read(1 << 16)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"chromium closed the DevTools pipe: {err}")
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def send(self, method: str, session=None, **params) -> dict:
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self.w.write(json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self.n:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str) -> dict:
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read()
            if m.get("method") == method:
                return m
            self.events.append(m)

    def open(self, url: str) -> None:
        """Load ``url`` afresh (through about:blank: a change of the fragment alone would be
        a same-document navigation without a load event)."""
        for u in ("about:blank", url):
            self.events.clear()
            self.send("Page.navigate", self.session, url=u)
            self.wait_event("Page.loadEventFired")

    def eval(self, expr: str):
        r = self.send("Runtime.evaluate", self.session, expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"page error: {r['exceptionDetails']}")
        return r["result"].get("value")

    def key(self, key: str, code: int) -> None:
        for typ in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", self.session, type=typ, key=key, code=key,
                      windowsVirtualKeyCode=code)

    def wait_for(self, expr: str, value, tries: int = 100) -> bool:
        """Whether ``expr`` evaluates to ``value`` within ``tries`` polls 50 ms apart (for
        what the page updates a moment after an event, such as the URL)."""
        for _ in range(tries):
            if self.eval(expr) == value:
                return True
            time.sleep(0.05)
        return False

    def screenshot(self) -> bytes:
        return base64.b64decode(self.send("Page.captureScreenshot", self.session,
                                          format="png")["data"])

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.w.close()
        self.r.close()
        shutil.rmtree(self.profile, ignore_errors=True)


RIGHT, LEFT, HOME, END = ("ArrowRight", 39), ("ArrowLeft", 37), ("Home", 36), ("End", 35)
READ = """JSON.stringify({
  step: document.getElementById('step').textContent,
  seats: [...document.querySelectorAll('.seat')].sort((a, b) => a.id.localeCompare(b.id)).map(s => ({
    hand: s.querySelector('.hand').textContent, last: s.querySelector('.last').textContent,
    score: s.querySelector('.score').textContent, role: s.querySelector('.role').textContent})),
  trick: [...document.querySelectorAll('#trick div')].map(d => d.textContent),
  result: document.getElementById('result').textContent})"""


def played_game(name: str, seed: int, **opts):
    env = importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env(**opts)
    env.reset(seed=seed)
    random_game(env, np.random.default_rng(seed))
    return env


def expected_frames(rep: dict):
    """Per step k (after k actions): every seat's hand from the env, and each seat's play or
    pass in the current trick from the replay's actions."""
    env = R.make_env(rep)
    u = env.unwrapped
    g = u.game
    n = g.n_players

    def hands():
        return [g.deck.format(u.state_vec[hand_off(i):hand_off(i) + 16]) for i in range(n)]

    frames = [(hands(), [""] * n)]
    last, in_play = [""] * n, False
    for a in rep["actions"]:
        env.step(a["id"])
        if a.get("lead"):
            last, in_play = [""] * n, True
        if "play" in a:
            last[a["seat"]] = a["play"]
        elif a["action"] == "pass" and in_play:
            last[a["seat"]] = "pass"
        if "deal" in a:
            last, in_play = [""] * n, False
        frames.append((hands(), list(last)))
    return frames


def _not_blank(png: bytes) -> None:
    from PIL import Image

    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int64)
    assert img.shape[0] > 300 and img.shape[1] > 600
    colours = np.unique(img.reshape(-1, 3) // 16, axis=0)
    assert len(colours) > 20, "the screenshot looks blank"
    assert img.std() > 20


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    b = Browser()
    yield b
    b.close()


@needs_chromium
@pytest.mark.parametrize("name,seed,opts", [("doudizhu", 5, {}),
                                            ("niangniang", 3, {"match": True, "target_score": 4}),
                                            ("wulong", 2, {})])
def test_viewer_steps_by_keyboard_and_shows_the_replay(browser, tmp_path, name, seed, opts):
    env = played_game(name, seed, **opts)
    rep = env.unwrapped.replay(players=[f"agent{i}" for i in range(env.unwrapped.game.n_players)])
    page = write_html(R.loads(R.dumps(rep)), tmp_path / "replay.html")
    frames = expected_frames(rep)
    n_act = len(rep["actions"])
    browser.open(page.resolve().as_uri())
    for k in range(n_act + 1):
        if k:
            browser.key(*RIGHT)
        dom = json.loads(browser.eval(READ))
        assert dom["step"] == f"step {k} / {n_act}"
        hands, last = frames[k]
        assert [s["hand"] for s in dom["seats"]] == hands, k
        assert [s["last"] for s in dom["seats"]] == last, k
        assert [t.split(": ", 1)[1] for t in dom["trick"]] == [x for x in _trick(rep, k)], k
    # the final scores: the env's rewards
    total = rep["result"]["rewards"]
    assert [s["score"] for s in dom["seats"]] == [f"score {x:+d}" if x else "score 0"
                                                  for x in total]
    assert "final rewards: " + ", ".join(f"player_{i} {x:+d}" if x else f"player_{i} 0"
                                         for i, x in enumerate(total)) in dom["result"]
    if rep["roles"]:
        solo = rep["deals"][-1]["state"]["role_seat"]
        for a in rep["actions"]:
            solo = a.get("state", {}).get("role_seat", solo)
        assert dom["seats"][solo]["role"] == rep["roles"][0]
    # back, home, end; hiding the hands keeps seat 0's
    for _ in range(3):
        browser.key(*LEFT)
    dom = json.loads(browser.eval(READ))
    assert dom["step"] == f"step {n_act - 3} / {n_act}"
    assert [s["hand"] for s in dom["seats"]] == frames[n_act - 3][0]
    browser.key(*HOME)
    browser.key("h", 72)
    dom = json.loads(browser.eval(READ))
    assert dom["step"] == f"step 0 / {n_act}"
    assert browser.wait_for("location.hash", "#step=0&hide=1&view=0")  # set just after a change
    assert dom["seats"][0]["hand"] == frames[0][0][0]
    assert all(set(s["hand"]) <= {"▮"} for s in dom["seats"][1:])
    browser.key("h", 72)
    browser.key(*END)
    assert json.loads(browser.eval(READ))["step"] == f"step {n_act} / {n_act}"
    # a step from the URL
    browser.open(page.resolve().as_uri() + "#step=4")
    dom = json.loads(browser.eval(READ))
    assert dom["step"] == f"step 4 / {n_act}" and [s["hand"] for s in dom["seats"]] == frames[4][0]
    _not_blank(browser.screenshot())


#: names an untrusted replay file (or the arena's agent specs) may hold: each would break out of
#: a <script> element, or put the HTML tokenizer into a state that swallows the next one
HOSTILE = ["<!--<script>", "</script><script>document.title='pwned'</script>",
           "search:prior=trained:</SCRIPT >x.npz,ms=5", "a&amp;b\u2028\u2029<>'\"",
           "<!-- -->--><script>"]


class _Page(HTMLParser):
    """The script elements (attributes, text) and the <title> of a page, as a conforming
    HTML parser splits them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scripts: list = []
        self.title = ""
        self._in = None

    def handle_starttag(self, tag, attrs):
        self._in = tag
        if tag == "script":
            self.scripts.append([dict(attrs), ""])

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1][1] += data
        elif self._in == "title":
            self.title += data


def _hostile_replay(name="wakeng", seed=4):
    env = played_game(name, seed)
    n = env.unwrapped.game.n_players
    rep = env.unwrapped.replay(players=[HOSTILE[i % len(HOSTILE)] + f" {i}" for i in range(n)],
                               meta={"agents": HOSTILE, HOSTILE[0]: HOSTILE[1]})
    return R.loads(R.dumps(rep))  # it is a valid replay: the names are data


def test_hostile_names_titles_and_specs_stay_data_in_the_page():
    """Names, agent specs and a title that would close or disturb the <script> element stay
    inside it as data: the data block holds no '<', '>' or '&' (nor U+2028 / U+2029), the
    parser sees exactly the two scripts of the viewer, the data parses back to the replay and
    the viewer's code is intact."""
    from cardenvs.replay_html import _JS, render_html, script_json

    rep = _hostile_replay()
    titled = dict(rep, title=HOSTILE[1])  # render_html of a dict that was never verified
    for r in (rep, titled):
        page = render_html(r)
        parsed = _Page()
        parsed.feed(page)
        parsed.close()
        assert [a.get("id") for a, _ in parsed.scripts] == ["replay-data", None]
        (attrs, data), (_, code) = parsed.scripts
        assert attrs["type"] == "application/json"
        assert json.loads(data) == r
        assert code == _JS
        assert not set(data) & set("<>&\u2028\u2029")
        assert parsed.title == f"{r['title']} replay"
    assert script_json({"x": "</script>\u2028"}) == '{"x": "\\u003c/script\\u003e\\u2028"}'


@needs_chromium
def test_viewer_runs_with_hostile_names_in_chromium(browser, tmp_path):
    """The page of a replay whose player names and meta hold markup runs in Chromium: the
    viewer steps, and each seat shows its name as text (no element, no swallowed script)."""
    rep = _hostile_replay()
    page = write_html(rep, tmp_path / "hostile.html")
    browser.open(page.resolve().as_uri())
    n_act = len(rep["actions"])
    assert browser.eval("document.getElementById('step').textContent") == f"step 0 / {n_act}"
    browser.key(*RIGHT)
    assert browser.eval("document.getElementById('step').textContent") == f"step 1 / {n_act}"
    names = browser.eval("JSON.stringify([...document.querySelectorAll('.seat .name')]"
                         ".map(e => e.textContent))")
    assert sorted(json.loads(names)) == sorted(f"player_{i} ({p})"
                                               for i, p in enumerate(rep["players"]))
    assert browser.eval("document.scripts.length") == 2
    assert browser.eval("document.title") == f"{rep['title']} replay"


def _trick(rep, k):
    """The plays and passes of the current trick after k actions (from the replay)."""
    trick, in_play = [], False
    for a in rep["actions"][:k]:
        if a.get("lead"):
            trick, in_play = [], True
        if "play" in a:
            trick.append(a["play"])
        elif a["action"] == "pass" and in_play:
            trick.append("pass")
        if "deal" in a:
            trick, in_play = [], False
    return trick


def write_screenshot(out: str) -> None:
    """The docs picture: a Lanxi Wulong deal between the rules agents, mid-game."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from cardenvs.arena import import_agents

    agents = import_agents()
    env = importlib.import_module("cardenvs.wulong_v0").env()
    g = env.unwrapped.game
    players = [agents.make_agent("rules", g, seed=i) for i in range(4)]
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(players[env.possible_agents.index(agent)].act(obs, env.unwrapped.legal_actions(), info))
    rep = env.unwrapped.replay(players=["rules"] * 4)
    with tempfile.TemporaryDirectory() as d:
        page = write_html(rep, Path(d) / "replay.html")
        b = Browser(width=1060, height=640)
        try:
            b.open(page.resolve().as_uri() + f"#step={len(rep['actions']) // 2}")
            png = b.screenshot()
        finally:
            b.close()
    Path(out).write_bytes(png)
    print(f"wrote {out} ({len(png):,} bytes)")


if __name__ == "__main__":
    write_screenshot(sys.argv[1] if len(sys.argv) > 1 else "docs/replay.png")
