// The display page: the clock across a hall, drawn from the box's last status (see live.js).
// Every moment says what is going on: the match length and the names before the start, what
// comes next when a period is over, the shoot-out's attempts, the winner at the end. Its
// words are in lang/XX.json (the box serves them as /lang/XX.js).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const say = TK.say;
  const params = new URLSearchParams(location.search);
  const table = (params.get("table") || "").slice(0, 40);
  TK.fill();
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

  function inShootout(s) {
    return s.state === "shootout" || s.state === "shot";
  }

  function gameText(s, v) {
    return s.tenths ? TK.clockTenths(v) : TK.clockText(v);
  }

  function bigClock(s, now) {
    // what the big digits show in each state, and the seconds behind them (for the bench)
    switch (s.state) {
      case "prestart": case "break": case "shot": {
        const v = model.countdown(now);
        return [TK.clockText(v), v];
      }
      case "shootout": {
        const so = TK.shootout(s);
        if (so.any || s.teams) return [`${so.goals.home}:${so.goals.away}`, null];
        return [say("shootout"), null]; // (results not entered: no score to show)
      }
      case "idle": {
        if (s.countdown !== null && s.countdown !== undefined) { // the no-show countdown
          const v = model.countdown(now);
          return [TK.clockText(v), v];
        }
        return [TK.clockText(s.length === undefined ? null : s.length), null];
      }
      case "finished": {
        // (a box whose operator entered no goals knows no score: it says FINAL, large)
        if (!scoreKept(s)) return [say("final"), null];
        const score = s.score || { home: 0, away: 0 };
        return [`${score.home}:${score.away}`, null];
      }
      default: {
        const v = model.gameClock(now);
        if (v === null) {
          return s.part ? [TK.elapsedText(model.playTime(now)), null] : ["--:--", null];
        }
        return [gameText(s, v), v];
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

  function nextPart(s) {
    // what NEXT starts after this period (waiting_for: "next: overtime", "finish", …)
    const waiting = s.waiting_for || "";
    if (waiting === "finish") return say("decided");
    if (!waiting.startsWith("next: ")) return "";
    const part = TK.partName(waiting.slice(6));
    if (part === "shoot-out") return say("nextShootout");
    return say(s.state === "break" ? "then" : "next", { part });
  }

  function scoreKept(s) {
    return (s.goals || []).length > 0 || TK.shootout(s).any;
  }

  function outcome(s) {
    // the winner (by name) and how it was decided, for FINAL
    const score = s.score || { home: 0, away: 0 };
    const so = TK.shootout(s);
    const byShootout = s.part === "shoot-out";
    let winner = null;
    if (score.home !== score.away) winner = score.home > score.away ? "home" : "away";
    else if (byShootout && so.goals.home !== so.goals.away) {
      winner = so.goals.home > so.goals.away ? "home" : "away";
    }
    const words = [];
    if (scoreKept(s)) {
      words.push(winner ? say("wins", { team: TK.teamName(s, winner).toUpperCase() })
        : say("draw"));
    }
    if (byShootout) {
      words.push(so.any ? say("afterShootout", { score: `${so.goals.home}:${so.goals.away}` })
        : say("afterShootoutBare"));
    } else if (s.period > s.periods) words.push(say("inOvertime"));
    else if (winner) words.push(say("inRegulation"));
    return words.join(" · ");
  }

  function subLine(s) {
    const next = s.next_pairing; // (a hall box: the pairing held for after this match)
    const line = subParts(s);
    if (!next) return line;
    const side = (team) => TK.teamName({ names: next }, team);
    const shown = say("nextPairing", { home: side("home"), away: side("away") });
    return [line, shown].filter(Boolean).join(" · ");
  }

  function subParts(s) {
    const sub = [];
    switch (s.state) {
      case "idle":
        sub.push(s.countdown !== null && s.countdown !== undefined ? say("noShow") : s.title);
        break;
      case "prestart": sub.push(say("toTheStart")); break;
      case "break": case "waiting": sub.push(nextPart(s)); break;
      case "shot": sub.push(say("shot", { n: s.shot + 1 })); break;
      case "finished": return outcome(s);
      default: break;
    }
    if (inShootout(s)) {
      const so = TK.shootout(s);
      if (s.state === "shootout") sub.unshift(say("shootout"));
      if (so.next) sub.push(say("shoots", { team: TK.teamName(s, so.next) }));
    }
    if (s.added && ["running", "stopped"].includes(s.state)) {
      const time = TK.elapsedText(Math.abs(s.added));
      sub.push(say("added", { sign: s.added > 0 ? "+" : "−", time }));
    }
    if (s.penalty_shot) {
      sub.push(say("penaltyShot", { team: TK.teamName(s, s.penalty_shot).toUpperCase() }));
    }
    return sub.filter(Boolean).join(" · ");
  }

  // how a game went past regulation, as a result is written (3:2 SD)
  const GAME_MARK = { overtime: " OT", sudden_death: " SD", shootout: " SO" };

  function drawStatus(s) {
    document.body.dataset.state = s.state;
    $("part").textContent = s.state === "idle" ? "" : TK.partText(s); // (idle: the title below)
    $("state").textContent = TK.stateWord(s);
    const series = TK.seriesText(s); // (a series on the table: QF2 · game 3 · Novák leads 2:0)
    // once the series is won, its result is the headline and the last game's score under it
    const m = s.match_series;
    const won = Boolean(m && m.winner && s.state === "finished");
    document.body.classList.toggle("series-won", won);
    $("sub").textContent = won ? [SERIES.game.replace("{game}", m.game), subLine(s)]
      .filter(Boolean).join(" · ") : subLine(s);
    $("series").textContent = series;
    $("series").hidden = !series;
    // the record of the games the box counted: each score, how it went past regulation
    const games = (m && Array.isArray(m.games) ? m.games : []).map((g) =>
      `${g.home}:${g.away}${GAME_MARK[g.decided] || ""}`).join(" · ");
    $("series-games").textContent = games;
    $("series-games").hidden = !games;
    for (const team of ["home", "away"]) {
      $(`name-${team}`).textContent = TK.teamName(s, team);
      $(`att-name-${team}`).textContent = TK.teamName(s, team);
      $(`score-${team}`).textContent = s.score ? s.score[team] : 0;
      const left = s.teams ? s.teams[team].timeouts_left : null;
      $(`to-${team}`).textContent = left === null || left === undefined ? ""
        : left > 0 ? say("timeoutsLeft", { n: left }) : say("noTimeoutLeft");
    }
    drawAttempts(s);
    drawGoals(s);
    $("boxes").hidden = !s.teams;
    if (s.teams) drawPenalties(s);
  }

  function drawAttempts(s) {
    const so = TK.shootout(s);
    const show = inShootout(s) || (s.state === "finished" && s.part === "shoot-out" && so.any);
    $("attempts").hidden = !show || !so.any && !s.teams;
    for (const team of ["home", "away"]) {
      const marks = $(`att-${team}`);
      marks.replaceChildren(...so.per[team].map((goal) =>
        TK.el("span", goal ? "hit" : "miss", goal ? "✓" : "✗")));
      if (inShootout(s) && so.next === team) marks.append(TK.el("span", "turn", "●"));
      marks.parentElement.classList.toggle("turn", inShootout(s) && so.next === team);
    }
  }

  function drawGoals(s) {
    // the last goals, newest first, with their part, time and scorer
    const goals = (s.goals || []).slice(-3).reverse();
    $("goals").hidden = !goals.length;
    $("goals").replaceChildren(...goals.map((g) => {
      const part = g.period > s.periods ? say("overtime").toLowerCase()
        : say("periodShort", { n: g.period });
      const item = TK.el("li", `goal ${g.team}`, say("goalLine", { part,
        time: TK.elapsedText(g.play_time), team: TK.teamName(s, g.team),
        player: g.player ? ` #${g.player}` : "" }));
      return item;
    }));
  }

  function drawPenalties(s) {
    for (const team of ["home", "away"]) {
      const list = $(`pen-${team}`);
      list.replaceChildren();
      for (const p of s.teams[team].penalties) {
        list.append(TK.penaltyItem(p, team, model));
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
    const text = s.timeout ? say("timeout", { team: TK.teamName(s, s.timeout).toUpperCase(),
      time: TK.clockText(t) }) : "";
    if ($("timeout").textContent !== text) $("timeout").textContent = text;
  }

  setInterval(tick, 40);
  // for the tests and the bench: what the page shows now
  window.tkDisplay = { text: () => shownText, seconds: () => shownSeconds, online: () => live.online,
    silence: () => live.silence };
})();
