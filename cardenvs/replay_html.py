"""A self-contained HTML viewer for replays (``cardenvs replay FILE.json --html OUT.html``).

The page holds the replay as JSON and a small script: no network, no fonts or scripts from
elsewhere, so it opens offline.  It shows every seat's hand, role and score, the plays of the
current trick and who passed, the piles (kitty / bottom / unused), the public state (phase,
bid, doublings, stake, declarations, places) and the action log; it steps with the buttons or
the arrow keys (Home / End jump, ``h`` hides the hands but one seat's).  The URL fragment
``#step=K&hide=1&view=S`` opens it at step K (after K actions) with only seat S's hand shown.

Element ids the tests read: ``#step`` ("step K / N"), ``#seat-I .hand`` (the cards, in the
replay's notation), ``#seat-I .last`` (the seat's play or ``pass`` in the current trick),
``#seat-I .score``, ``#trick``, ``#log``, ``#result``.

The drawing code is the web app's (``cardenvs/web/static/table.js`` and ``table.css``,
inlined here): the viewer and ``cardenvs serve`` draw the table alike.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Optional, Union

from .replay import load, write_atomic
from .web import shared_asset

# The table's drawing (cards, seats, trick, piles, public state, log, result) and its look are
# the web app's static files, shared: one drawing code for the viewer and `cardenvs serve`.
_CSS = "\n" + shared_asset("table.css")

#: the viewer's script: the shared table drawing (``CardTable``), then the viewer's controls
_JS = shared_asset("table.js") + r"""
const R = JSON.parse(document.getElementById("replay-data").textContent);
const N = R.n_players, A = R.actions;
const frames = CardTable.buildFrames(R);
const el = CardTable.el;
let cur = 0, hide = false, view = 0;
function render(){
  document.getElementById("step").textContent = "step " + cur + " / " + A.length;
  CardTable.render(R, frames, cur, {hide, view});
  document.getElementById("hidebtn").textContent = hide ? "show hands (h)" : "hide hands (h)";
  // the URL follows the view a moment after the last change: browsers drop history updates
  // made faster than a few a second (Chromium: 200 per 10 s), e.g. while an arrow key is held
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    const hash = "#step=" + cur + (hide ? "&hide=1&view=" + view : "");
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }, 150);
}
let hashTimer = 0;
function go(k){ cur = Math.max(0, Math.min(A.length, k)); render(); }
function readHash(){
  const p = new URLSearchParams(location.hash.replace(/^#/, ""));
  const s = parseInt(p.get("step") || "0", 10); cur = isNaN(s) ? 0 : Math.max(0, Math.min(A.length, s));
  hide = p.get("hide") === "1"; const v = parseInt(p.get("view") || "0", 10); view = isNaN(v) ? 0 : v;
  document.getElementById("viewsel").value = String(view);
}
document.getElementById("first").onclick = () => go(0);
document.getElementById("prev").onclick = () => go(cur - 1);
document.getElementById("next").onclick = () => go(cur + 1);
document.getElementById("last").onclick = () => go(A.length);
document.getElementById("hidebtn").onclick = () => { hide = !hide; render(); };
const vs = document.getElementById("viewsel");
for (let i = 0; i < N; i++) { const o = el("option", "", "hands seen by player_" + i); o.value = String(i); vs.appendChild(o); }
vs.onchange = () => { view = parseInt(vs.value, 10); hide = true; render(); };
document.addEventListener("keydown", (e) => {
  if (e.key === "ArrowRight") { go(cur + 1); e.preventDefault(); }
  else if (e.key === "ArrowLeft") { go(cur - 1); e.preventDefault(); }
  else if (e.key === "Home") { go(0); e.preventDefault(); }
  else if (e.key === "End") { go(A.length); e.preventDefault(); }
  else if (e.key === "h") { hide = !hide; render(); }
});
window.addEventListener("hashchange", () => { readHash(); render(); });
readHash(); render();
"""


def _subtitle(rep: dict) -> str:
    opts = ", ".join(f"{k}={v}" for k, v in rep["options"].items()
                     if k not in ("illegal", "illegal_reward")) or "default options"
    seed = rep["seed"] if rep["seed"] is not None else "(generator state)"
    players = ""
    if rep.get("players"):
        players = " · " + ", ".join(f"player_{i}: {p}" for i, p in enumerate(rep["players"]))
    return (f"{rep['game']} · {opts} · seed {seed} · {len(rep['deals'])} deal(s), "
            f"{len(rep['actions'])} actions{players}")


#: characters of JSON text written as ``\\u`` escapes inside the page's ``<script>`` data
#: block: ``<`` and ``>`` (no ``</script>``, ``<!--`` or ``<script`` can end the block early or
#: put the HTML tokenizer in a script-data escape state), ``&``, and U+2028 / U+2029 (line
#: ends to older JavaScript parsers)
_SCRIPT_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}


def script_json(value) -> str:
    """``value`` as JSON text safe inside an HTML ``<script>`` element: the characters of
    :data:`_SCRIPT_ESCAPES` (which JSON allows only inside strings) become ``\\u`` escapes,
    so the text parses back to the same value and no string in it can close or disturb the
    element."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).translate(_SCRIPT_ESCAPES)


def render_html(rep: dict) -> str:
    """The viewer page of a (verified) replay as one HTML string; every string of the replay
    (player names, the title, options) is escaped for where it lands (:func:`script_json`
    in the data block, ``html.escape`` in the text)."""
    data = script_json(rep)
    title = html.escape(f"{rep['title']} replay")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{_CSS}</style></head>
<body>
<header><h1>{title}</h1><div class="sub">{html.escape(_subtitle(rep))}</div></header>
<div id="controls">
<button id="first" title="first (Home)">|&#x25C0;</button>
<button id="prev" title="back (&#x2190;)">&#x25C0; back</button>
<span id="step"></span>
<button id="next" title="forward (&#x2192;)">forward &#x25B6;</button>
<button id="last" title="last (End)">&#x25B6;|</button>
<button id="hidebtn"></button>
<select id="viewsel"></select>
<span style="font-size:12px;color:#555">arrow keys step · h hides the hands</span>
</div>
<div id="main">
<div id="table"><div id="center"><div><b>trick</b></div><div id="trick"></div>
<div style="margin-top:8px" id="piles"></div></div></div>
<div id="side"><table id="public"></table><ol id="log"></ol><div id="result"></div></div>
</div>
<script type="application/json" id="replay-data">{data}</script>
<script>{_JS}</script>
</body></html>
"""


def write_html(rep: dict, path: Union[str, Path]) -> Path:
    """Write the viewer page atomically (temporary file and ``os.replace``)."""
    return write_atomic(path, render_html(rep))


def summary(rep: dict) -> str:
    """A replay as text: each deal's hands, the actions, the result."""
    lines = [f"{rep['title']}: {_subtitle(rep)}"]
    acts = rep["actions"]
    for j, d in enumerate(rep["deals"]):
        lines.append(f"deal {j + 1}:")
        for i, h in enumerate(d["hands"]):
            lines.append(f"  player_{i}: {h}")
        for k, v in d["piles"].items():
            lines.append(f"  {k}: {v}")
        end = d.get("end", len(acts))
        for k in range(d["start"], end):
            a = acts[k]
            extra = f" ({a['play']})" if "play" in a and a["play"] != a["action"] else ""
            lines.append(f"  {k + 1:4d}. player_{a['seat']}: {a['action']}{extra}")
        if "result" in d:
            r = d["result"]
            lines.append(f"  scores {' '.join(f'{x:+}' for x in r['scores'])}"
                         + (f"; places {' '.join(map(str, r['places']))}" if "places" in r else ""))
    res = rep["result"]
    lines.append(f"result: {'done' if res['done'] else 'not finished'}; rewards "
                 f"{' '.join(f'{x:+}' for x in res['rewards'])}")
    return "\n".join(lines)


def _check_out(html_out) -> None:
    """Refuse an output path that cannot be the page's file (empty, a folder) before anything
    is read or written."""
    if not isinstance(html_out, (str, Path)) or not str(html_out):
        raise ValueError(f"--html needs the path of the page to write, got {html_out!r}")
    out = Path(html_out)
    if out.is_dir():
        raise ValueError(f"{out}: is a folder; give the path of the HTML file to write, e.g. "
                         f"{out / 'replay.html'}")


def main_replay(path: str, html_out: Optional[str] = None, stream=None) -> dict:
    """What ``cardenvs replay FILE [--html OUT]`` does: verify the file (a ``ValueError``
    naming the line and why, and nothing written, when it is bad), then print it or write
    the viewer."""
    stream = sys.stdout if stream is None else stream
    if html_out is not None:
        _check_out(html_out)
    rep = load(path)
    if html_out:
        try:
            out = write_html(rep, html_out)
        except OSError as e:
            raise ValueError(f"{html_out}: cannot write the page ({e.strerror or e})") from None
        print(f"wrote {out} ({len(rep['actions'])} actions; open it in a browser, offline)",
              file=stream)
    else:
        print(summary(rep), file=stream)
    return rep
