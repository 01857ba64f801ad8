"use strict";
// A player's page (player.html): /player lists the players, /player/NAME shows one; from
// /api/player[/NAME] (the public's view: tournament/public.py). Words from the `hall`
// section of lang/XX.json, in the hall's language, through common.js.
const { say: word, el } = TK;
TK.fill();
const $ = (id) => document.getElementById(id);
const name = decodeURIComponent(location.pathname.replace(/^\/player\/?/, ""));
const COLUMNS = ["", "boardPlayed", "boardWon", "boardDrawn", "boardLost", "boardGoals",
  "boardPoints"];

let me = name;  // the player shown, as the desk spells the name
const hhmm = (epoch) => new Date(epoch * 1000).toLocaleTimeString(LANG,
  { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });

// a side by its name, or where it comes from ("winner of SF1 (Novák – Svoboda)")
const side = (text, from) => TK.sideText(text, from, word("boardWinnerOf"), word("boardLoserOf"));

function nextBox(n, now) {
  const box = el("div", "next" + (n.called ? " called" : ""));
  box.appendChild(el("div", "where", `${word("boardRound", { n: n.round })} · ` +
    word("table", { name: n.table })));
  const opponent = side(n.opponent, n.opponent_from);
  box.appendChild(el("div", "who", word("playerVs", { name: opponent })));
  box.appendChild(el("div", "small", n.stage));
  if (n.series) box.appendChild(seriesBox(n.series, opponent));
  let when = "";
  if (n.called) when = word("playerCalled", { table: n.table });
  else if (n.about) {
    const minutes = Math.round((n.about - now) / 60);
    when = word("playerAbout", { time: hhmm(n.about) }) +
      (minutes > 0 ? ` (${word("playerIn", { n: minutes })})` : "");
  }
  box.appendChild(el("div", "when", when));
  return box;
}

// a series from the player's side (their figures first): "SF1 · best of 5 · game 4",
// "Novák leads 2:1", and each game's score in a row, the games they won marked
function seriesBox(sr, opponent) {
  const say = (key, vars) => SERIES[key].replace(/\{(\w+)\}/g, (all, k) => (k in vars ? vars[k]
    : all));
  const box = el("div", "series");
  const [mine, theirs] = sr.wins;
  const score = `${Math.max(mine, theirs)}:${Math.min(mine, theirs)}`;
  const leader = mine > theirs ? me : opponent;
  box.appendChild(el("div", "head", [sr.match, say("bestOf", { n: sr.best_of }),
    ...(sr.won === null ? [say("game", { game: sr.game })] : [])].join(" · ")));
  if (sr.games.length) box.appendChild(el("div", "standing", sr.won !== null
    ? say("won", { name: sr.won ? me : opponent, score })
    : mine === theirs ? say("level", { score: `${mine}:${theirs}` })
      : say("leads", { name: leader, score })));
  const games = el("ol", "games");
  for (const g of sr.games) {
    games.appendChild(el("li", g.won ? "won" : "lost", `${say("game", { game: g.number })}: ` +
      g.score));
  }
  if (sr.games.length) box.appendChild(games);
  return box;
}

function resultLine(r) {
  const li = el("li");
  // a series decided: "won the series 3:1", the player's games first; a match: "2:1 won"
  const sr = r.series && r.series.won !== null ? r.series : null;
  const score = el("span", "score " + (r.outcome || ""), !r.score ? ""
    : sr ? (sr.won ? word("playerWonSeries", { score: sr.wins.join(":") })
      : word("playerLostSeries", { score: sr.wins.join(":") }))
      : `${r.score} ` + (r.outcome === "won" ? word("playerWon")
        : r.outcome === "lost" ? word("playerLost") : word("playerDrawn")));
  li.appendChild(score);
  li.appendChild(el("div", "", word("playerVs", { name: r.opponent })));
  li.appendChild(el("div", "small", `${word("boardRound", { n: r.round })} · ${r.stage}` +
    (r.score ? "" : ` · ${word("playerScoreLater")}`)));
  if (r.series) li.appendChild(seriesBox(r.series, r.opponent));
  return li;
}

