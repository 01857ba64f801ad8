// The operator page: every button is one command to the box, answered as `ctl` answers it.
// The token comes from the link `timekeeper ctl link` prints (#token=…); it is kept in this
// browser's storage and sent in a header, never in a cookie. Its words are in lang/XX.json.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const say = TK.say;
  const KEY = "timekeeper-token";
  const CONFIRM_MS = 3000; // a second tap within this confirms (RESET, TIME-OUT)
  TK.fill();

  function tokenFromLink() {
    const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromLink) {
      localStorage.setItem(KEY, fromLink);
      history.replaceState(null, "", location.pathname + location.search); // off the screen
    }
    return localStorage.getItem(KEY);
  }
  let token = tokenFromLink();
  let addStep = 10;
  let penTeam = "home";
  let kinds = [];
  let wakeLock = null;
  let namesEdited = false;

  function note(text, kind) {
    const box = $("note");
    box.textContent = text;
    box.className = `note ${kind || ""}`;
  }

  function noToken(why) {
    token = null;
    localStorage.removeItem(KEY);
    note(say("openLink", { why }), "auth");
  }

  const live = new TK.Live({
    token,
    onStatus: (s) => draw(s),
    onOnline: (online) => { $("offline").hidden = online; },
    onAuth: (ok) => { if (!ok && token) noToken(say("tokenInvalid")); },
    onEnded: () => noToken(say("linkRenewed")),
  });
  if (!token) noToken(say("noToken"));
  else note(say("readyNote"));
  window.addEventListener("hashchange", () => {
    token = tokenFromLink();
    if (token) { live.setToken(token); note(say("readyNote")); }
  });

  async function send(command, args = []) {
    if (!token) { noToken(say("noToken")); return; }
    let answer;
    try {
      const response = await fetch("/api/command", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify({ command, args }),
        credentials: "omit",
        cache: "no-store",
      });
      answer = await response.json();
      if (response.status === 401) { noToken(say("notAccepted")); return; }
      if (!answer.ok) { note(say("refused", { command, error: answer.error }), "refused"); return; }
    } catch (err) {
      note(say("noAnswer", { command, error: err.message }), "refused");
      return;
    }
    note(say("done", { command: [command, ...args].join(" ") }), "done");
    live.model.update(answer.status);
    draw(answer.status);
  }

  function words(text) {
    const [command, ...args] = text.split(" ");
    return [command, args];
  }

  function showKinds() {
    $("pen-send").textContent = say("enter", { kinds: kinds.length ? kinds.join("+") : "—" });
  }
  showKinds();

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    const d = button.dataset;
    const player = $("player").value.trim();
    if (d.cmd === "minus") send("add", ["-"]);  // one step back, the engine's profile's
    else if (d.cmd === "mute") send(live.model.status && live.model.status.muted ? "unmute" : "mute");
    else if (d.cmd) send(...words(d.cmd));
    else if (d.teamCmd) {
      const [command, args] = words(d.teamCmd);
      send(command, player ? [...args, player] : args);
      $("player").value = "";
    } else if (d.confirm) confirmThen(button, d.confirm);
    else if (d.penTeam) {
      penTeam = d.penTeam;
      $("pen-team-home").classList.toggle("on", penTeam === "home");
      $("pen-team-away").classList.toggle("on", penTeam === "away");
    } else if (d.kind) { kinds.push(d.kind); showKinds(); }
    else if (button.id === "pen-clear") { kinds = []; showKinds(); }
    else if (button.id === "pen-send") {
      if (!kinds.length) { note(say("choosePenalty"), "refused"); return; }
      send("penalty", player ? [penTeam, kinds.join("+"), player] : [penTeam, kinds.join("+")]);
      kinds = []; showKinds(); $("player").value = "";
    } else if (button.id === "set") send("set", [$("set-time").value.trim()]);
    else if (button.id === "set-names") {
      namesEdited = false;
      send("names", [$("name-home").value.trim(), $("name-away").value.trim()]);
    }
  });
  for (const id of ["name-home", "name-away"]) {
    $(id).addEventListener("input", () => { namesEdited = true; });
  }

  // What a second tap within CONFIRM_MS confirms, and what the armed button says meanwhile
  // (a dialog would block the page and its clock).
  const ARMED = {
    reset: () => say("resetAgain"),
    "timeout home": () => say("timeoutConfirm", { team: teamUpper("home") }),
    "timeout away": () => say("timeoutConfirm", { team: teamUpper("away") }),
  };

  function teamUpper(team) {
    return TK.teamName(live.model.status, team).toUpperCase();
  }

  function label(node, s) {
    const team = node.dataset.wTeam;
    node.textContent = say(node.dataset.w, team ? { team: TK.teamName(s, team) } : {});
  }

  function confirmThen(button, command) {
    const relabel = () => label(button, live.model.status);
    if (button.classList.contains("armed")) {
      clearTimeout(Number(button.dataset.timer));
      button.classList.remove("armed");
      relabel();
      send(...words(command));
      return;
    }
    button.classList.add("armed");
    button.textContent = ARMED[command]();
    button.dataset.timer = String(setTimeout(() => {
      button.classList.remove("armed");
      relabel();
    }, CONFIRM_MS));
  }

  function draw(s) {
    if (s.add_step) addStep = s.add_step;
    $("plus").textContent = say("plusTime", { n: addStep });
    $("minus").textContent = say("minusTime", { n: addStep });
    $("state").textContent = TK.stateWord(s);
    $("part").textContent = TK.partText(s);
    $("scoreline").textContent = s.score ? `${s.score.home}:${s.score.away}` : "0:0";
    for (const node of document.querySelectorAll("[data-w-team]")) {
      if (!node.classList.contains("armed")) label(node, s);
    }
    // START/NEXT where it goes on: after a won series the box offers no further game
    $("go").hidden = ["idle", "finished"].includes(s.state) && !s.waiting_for;
    $("hockey").hidden = !s.teams;
    const shootout = s.state === "shootout" || s.state === "shot";
    $("shootout-block").hidden = !shootout;
    if (shootout) drawShootout(s);
    if (s.teams) drawBox(s);
    // hall commands this table holds for an instant ahead (ctl status: `scheduled`)
    const pending = (Array.isArray(s.scheduled) ? s.scheduled : []).map(w =>
      say("hallPending", { command: w.command, seconds: Math.round(w.in) })).join(" · ");
    $("pending").textContent = pending;
    $("pending").hidden = !pending;
    // the box's sound is lost (and being reopened): the clock goes on, the operator knows
    $("sound-lost").textContent = s.audio_fault ? say("soundLost", { why: s.audio_fault }) : "";
    $("sound-lost").hidden = !s.audio_fault;
    // the result this table holds for the desk, until its operator has confirmed it
    const result = s.hall_result;
    $("result-block").hidden = !result || result.confirmed;
    if (result && !result.confirmed) {
      $("confirm-result").textContent = say("confirmResult", { match: result.match,
        score: result.score });
    }
    $("mute").textContent = s.muted ? say("unmute") : say("mute");
    $("mute").classList.toggle("on", !!s.muted);
    if (!namesEdited && document.activeElement !== $("name-home") &&
        document.activeElement !== $("name-away")) {
      $("name-home").value = (s.names && s.names.home) || "";
      $("name-away").value = (s.names && s.names.away) || "";
    }
    keepAwake(["prestart", "running", "stopped", "break", "waiting", "shootout", "shot"]
      .includes(s.state));
  }

  function drawShootout(s) {
    const so = TK.shootout(s);
    const line = ["home", "away"].map((t) =>
      `${TK.teamName(s, t)} ${so.per[t].map((g) => (g ? "✓" : "✗")).join(" ")}`.trim());
    if (so.next) line.push(say("shoots", { team: TK.teamName(s, so.next) }));
    $("shootout-now").textContent = line.join(" · ");
  }

  function drawBox(s) {
    // the penalties as they stand: release and remove are never pressed blind
    for (const team of ["home", "away"]) {
      const list = $(`box-${team}`);
      const items = s.teams[team].penalties.map((p) => TK.penaltyItem(p, team, live.model));
      const head = TK.el("li", "head", TK.teamName(s, team));
      if (!items.length) items.push(TK.el("li", "none", say("noPenalties")));
      list.replaceChildren(head, ...items);
    }
  }

  function tick() {
    const m = live.model;
    const s = m.status;
    if (!s) return;
    let text = "--:--";
    if (["prestart", "break", "shot"].includes(s.state)) text = TK.clockText(m.countdown());
    else if (s.state === "shootout") {
      const so = TK.shootout(s);
      text = say("shootoutShort", { score: `${so.goals.home}:${so.goals.away}` });
    } else if (s.remaining !== null) text = TK.clockText(m.gameClock());
    if ($("clock").textContent !== text) $("clock").textContent = text;
    if (s.teams) {
      for (const node of document.querySelectorAll(".box-list .left[data-id]")) {
        const p = s.teams[node.dataset.team].penalties
          .find((x) => String(x.id) === node.dataset.id);
        if (!p || p.state === "game") continue;
        const left = TK.clockText(m.penaltyLeft(p));
        if (node.textContent !== left) node.textContent = left;
      }
    }
    const timeout = s.timeout ? say("timeoutRunning", { team: TK.teamName(s, s.timeout),
      time: TK.clockText(m.timeout()) }) : "";
    if ($("timeout-now").textContent !== timeout) $("timeout-now").textContent = timeout;
    $("timeout-now").hidden = !timeout;
  }
  setInterval(tick, 100);

  async function keepAwake(wanted) {
    const sayAwake = (text) => { $("awake").textContent = text; };
    if (!("wakeLock" in navigator)) {
      sayAwake(window.isSecureContext ? say("awakeNone") : say("awakeInsecure"));
      return;
    }
    if (wanted && !wakeLock) {
      try {
        wakeLock = await navigator.wakeLock.request("screen");
        wakeLock.addEventListener("release", () => { wakeLock = null; });
        sayAwake(say("awakeOn"));
      } catch (err) {
        sayAwake(say("awakeFailed", { error: err.message }));
      }
    } else if (!wanted && wakeLock) {
      wakeLock.release();
      wakeLock = null;
      sayAwake("");
    }
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && live.model.status) draw(live.model.status);
  });
})();
