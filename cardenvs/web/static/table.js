// The card table drawing shared by the replay viewer (cardenvs replay --html) and the web app
// (cardenvs serve): frames of a replay (the table after each action) and the seats, cards,
// trick, piles, public state, log and result of one frame.  The replay viewer inlines this
// file; the app loads it as /static/table.js.  A "?" in a card string is a card the viewer
// cannot see (the app's replays hide the other seats' hands): drawn as a card back.
"use strict";
const CardTable = (() => {
  function el(tag, cls, text){ const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  // [grid row, grid column] of each seat: seat 0 at the bottom, the next seat (下家) on its right
  function positions(n){ return n === 3 ? [[3,2],[2,3],[2,1]] : [[3,2],[2,3],[1,2],[2,1]]; }
  function zero(R){ return new Array(R.ranks.length + 1).fill(0); }      // the last slot: "?"
  function parse(R, s){ const c = zero(R); for (const ch of s) { const i = ch === "?" ? R.ranks.length : R.ranks.indexOf(ch); if (i >= 0) c[i]++; } return c; }
  // the known cards of a zone and how many unknown ones: a hidden card that left the zone
  // shows as a negative count of its rank, taken from the unknown ones
  function split(R, c){
    let s = "", unknown = c[R.ranks.length];
    for (let i = 0; i < R.ranks.length; i++) { if (c[i] > 0) s += R.ranks[i].repeat(c[i]); else unknown += c[i]; }
    return [s, Math.max(0, unknown)];
  }
  function fmt(R, c){ return split(R, c)[0]; }
  function dealZones(R, d){
    const z = {};
    for (let i = 0; i < R.n_players; i++) { z["hand " + i] = parse(R, d.hands[i]); z["played " + i] = zero(R); }
    for (const k in d.piles) z[k] = parse(R, d.piles[k]);
    return z;
  }
  // frames[k]: the table after k actions
  function buildFrames(R){
    const N = R.n_players, A = R.actions, frames = [];
    let deal = 0, zones = dealZones(R, R.deals[0]), pub = Object.assign({}, R.deals[0].state);
    let trick = [], last = new Array(N).fill(null), paid = new Array(N).fill(0), inPlay = false;
    const snap = (k) => frames.push({deal, zones: JSON.parse(JSON.stringify(zones)), pub: Object.assign({}, pub),
      trick: trick.slice(), last: last.slice(), paid: paid.slice(), k});
    snap(0);
    for (let k = 0; k < A.length; k++) {
      const a = A[k];
      if (a.lead) { trick = []; last = new Array(N).fill(null); inPlay = true; }
      for (const [src, dst, cards] of (a.moves || [])) {
        const c = parse(R, cards);
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
        deal = a.deal; zones = dealZones(R, R.deals[deal]); pub = Object.assign({}, R.deals[deal].state);
        trick = []; last = new Array(N).fill(null); inPlay = false;
      }
      snap(k + 1);
    }
    return frames;
  }
  // cards as small boxes, then `backs` card backs
  function cardsEl(s, cls, backs){
    const e = el("span", cls || "cards");
    for (const ch of s) e.appendChild(el("span", "card" + ("BR".includes(ch) ? " j j" + ch : ""), ch));
    for (let i = 0; i < (backs || 0); i++) e.appendChild(el("span", "card cb", "▮"));
    return e;
  }
  function roleOf(R, pub, i){
    if (!R.roles || pub.role_seat === undefined || pub.role_seat < 0) return "";
    return pub.role_seat === i ? R.roles[0] : R.roles[1];
  }
  function sign(x){ return (x > 0 ? "+" : "") + x; }
  function seatName(R, i){ return "player_" + i + (R.players ? " (" + R.players[i] + ")" : ""); }
  // Draw frame `cur` of `frames` into #table (seats around #center: #trick, #piles), #public,
  // #log and #result.  opts.hide: only opts.view's hand (and declared ones) shown;
  // opts.hands: {seat: cards} known hands drawn instead of the frame's zone (the app).
  function render(R, frames, cur, opts){
    opts = opts || {};
    const N = R.n_players, A = R.actions, POS = positions(N);
    const f = frames[cur], pub = f.pub;
    const tbl = document.getElementById("table");
    for (let i = 0; i < N; i++) {
      let box = document.getElementById("seat-" + i);
      if (!box) { box = el("div", "seat"); box.id = "seat-" + i; box.style.gridRow = POS[i][0]; box.style.gridColumn = POS[i][1]; tbl.appendChild(box); }
      box.className = "seat" + (pub.to_move === i ? " tomove" : "") + (opts.me === i ? " me" : "");
      box.textContent = "";
      const head = el("div"); head.appendChild(el("span", "name", seatName(R, i)));
      head.appendChild(el("span", "role", roleOf(R, pub, i)));
      const final = cur === A.length && R.result.done;
      const sc = final ? R.result.rewards[i] : f.paid[i];
      head.appendChild(el("span", "score", (final || f.paid.some(x => x !== 0)) ? "score " + sign(sc) : ""));
      box.appendChild(head);
      const known = opts.hands && opts.hands[i] !== undefined;
      let [hand, unknown] = known ? [opts.hands[i], 0] : split(R, f.zones["hand " + i]);
      const tags = [(hand.length + unknown) + " cards"];
      if (pub.declared && pub.declared.includes(i)) tags.push("declared 报牌");
      if (pub.status && pub.status[i] !== "active") tags.push(pub.status[i]);
      if (pub.places && pub.places[i]) tags.push("place " + pub.places[i] + (pub.stuck && pub.stuck[i] ? " (stuck)" : ""));
      if (pub.totals) tags.push("total " + sign(pub.totals[i]));
      box.appendChild(el("div", "info", tags.join(" · ")));
      const shown = !opts.hide || i === opts.view || known || (pub.declared && pub.declared.includes(i));
      if (shown) box.appendChild(cardsEl(hand, "hand", unknown));
      else box.appendChild(el("span", "hand back", "▮".repeat(Math.min(hand.length + unknown, 40))));
      const l = f.last[i];
      box.appendChild(el("div", "last" + (l === "pass" ? " pass" : ""), l === null ? "" : l));
    }
    const tr = document.getElementById("trick"); tr.textContent = "";
    for (const [s, p] of f.trick) tr.appendChild(el("div", "", "player_" + s + ": " + p));
    const piles = document.getElementById("piles"); piles.textContent = "";
    for (const k in f.zones) if (!k.startsWith("hand ") && !k.startsWith("played ")) {
      const [s, unknown] = split(R, f.zones[k]);
      const row = el("div", "", k + ": "); row.appendChild(cardsEl(s, "cards", unknown)); piles.appendChild(row);
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
  }
  return {el, parse, fmt, split, buildFrames, cardsEl, render, sign, seatName};
})();