function groupTable(data) {
  const box = el("section");
  box.appendChild(el("h2", "", word("boardGroup", { name: data.group })));
  if (data.frozen !== null && data.frozen !== undefined) {
    box.appendChild(el("p", "small", word("playerFrozen", { n: data.frozen })));
  }
  if (data.points_hidden) box.appendChild(el("p", "small", word("playerPointsHidden")));
  const table = el("table");
  const head = el("tr");
  const columns = data.points_hidden ? COLUMNS.slice(0, 2) : COLUMNS;
  columns.forEach((c, i) => head.appendChild(el("th", i ? "" : "player", c ? word(c) : "")));
  table.appendChild(head);
  for (const r of data.table) {
    const tr = el("tr", r.player === data.player ? "me" : "");
    const cells = [`${r.place}. ${r.player}`, r.played, r.won, r.drawn, r.lost, r.goals,
      r.points].slice(0, columns.length);
    cells.forEach((v, i) => tr.appendChild(el("td", i ? "" : "player", String(v))));
    table.appendChild(tr);
  }
  box.appendChild(table);
  return box;
}

function showPlayer(data) {
  me = data.player;
  $("title").textContent = data.player;
  document.title = `${data.player} — ${data.title}`;
  const parts = [el("p", "small", data.title), el("h2", "", word("playerNext"))];
  parts.push(data.next ? nextBox(data.next, data.now)
    : el("p", "none", word("playerNone")));
  parts.push(el("h2", "", word("playerResults")));
  const list = el("ul");
  data.results.forEach((r) => list.appendChild(resultLine(r)));
  parts.push(data.results.length ? list : el("p", "none", word("playerNoResults")));
  if (data.group) parts.push(groupTable(data));
  if (data.bracket.length) {
    parts.push(el("h2", "", word("boardBracket")));
    const tree = el("ul");
    for (const m of data.bracket) {
      const li = el("li");
      if (m.result) li.appendChild(el("span", "score", m.result));
      li.appendChild(el("div", "", `${side(m.home, m.home_from)} – ` +
        side(m.away, m.away_from)));
      li.appendChild(el("div", "small", `${m.stage} · ${word("boardRound", { n: m.round })}` +
        ` · ${word("table", { name: m.table })}`));
      tree.appendChild(li);
    }
    parts.push(tree);
  }
  $("main").replaceChildren(...parts);
}

function showList(data) {
  $("title").textContent = word("playerPlayers");
  document.title = `${word("playerPlayers")} — ${data.title}`;
  $("all").hidden = true;
  const list = el("ul", "players");
  for (const p of data.players) {
    const li = el("li");
    const a = el("a", "", p.name);
    a.href = `/player/${encodeURIComponent(p.name)}`;
    li.appendChild(a);
    const about = [p.club, p.group ? word("boardGroup", { name: p.group }) : ""].filter(Boolean);
    if (about.length) li.appendChild(el("div", "small", about.join(" · ")));
    list.appendChild(li);
  }
  $("main").replaceChildren(el("p", "small", data.title), list);
}

async function refresh() {
  try {
    const answer = await fetch(name ? `/api/player/${encodeURIComponent(name)}` : "/api/player",
      { cache: "no-store" });
    if (answer.status === 404) {
      $("title").textContent = name;
      $("main").replaceChildren(el("p", "none", word("playerUnknown")));
      return;
    }
    if (!answer.ok) throw new Error(answer.status);
    const data = await answer.json();
    if (name) showPlayer(data); else showList(data);
    $("offline").hidden = true;
  } catch (e) {
    $("offline").hidden = false;  // what was shown stays
  }
}
refresh();
setInterval(refresh, 15000);
