// The display page: the clock across a hall, drawn from the box's last status (see live.js).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const table = (params.get("table") || "").slice(0, 40);
  $("table").textContent = table;
  if (table) document.title = `${table} · timekeeper`;

  const live = new TK.Live({
    onStatus: (s) => { drawStatus(s); tick(); },
    onOnline: (online) => {
      $("offline").hidden = online;
      document.body.classList.toggle("is-offline", !online);
    },
  });
  const model = live.model;
  let shownText = "";
  let shownSeconds = null;
  let fittedLength = 0;

  function bigClock(s, now) {
    // what the big digits show in each state, and the seconds behind them (for the bench)
    switch (s.state) {
      case "prestart": case "break": case "shot": {
        const v = model.countdown(now);
        return [TK.clockText(v), v];
      }
      case "shootout": {
        if (s.teams) {
          const goals = (t) => (s.teams[t].shootout || "0/0").split("/")[0];
          return [`${goals("home")}-${goals("away")}`, null];
        }
        return ["--:--", null];
      }
      case "idle": return ["--:--", null];
      default: {
        const v = model.gameClock(now);
        if (v === null) {
          return s.part ? [TK.elapsedText(model.playTime(now)), null] : ["--:--", null];
        }
        return [TK.clockText(v), v];
      }
    }
  }

  function fit(text) {
    // the digits fill the width: the SVG's box is fitted to the text, the SVG to the screen
    if (text.length === fittedLength) return;
    fittedLength = text.length;
    const digits = $("digits");
    const width = Math.ceil(digits.getComputedTextLength()) + 6;
    $("clock").setAttribute("viewBox", `0 0 ${width} 80`);
  }

  function tick() {
    const s = model.status;
    if (!s) return;
    const now = performance.now();
    const [text, seconds] = bigClock(s, now);
    shownSeconds = seconds;
    if (text !== shownText) {
      shownText = text;
      $("digits").textContent = text;
      fit(text);
    }
    drawCountdowns(s, now);
  }

  function drawStatus(s) {
    document.body.dataset.state = s.state;
    $("part").textContent = TK.partText(s);
    $("state").textContent = TK.stateWord(s);
    const sub = [];
    if (s.added) sub.push(`${s.added > 0 ? "+" : "−"}${TK.elapsedText(Math.abs(s.added))} added`);
    if (s.state === "prestart") sub.push("to the start");
    if (s.state === "break" && s.waiting_for) sub.push(s.waiting_for.replace(/^next: /, "then "));
    if (s.state === "shot") sub.push(`shot ${s.shot + 1}`);
    if (s.penalty_shot) sub.push(`PENALTY SHOT ${s.penalty_shot.toUpperCase()}`);
    if (s.shootout_score && !s.teams) sub.push(`shoot-out ${s.shootout_score}`);
    $("sub").textContent = sub.join(" · ");
    $("score-home").textContent = s.score ? s.score.home : 0;
    $("score-away").textContent = s.score ? s.score.away : 0;
    for (const team of ["home", "away"]) {
      const so = s.teams && s.teams[team].shootout;
      $(`so-${team}`).textContent = so ? `shoot-out ${so}` : "";
    }
    $("boxes").hidden = !s.teams;
    if (s.teams) drawPenalties(s);
  }

  function drawPenalties(s) {
    for (const team of ["home", "away"]) {
      const list = $(`pen-${team}`);
      list.replaceChildren();
      for (const p of s.teams[team].penalties) {
        const item = TK.el("li", `penalty ${p.state}`);
        item.append(TK.el("span", "who", p.player ? `#${p.player}` : `(${p.id})`));
        item.append(TK.el("span", "kind", p.kinds));
        const left = TK.el("span", "left", p.state === "game" ? "game" : "");
        left.dataset.id = p.id;
        left.dataset.team = team;
        item.append(left);
        if (p.state === "waiting") item.append(TK.el("span", "tag", "waiting"));
        list.append(item);
      }
    }
  }

  function drawCountdowns(s, now) {
    if (!s.teams) return;
    for (const node of document.querySelectorAll(".penalty .left[data-id]")) {
      const p = s.teams[node.dataset.team].penalties.find((x) => String(x.id) === node.dataset.id);
      if (!p || p.state === "game") continue;
      const text = TK.clockText(model.penaltyLeft(p, now));
      if (node.textContent !== text) node.textContent = text;
    }
    const t = model.timeout(now);
    const text = s.timeout ? `TIME-OUT ${s.timeout.toUpperCase()} ${TK.clockText(t)}` : "";
    if ($("timeout").textContent !== text) $("timeout").textContent = text;
  }

  setInterval(tick, 40);
  // for the tests and the bench: what the page shows now
  window.tkDisplay = { text: () => shownText, seconds: () => shownSeconds, online: () => live.online,
    silence: () => live.silence };
})();
