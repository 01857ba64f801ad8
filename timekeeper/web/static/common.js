// What every page of the box and of the desk shares: the words, the clock's text and the
// match's parts. Served by both apps as /static/common.js, loaded right after the page's
// words script (/lang/XX.js: WORDS, PARTS) and before the page's own.
"use strict";

const TK = (() => {
  function clockText(seconds) {
    // as the box's own status line: 0:00 only once the time is really up
    if (seconds === null || seconds === undefined) return "--:--";
    const whole = seconds > 0 ? Math.ceil(seconds - 1e-9) : 0;
    return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  }

  function elapsedText(seconds) {
    const whole = Math.floor(Math.max(0, seconds) + 1e-9);
    return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  }

  // The clock with tenths (0:59 → 59.9) once under a minute, where the profile asks for them.
  function clockTenths(seconds) {
    if (seconds === null || seconds === undefined || seconds >= 60) return clockText(seconds);
    const tenths = Math.max(0, Math.ceil(seconds * 10 - 1e-6)) / 10;
    return tenths.toFixed(1);
  }

  // A word of WORDS (the app's /lang/XX.js, from lang/XX.json), its {x} filled from `vars`.
  // A key the language lacks shows as the key, and is noted in window.tkMissing (the tests).
  window.tkMissing = [];
  function say(key, vars = {}) {
    let text = WORDS[key];
    if (text === undefined) {
      window.tkMissing.push(key);
      text = key;
    }
    return text.replace(/\{(\w+)\}/g, (all, name) => (name in vars ? vars[name] : all));
  }

  // A part of the match as the box names it ("period 2", "half 1", "overtime", "match"), in
  // the page's language (PARTS); a part a profile names otherwise is shown as it is.
  function partName(part) {
    if (!part) return "";
    if (part === "shoot-out") return PARTS.shootout;
    const m = /^(\w+) (\d+)$/.exec(part);
    if (m && m[1] === "overtime") return PARTS.overtimeN.replace("{n}", m[2]);
    if (m && m[1] in PARTS) return PARTS[m[1]].replace("{n}", m[2]);
    return part in PARTS ? PARTS[part] : part;
  }

  // A side's name: the one entered (`names` command), else HOME / AWAY.
  function teamName(s, team) {
    const names = s && s.names;
    const name = names && typeof names[team] === "string" ? names[team].trim() : "";
    return name || say(team);
  }

  // Every element with data-w="key" shows that word (data-w-team: {team} is that side's name
  // in `status`, or HOME / AWAY); data-w-placeholder, data-w-title and data-w-label: its
  // placeholder, its tooltip and its label for screen readers.
  function fill(root = document, status = null) {
    for (const node of root.querySelectorAll("[data-w]")) {
      const team = node.dataset.wTeam;
      node.textContent = say(node.dataset.w, team ? { team: teamName(status, team) } : {});
    }
    for (const node of root.querySelectorAll("[data-w-placeholder]")) {
      node.placeholder = say(node.dataset.wPlaceholder);
    }
    for (const node of root.querySelectorAll("[data-w-title]")) {
      node.title = say(node.dataset.wTitle);
    }
    for (const node of root.querySelectorAll("[data-w-label]")) {
      node.setAttribute("aria-label", say(node.dataset.wLabel));
    }
  }

  // The series on the table (the status's match_series), in the page's language (SERIES, the
  // `series` words; a page without them shows nothing): "QF2 · game 3 · Novák leads 2:0",
  // "series 2:2", between games "next: game 4", once won "Novák wins the series 4:1".
  // (show/status.py's series_text says the same on the box's status line.)
  function seriesText(s) {
    const m = s && s.match_series;
    if (!m || typeof SERIES === "undefined") return "";
    const put = (key, vars) => SERIES[key].replace(/\{(\w+)\}/g, (all, n) => (n in vars ? vars[n] : all));
    const home = m.home_wins, away = m.away_wins;
    if (![home, away, m.game].every(Number.isInteger)) throw new Error("series is not numbers");
    const ahead = Math.max(home, away), behind = Math.min(home, away);
    const out = m.match ? [String(m.match)] : [];
    if (m.winner === "home" || m.winner === "away") {
      out.push(put("won", { name: teamName(s, m.winner), score: `${ahead}:${behind}` }));
      return out.join(" · ");
    }
    out.push(put(s.state === "finished" ? "nextGame" : "game", { game: m.game }));
    out.push(home === away ? put("level", { score: `${home}:${away}` })
      : put("leads", { name: teamName(s, home > away ? "home" : "away"), score: `${ahead}:${behind}` }));
    return out.join(" · ");
  }

  // A play-off side not known yet, in the page's words: "winner of SF1 (Novák – Svoboda)";
  // `from` as the desk sends it (hall/desk/seriesview.py's side_from), `text` (its English)
  // where there is none; `winnerOf`, `loserOf`: the page's words, "{match}" in them.
  function sideText(text, from, winnerOf, loserOf) {
    if (!from) return text;
    const said = (from.what === "loser" ? loserOf : winnerOf).replace("{match}", from.match);
    return from.sides ? `${said} (${from.sides})` : said;
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  return { clockText, clockTenths, elapsedText, say, partName, teamName, seriesText, sideText, fill,
    el };
})();
