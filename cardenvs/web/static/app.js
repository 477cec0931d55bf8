// The web app of `cardenvs serve`: the setup form, the websocket session, the player's hand
// and moves.  The table itself is drawn by CardTable (table.js, shared with the replay viewer).
// The browser sends only action ids (with the turn they answer); the server checks them.
"use strict";
const App = (() => {
  const $ = (id) => document.getElementById(id);
  const el = CardTable.el;
  let info = null, ws = null, state = null, frames = null, selected = new Set(), waiting = false;
  let queue = [];

  function showError(text){ const e = $("error"); e.textContent = text || ""; e.className = text ? "shown" : ""; }
  function status(text){ $("status").textContent = text; }

  // -- the setup form ----------------------------------------------------------------------------
  function gameChanged(){
    const name = $("game").value, g = info.games[name];
    $("title").textContent = "· " + g.title;
    const seat = $("seat"), keep = seat.value;
    seat.textContent = "";
    for (let i = 0; i < g.players; i++) { const o = el("option", "", "player_" + i); o.value = String(i); seat.appendChild(o); }
    const w = el("option", "", "watch (agents only)"); w.value = "watch"; seat.appendChild(w);
    seat.value = (keep === "watch" || Number(keep) < g.players) && keep !== "" ? keep : "0";
    agentsFields();
    const box = $("options"); box.textContent = "";
    for (const [k, v] of Object.entries(g.options)) {
      const lab = el("label", "", k + " ");
      let inp;
      if (typeof v === "boolean") { inp = el("input"); inp.type = "checkbox"; inp.checked = v; }
      else if (typeof v === "number") { inp = el("input"); inp.type = "number"; inp.value = String(v); }
      else { inp = el("input"); inp.type = "text"; inp.value = String(v); }
      inp.id = "opt-" + k; inp.dataset.key = k; inp.dataset.kind = typeof v;
      lab.appendChild(inp); box.appendChild(lab);
    }
  }
  function agentsFields(){
    const g = info.games[$("game").value], span = $("agents"), seat = $("seat").value;
    const old = {}; for (const inp of span.querySelectorAll("input")) old[inp.dataset.seat] = inp.value;
    span.textContent = "";
    for (let i = 0; i < g.players; i++) {
      if (String(i) === seat) continue;
      const lab = el("label", "", "player_" + i + " ");
      const inp = el("input", "agent"); inp.id = "agent-" + i; inp.dataset.seat = String(i);
      inp.setAttribute("list", "agentlist"); inp.value = old[i] || "rules";
      inp.title = "an agent spec: rules, random, trained, search:rollouts=800, trained:path.npz ...";
      lab.appendChild(inp); span.appendChild(lab);
    }
  }
  function options(){
    const out = {}, g = info.games[$("game").value];
    for (const inp of $("options").querySelectorAll("input")) {
      const k = inp.dataset.key, kind = inp.dataset.kind;
      const v = kind === "boolean" ? inp.checked : kind === "number" ? Number(inp.value) : inp.value;
      if (v !== g.options[k]) out[k] = v;
    }
    return out;
  }
  function start(ev){
    if (ev) ev.preventDefault();
    const g = info.games[$("game").value], seatV = $("seat").value;
    const seat = seatV === "watch" ? null : Number(seatV);
    const agents = [];
    for (let i = 0; i < g.players; i++) if (i !== seat) agents.push($("agent-" + i).value.trim());
    const seedText = $("seed").value.trim();
    const msg = {type: "start", game: $("game").value, options: options(), seat, agents,
                 seed: seedText === "" ? null : Number(seedText), delay: Number($("delay").value)};
    showError(""); selected.clear(); state = null;
    $("downloads").textContent = "";
    $("watchctl").hidden = seat !== null;
    if (seat === null) { $("speed").value = String(msg.delay); $("speedval").textContent = msg.delay + " s"; }
    $("pause").textContent = "pause";
    send(msg);
    status("starting " + g.title + " …");
  }

  // -- the connection ----------------------------------------------------------------------------
  function send(msg){
    if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify(msg)); return; }
    queue.push(msg);
    if (!ws || ws.readyState > WebSocket.OPEN) connect();
  }
  function connect(){
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    ws.onopen = () => { for (const m of queue.splice(0)) ws.send(JSON.stringify(m)); };
    ws.onmessage = (e) => receive(JSON.parse(e.data));
    ws.onclose = () => { if (state && !state.done) status("disconnected from the server: start a new game"); };
  }
  // a state message carries the whole replay, or a delta to the previous message's: the
  // actions and deals from where they change on, and the result
  function applyDelta(msg){
    const d = msg.delta, R = state && state.replay;
    if (!R || state.game !== msg.game || R.actions.length < d.actions_from || R.deals.length < d.deals_from) return false;
    R.actions.length = d.actions_from; for (const a of d.actions) R.actions.push(a);
    R.deals.length = d.deals_from; for (const x of d.deals) R.deals.push(x);
    R.result = d.result;
    msg.replay = R; delete msg.delta;
    return true;
  }
  function receive(msg){
    if (msg.type === "error") { showError(msg.message); waiting = false; if (state) drawPlay(); return; }
    if (msg.type !== "state") return;
    if (msg.delta && !applyDelta(msg)) { send({type: "sync"}); return; }  // out of step: ask for it all
    showError("");
    const newTurn = !state || state.turn !== msg.turn || state.game !== msg.game;
    state = msg; waiting = false;
    if (newTurn) selected.clear();
    draw();
  }

  // -- drawing -----------------------------------------------------------------------------------
  function draw(){
    const R = state.replay, watching = state.seat === null;
    $("sub").textContent = R.title + " · seed " + state.seed + " · " +
      state.players.map((p, i) => "player_" + i + ": " + p).join(", ");
    for (const s of document.querySelectorAll(".seat")) s.remove();
    frames = CardTable.buildFrames(R);
    CardTable.render(R, frames, frames.length - 1,
      {hide: false, view: state.seat, hands: state.hands, me: watching ? -1 : state.seat});
    if (state.done) {
      status("game over: " + state.rewards.map((x, i) => "player_" + i + " " + CardTable.sign(x)).join(", ") +
        (watching ? "" : " · you: " + CardTable.sign(state.rewards[state.seat])));
      downloads();
    } else if (state.to_move === state.seat) status("your turn");
    else status("player_" + state.to_move + " (" + state.players[state.to_move] + ") is to move …");
    drawPlay();
  }
  function downloads(){
    const d = $("downloads"); d.textContent = "";
    const blob = new Blob([state.replay_json], {type: "application/json"});
    const a = el("a", "", "download the replay (JSON)");
    a.id = "replay-download"; a.href = URL.createObjectURL(blob);
    a.download = "cardenvs-" + state.game + "-seed" + state.seed + ".json";
    a.title = "cardenvs replay FILE.json --html OUT.html makes a viewer page of it";
    d.appendChild(a);
  }
  function handCards(){ return state.seat === null ? "" : (state.hands[String(state.seat)] || ""); }
  function selectionCounts(){
    const R = state.replay, c = new Array(R.ranks.length).fill(0), h = handCards();
    for (const i of selected) c[R.ranks.indexOf(h[i])]++;
    return c;
  }
  // naturals as they are, wild jokers as one count: a play is matched whichever wild joker
  // stands in (the game asks which, as a button, where it matters)
  function key(c){
    const w = new Set(state.wild), k = [];
    let jokers = 0;
    for (let i = 0; i < c.length; i++) { if (w.has(i)) jokers += c[i]; else k.push(c[i]); }
    k.push(jokers); return k;
  }
  function relation(sel, cards){   // "exact", "part" (the play holds the selection) or null
    const a = key(sel), b = key(cards);
    let same = true;
    for (let i = 0; i < a.length; i++) { if (a[i] > b[i]) return null; if (a[i] !== b[i]) same = false; }
    return same ? "exact" : "part";
  }
  function label(m){ return m.reading && m.reading !== m.text && !state.wild.length ? m.text + " (" + m.reading + ")" : m.text; }
  function drawPlay(){
    const mine = state && !state.done && state.seat !== null && state.to_move === state.seat;
    $("play").hidden = !state || state.seat === null;
    if (!state || state.seat === null) return;
    $("play").className = waiting || !mine ? "wait" : "";
    const hand = handCards(), box = $("myhand"); box.textContent = "";
    for (let i = 0; i < hand.length; i++) {
      const ch = hand[i];
      const c = el("span", "hcard" + ("BR".includes(ch) ? " j j" + ch : "") + (selected.has(i) ? " sel" : ""), ch);
      c.dataset.i = String(i); c.dataset.card = ch;
      c.onclick = () => { if (selected.has(i)) selected.delete(i); else selected.add(i); drawPlay(); };
      box.appendChild(c);
    }
    const moves = $("moves"), buttons = $("buttons");
    moves.textContent = ""; buttons.textContent = "";
    if (!mine) return;
    const plays = state.legal.filter(m => m.counts), others = state.legal.filter(m => !m.counts);
    const sel = selectionCounts();
    if (plays.length) {
      const exact = [], part = [];
      for (const m of plays) { const r = relation(sel, m.counts); if (r === "exact") exact.push(m); else if (r === "part") part.push(m); }
      if (selected.size === 0) moves.appendChild(el("span", "note", plays.length + " card plays: select cards, or pick one: "));
      else if (!exact.length) moves.appendChild(el("span", "note", part.length ? "add cards for: " : "no legal play with these cards"));
      for (const m of exact) {
        const b = el("button", "play", "play " + label(m)); b.type = "button"; b.dataset.id = String(m.id);
        b.disabled = waiting; b.onclick = () => act(m.id); moves.appendChild(b);
      }
      if (exact.length && part.length) moves.appendChild(el("span", "note", " or add cards for: "));
      for (const m of part.slice(0, 24)) {
        const b = el("button", "chip", label(m)); b.type = "button"; b.dataset.cards = m.cards;
        b.onclick = () => choose(m.cards); moves.appendChild(b);
      }
      if (part.length > 24) moves.appendChild(el("span", "note", " … " + (part.length - 24) + " more"));
    }
    for (const m of others) {
      const b = el("button", m.block, m.text); b.type = "button"; b.dataset.id = String(m.id);
      b.disabled = waiting; b.onclick = () => act(m.id); buttons.appendChild(b);
    }
  }
  function choose(cards){   // select the hand's cards of a play
    const hand = handCards(), taken = new Set();
    for (const ch of cards) {
      for (let i = 0; i < hand.length; i++) if (!taken.has(i) && hand[i] === ch) { taken.add(i); break; }
    }
    selected = taken; drawPlay();
  }
  function act(id){
    if (waiting || !state) return;
    waiting = true; drawPlay();
    send({type: "act", id, turn: state.turn});
  }

  function init(){
    fetch("/api/games").then(r => r.json()).then(data => {
      info = data;
      const sel = $("game");
      for (const [name, g] of Object.entries(info.games)) { const o = el("option", "", g.title + " (" + name + ")"); o.value = name; sel.appendChild(o); }
      const dl = el("datalist"); dl.id = "agentlist";
      for (const a of [...info.agents, "search:rollouts=800"]) { const o = el("option"); o.value = a; dl.appendChild(o); }
      document.body.appendChild(dl);
      sel.onchange = gameChanged; $("seat").onchange = agentsFields;
      gameChanged();
      $("setup").onsubmit = start;
      $("clear").onclick = () => { selected.clear(); drawPlay(); };
      $("speed").oninput = () => { const v = Number($("speed").value); $("speedval").textContent = v + " s"; send({type: "speed", delay: v}); };
      $("pause").onclick = () => { const p = $("pause").textContent === "pause"; send({type: p ? "pause" : "resume"}); $("pause").textContent = p ? "resume" : "pause"; };
      connect();
    }).catch(e => showError("cannot reach the server: " + e));
  }
  init();
  return {get state(){ return state; }, get selected(){ return [...selected]; }, get waiting(){ return waiting; },
          start, act, choose};
})();
