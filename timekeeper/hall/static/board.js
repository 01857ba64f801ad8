"use strict";
// The hall's big screen (board.html). Its words come from the script before common.js
// (lang/XX.json's `hall` section, in the desk's language or the page's ?lang=xx); the words,
// the clock's text and el() are common.js's, as on the box's pages.
const { say: word, el } = TK;
TK.fill();
const COLUMNS = ["", "boardPlayed", "boardWon", "boardDrawn", "boardLost", "boardGoals",
  "boardPoints"];
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const $ = (id) => document.getElementById(id);
// the clock of a table's card: none while the match is untimed
const clock = (seconds) => (seconds === null || seconds === undefined ? ""
  : TK.clockText(Math.max(0, seconds)));
function tableCard(t) {
  const status = t.status && t.status.online ? t.status.status : null;
  const card = el("div", "table " + (status ? status.state : ""));
  card.appendChild(el("span", "name", word("table", { name: t.table })));
  card.appendChild(el("span", "state", status ? (status.state in WORDS ? word(status.state)
    : status.state) : word("offline")));
  const p = t.pairing;
  card.appendChild(el("div", "sides", p ? `${p.home} – ${p.away}` : word("boardFree")));
  if (p) card.appendChild(el("div", "name", `${p.match} · ${p.stage}`));
  const score = status ? `${status.score.home}:${status.score.away}` : (t.result || "");
  card.appendChild(el("span", "score", t.result || score));
  const left = status ? (status.countdown ?? status.remaining) : null;
  card.appendChild(el("div", "clock", status && status.state !== "finished" ? clock(left) : ""));
  if (t.result_id) {
    const mark = el("div", "name", word(t.confirmed ? "boardConfirmed" : "boardUnconfirmed"));
    if (token && !t.confirmed) {
      const yes = el("button", "", word("boardConfirm"));
      yes.onclick = () => act("confirm", { id: t.result_id });
      mark.appendChild(yes);
    }
    card.appendChild(mark);
  }
  return card;
}
function standings(name, rows) {
  const box = el("div");
  box.appendChild(el("h2", "", word("boardGroup", { name })));
  const table = el("table", "standings");
  const head = el("tr");
  COLUMNS.forEach((c, i) => head.appendChild(el("th", i === 0 ? "player" : "", c ? word(c) : "")));
  table.appendChild(head);
  for (const r of rows) {
    const tr = el("tr");
    [`${r.place}. ${r.player}`, r.played, r.won, r.drawn, r.lost, r.goals, r.points]
      .forEach((v, i) => tr.appendChild(el("td", i === 0 ? "player" : "", String(v))));
    table.appendChild(tr);
  }
  box.appendChild(table);
  return box;
}
async function act(action, body) {
  const answer = await fetch(`/api/board/${action}`, { method: "POST",
    headers: { "Authorization": `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body) });
  const data = await answer.json();
  $("answer").textContent = data.ok ? "" : data.error;
  refresh();
}
let nextRound = null;
function show(board) {
  $("title").textContent = board.title;
  const called = board.tables.map((t) => t.pairing && t.pairing.round).filter(Boolean);
  $("roundTitle").textContent = called.length ? word("boardRound", { n: Math.max(...called) })
    : word("boardTables");
  $("tables").replaceChildren(...board.tables.map(tableCard));
  $("groups").replaceChildren(...Object.entries(board.groups).map(([g, rows]) =>
    standings(g, rows)));
  $("bracket").replaceChildren(...board.bracket.map((m) =>
    el("li", "", `${m.stage}: ${m.sides}${m.result ? "  " + m.result : ""}`)));
  nextRound = board.next.round;
  $("nextTitle").textContent = nextRound ? word("boardNextRound", { n: nextRound })
    : word("boardNext");
  $("next").replaceChildren(...(nextRound ? board.next.matches.map((m) =>
    el("li", "", `${word("table", { name: m.table })}: ${m.sides}`)) :
    [el("li", "", word("boardNoNext"))]));
  $("pending").replaceChildren(...board.pending.map((p) => {
    const line = el("div", "", `${word("table", { name: p.table })} ${p.match} ${p.sides}` +
      ` ${p.score} — ${word("boardWaits", { why: p.why })}`);
    if (token) {
      const yes = el("button", "", word("boardAccept"));
      const no = el("button", "", word("boardRefuse"));
      yes.onclick = () => act("accept", { id: p.id });
      no.onclick = () => act("refuse", { id: p.id });
      line.append(yes, no);
    }
    return line;
  }));
  $("director").hidden = !token || !nextRound;
}
$("call").onclick = () => nextRound && act("round", { round: nextRound });
async function refresh() {
  try {
    const answer = await fetch("/api/board", { cache: "no-store" });
    if (!answer.ok) throw new Error(answer.status);
    show(await answer.json());
    $("offline").hidden = true;
  } catch (e) {
    $("offline").hidden = false;  // the last board stays up
  }
}
refresh();
setInterval(refresh, 1000);
