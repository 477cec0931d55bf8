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
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Optional, Union

from .replay import load, write_atomic

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f3f1ea;color:#222}
header{padding:10px 16px;background:#23472f;color:#fff}
header h1{font-size:18px;margin:0}
header .sub{font-size:12px;opacity:.85;margin-top:3px}
#controls{padding:8px 16px;display:flex;gap:6px;align-items:center;flex-wrap:wrap;background:#e4e0d3}
#controls button{font-size:14px;padding:3px 10px;border:1px solid #777;border-radius:4px;background:#fff;cursor:pointer}
#step{font-weight:600;margin:0 8px;min-width:110px}
#main{display:flex;gap:12px;padding:12px 16px;align-items:flex-start}
#table{flex:1;display:grid;grid-template-columns:1fr 1.2fr 1fr;grid-template-rows:auto auto auto;gap:10px;
 background:#2f6b43;border-radius:14px;padding:14px;min-height:360px}
.seat{background:#fdfcf7;border-radius:8px;padding:7px 9px;border:3px solid transparent;min-height:70px}
.seat.tomove{border-color:#f2b705}
.seat .name{font-weight:600;font-size:13px}
.seat .role{font-size:12px;color:#a33;margin-left:6px}
.seat .score{float:right;font-size:13px;font-weight:600}
.seat .info{font-size:11px;color:#555;margin:2px 0}
.hand,.cards{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:15px;letter-spacing:1px;word-break:break-all}
.card{display:inline-block;padding:0 1px}
.card.j{color:#b00;font-weight:700}
.back{color:#777}
.last{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:14px;margin-top:3px;min-height:18px;color:#135}
.last.pass{color:#888;font-style:italic}
#center{grid-column:2;grid-row:2;background:#3d7f52;border-radius:8px;padding:8px;color:#fff;font-size:13px}
#center .cards{color:#fff}
#trick div{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:14px}
#side{width:330px;font-size:12px}
#public{background:#fff;border-radius:6px;padding:6px 8px;margin-bottom:8px}
#public td{padding:1px 6px 1px 0}
#log{background:#fff;border-radius:6px;padding:6px 8px;max-height:380px;overflow:auto;margin:0}
#log li{font-family:ui-monospace,Menlo,Consolas,monospace}
#log li.cur{background:#f2e39b}
#log li.future{color:#aaa}
#result{background:#fff3cd;border-radius:6px;padding:6px 8px;margin-top:8px;display:none}
#result.shown{display:block}
"""

_JS = r"""
"use strict";
const R = JSON.parse(document.getElementById("replay-data").textContent);
const N = R.n_players, RANKS = R.ranks, A = R.actions;
// [grid row, grid column] of each seat: seat 0 at the bottom, the next seat (下家) on its right
const POS = N === 3 ? [[3,2],[2,3],[2,1]] : [[3,2],[2,3],[1,2],[2,1]];
function zero(){ return new Array(RANKS.length).fill(0); }
function parse(s){ const c = zero(); for (const ch of s) { const i = RANKS.indexOf(ch); if (i >= 0) c[i]++; } return c; }
function fmt(c){ let s = ""; for (let i = 0; i < c.length; i++) s += RANKS[i].repeat(c[i]); return s; }
function dealZones(d){
  const z = {};
  for (let i = 0; i < N; i++) { z["hand " + i] = parse(d.hands[i]); z["played " + i] = zero(); }
  for (const k in d.piles) z[k] = parse(d.piles[k]);
  return z;
}
// frames[k]: the table after k actions
const frames = [];
(function build(){
  let deal = 0, zones = dealZones(R.deals[0]), pub = Object.assign({}, R.deals[0].state);
  let trick = [], last = new Array(N).fill(null), paid = new Array(N).fill(0), inPlay = false;
  const snap = (k) => frames.push({deal, zones: JSON.parse(JSON.stringify(zones)), pub: Object.assign({}, pub),
    trick: trick.slice(), last: last.slice(), paid: paid.slice(), k});
  snap(0);
  for (let k = 0; k < A.length; k++) {
    const a = A[k];
    if (a.lead) { trick = []; last = new Array(N).fill(null); inPlay = true; }
    for (const [src, dst, cards] of (a.moves || [])) {
      const c = parse(cards);
      for (let i = 0; i < c.length; i++) {
        if (src !== null) zones[src][i] -= c[i];
        if (dst !== null) zones[dst][i] += c[i];
      }
    }
    if (a.play !== undefined) { trick.push([a.seat, a.play]); last[a.seat] = a.play; }
    else if (a.action === "pass" && inPlay) { trick.push([a.seat, "pass"]); last[a.seat] = "pass"; }
    Object.assign(pub, a.state || {});
    const d = R.deals[deal];
    if (d.end === k + 1 && d.result) for (let i = 0; i < N; i++) paid[i] += d.result.scores[i];
    if (a.deal !== undefined) {
      deal = a.deal; zones = dealZones(R.deals[deal]); pub = Object.assign({}, R.deals[deal].state);
      trick = []; last = new Array(N).fill(null); inPlay = false;
    }
    snap(k + 1);
  }
})();
let cur = 0, hide = false, view = 0;
function el(tag, cls, text){ const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
function cardsEl(s, cls){
  const e = el("span", cls || "cards");
  for (const ch of s) e.appendChild(el("span", "card" + ("BR".includes(ch) ? " j" : ""), ch));
  return e;
}
function roleOf(pub, i){
  if (!R.roles || pub.role_seat === undefined || pub.role_seat < 0) return "";
  return pub.role_seat === i ? R.roles[0] : R.roles[1];
}
function sign(x){ return (x > 0 ? "+" : "") + x; }
function seatName(i){ return "player_" + i + (R.players ? " (" + R.players[i] + ")" : ""); }
function render(){
  const f = frames[cur], pub = f.pub;
  document.getElementById("step").textContent = "step " + cur + " / " + A.length;
  const tbl = document.getElementById("table");
  for (let i = 0; i < N; i++) {
    let box = document.getElementById("seat-" + i);
    if (!box) { box = el("div", "seat"); box.id = "seat-" + i; box.style.gridRow = POS[i][0]; box.style.gridColumn = POS[i][1]; tbl.appendChild(box); }
    box.className = "seat" + (pub.to_move === i ? " tomove" : "");
    box.textContent = "";
    const head = el("div"); head.appendChild(el("span", "name", seatName(i)));
    head.appendChild(el("span", "role", roleOf(pub, i)));
    const final = cur === A.length && R.result.done;
    const sc = final ? R.result.rewards[i] : f.paid[i];
    head.appendChild(el("span", "score", (final || f.paid.some(x => x !== 0)) ? "score " + sign(sc) : ""));
    box.appendChild(head);
    const hand = fmt(f.zones["hand " + i]);
    const tags = [hand.length + " cards"];
    if (pub.declared && pub.declared.includes(i)) tags.push("declared 报牌");
    if (pub.status && pub.status[i] !== "active") tags.push(pub.status[i]);
    if (pub.places && pub.places[i]) tags.push("place " + pub.places[i] + (pub.stuck && pub.stuck[i] ? " (stuck)" : ""));
    if (pub.totals) tags.push("total " + sign(pub.totals[i]));
    box.appendChild(el("div", "info", tags.join(" · ")));
    const shown = !hide || i === view || (pub.declared && pub.declared.includes(i));
    if (shown) box.appendChild(cardsEl(hand, "hand"));
    else box.appendChild(el("span", "hand back", "▮".repeat(Math.min(hand.length, 40))));
    const l = f.last[i];
    box.appendChild(el("div", "last" + (l === "pass" ? " pass" : ""), l === null ? "" : l));
  }
  const tr = document.getElementById("trick"); tr.textContent = "";
  for (const [s, p] of f.trick) tr.appendChild(el("div", "", "player_" + s + ": " + p));
  const piles = document.getElementById("piles"); piles.textContent = "";
  for (const k in f.zones) if (!k.startsWith("hand ") && !k.startsWith("played ")) {
    const row = el("div", "", k + ": "); row.appendChild(cardsEl(fmt(f.zones[k]))); piles.appendChild(row);
  }
  const pt = document.getElementById("public"); pt.textContent = "";
  const rows = [["deal", (f.deal + 1) + " / " + R.deals.length]];
  for (const k in pub) {
    let v = pub[k];
    if (k === "to_move" || k === "head") v = v < 0 ? "-" : "player_" + v;
    else if (k === "role_seat") { if (!R.roles) continue; v = v < 0 ? "-" : "player_" + v; }
    else if (Array.isArray(v)) v = v.join(" ");
    rows.push([k === "role_seat" ? R.roles[0] : k, String(v)]);
  }
  for (const [k, v] of rows) { const r = el("tr"); r.appendChild(el("td", "", k)); r.appendChild(el("td", "", v)); pt.appendChild(r); }
  const log = document.getElementById("log"); log.textContent = "";
  const d = R.deals[f.deal], end = d.end === undefined ? A.length : d.end;
  for (let k = d.start; k < end; k++) {
    const a = A[k];
    const li = el("li", k === cur - 1 ? "cur" : (k >= cur ? "future" : ""),
      "player_" + a.seat + ": " + a.action + (a.play !== undefined && a.play !== a.action ? "  → " + a.play : ""));
    li.value = k + 1; log.appendChild(li);
    if (k === cur - 1) li.scrollIntoView({block: "nearest"});
  }
  const res = document.getElementById("result"); res.textContent = ""; res.className = "";
  const lines = [];
  for (let j = 0; j < R.deals.length; j++) {
    const dj = R.deals[j];
    if (dj.result && dj.end <= cur && (j === f.deal || j === f.deal - 1 || cur === A.length))
      lines.push("deal " + (j + 1) + ": scores " + dj.result.scores.map(sign).join(" ") +
        (dj.result.places ? " · places " + dj.result.places.join(" ") : ""));
  }
  if (cur === A.length && R.result.done) {
    lines.push("final rewards: " + R.result.rewards.map((x, i) => "player_" + i + " " + sign(x)).join(", ") +
      (R.result.places ? " · places " + R.result.places.join(" ") : "") +
      (R.result.illegal_move !== undefined ? " · player_" + R.result.illegal_move + " made an illegal move" : "") +
      (R.result.truncated ? " · match truncated" : ""));
  }
  if (lines.length) { res.className = "shown"; for (const t of lines) res.appendChild(el("div", "", t)); }
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
