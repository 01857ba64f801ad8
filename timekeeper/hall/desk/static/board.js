"use strict";
// The hall's big screen (board.html). Its words come from the script before common.js
// (lang/XX.json's `hall` section, in the desk's language or the page's ?lang=xx); the words,
// the clock's text and el() are common.js's, as on the box's pages.
//
// Each answer of /api/board is laid out into pages of the screen's size: the round's tables,
// the groups, the bracket, the next round, in that order, each block going on where the one
// before it ended and onto a new page where it does not fit (a block is measured, not
// guessed). The pages turn by themselves every ?turn=SECONDS (10); the page shown stays
// shown when the next answer is drawn. Without an answer the last board stays up, marked.
const { say: word, el } = TK;
TK.fill();
const params = new URLSearchParams(location.search);
const TURN = Math.max(3, Number(params.get("turn")) || 10) * 1000;
// a group's table on the TV: place and name, played, goals, points and what decided the
// place (wins, draws and losses are the sheets' and the phones': two groups side by side)
const COLUMNS = ["", "boardPlayed", "boardGoals", "boardPoints", ""];
const CLASSES = ["player", "played", "goals", "points", "by"];  // (the same widths in every group)
const DECIDED_BY = { goal_difference: "boardByGoalDifference", goals_for: "boardByGoalsFor",
  goals_against: "boardByGoalsAgainst", head_to_head: "boardByHeadToHead",
  wins: "boardByWins", lot: "boardByLot" };
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const $ = (id) => document.getElementById(id);
let shown = 0;  // the page on screen
let pages = [];
let nextRound = null;

// the clock of a table's card: none while the match is untimed
const clock = (seconds) => (seconds === null || seconds === undefined ? ""
  : TK.clockText(Math.max(0, seconds)));

// what a table is doing, in words: a sudden-death overtime says so (not "running")
function stateWord(status) {
  if (!status) return word("offline");
  if (status.sudden_death) return word("boardSuddenDeath");
  return status.state in WORDS ? word(status.state) : status.state;
}

// a series' standing in words: "Dvořák leads 2:0", "series 1:1", "Dvořák wins the series 3:1"
function seriesState(sr, home, away) {
  const say = (key, vars) => SERIES[key].replace(/\{(\w+)\}/g, (all, n) => (n in vars ? vars[n]
    : all));
  const h = sr.home_wins, a = sr.away_wins;
  const score = `${Math.max(h, a)}:${Math.min(h, a)}`;
  if (sr.winner) return say("won", { name: sr.winner === "home" ? home : away, score });
  if (h === a) return say("level", { score: `${h}:${a}` });
  return say("leads", { name: h > a ? home : away, score });
}

// "SF2 · best of 5 · game 3": the series' first words (the game left out once it is won)
function seriesHead(sr) {
  const bestOf = SERIES.bestOf.replace("{n}", sr.best_of);
  return [sr.match, bestOf, ...(sr.winner ? [] : [SERIES.game.replace("{game}", sr.game)])]
    .join(" · ");
}

// each game's score in a row, in order ("3:1 · 1:2 (SD) · 2:0"), a game never broken apart
function gamesRow(sr, cls) {
  const row = el("div", cls);
  sr.games.forEach((g, i) => {
    if (i) row.appendChild(document.createTextNode(" · "));
    row.appendChild(el("span", "game", g.score));
  });
  return row;
}

function tableCard(t, current) {
  const status = t.status && t.status.online ? t.status.status : null;
  const p = t.pairing;
  const earlier = p && current && p.round < current;
  const sr = t.series;
  const card = el("div", "card " + (status ? status.state : "offline") +
    (earlier ? " earlier" : "") + (sr ? " series" : "") + (status && status.sudden_death
    ? " sudden" : ""));
  card.dataset.table = t.table;
  card.appendChild(el("div", "label", word("table", { name: t.table })));
  card.appendChild(el("div", "state", stateWord(status)));
  if (!p) {
    card.appendChild(el("div", "free", word("boardFree")));
    return card;
  }
  if (sr) return seriesCard(card, t, status, sr);
  // the result once it is in (its suffix: OT, SO …), else the box's live score
  const done = t.result && /^(\d+):(\d+)\s*(.*)$/.exec(t.result);
  const goals = done ? [done[1], done[2]] : status && status.score
    ? [status.score.home, status.score.away] : ["", ""];  // (none: a result kept back)
  card.appendChild(el("div", "side", p.home));
  card.appendChild(el("div", "goals", String(goals[0])));
  card.appendChild(el("div", "side", p.away));
  card.appendChild(el("div", "goals", String(goals[1])));
  card.appendChild(el("div", "label", earlier ? `${word("boardRound", { n: p.round })} · ${p.stage}`
    : `${p.stage} · ${p.match}`));
  const left = status ? (status.countdown ?? status.remaining) : null;
  card.appendChild(el("div", "clock", done ? done[3] :
    status && status.state !== "finished" ? clock(left) : ""));
  resultMark(card, t);
  return card;
}

// a game of a series on its table: the series the headline ("SF2 · best of 5 · game 3 ·
// Dvořák leads 2:0"), the game's score and clock under it, each game's score at the foot;
// once won, the last game's score stays under "Dvořák wins the series 3:1"
function seriesCard(card, t, status, sr) {
  const p = t.pairing;
  const head = el("div", "serieshead");
  head.append(el("div", "", seriesHead(sr)),
    el("div", "standing", seriesState(sr, p.home, p.away)));
  card.appendChild(head);
  const last = sr.games.length ? /^(\d+):(\d+)/.exec(sr.games[sr.games.length - 1].score) : null;
  const goals = sr.winner && last ? [last[1], last[2]]
    : status ? [status.score.home, status.score.away] : ["", ""];
  for (const [i, side] of ["home", "away"].entries()) {
    card.appendChild(el("div", "side" + (sr.winner === side ? " won" : ""),
      (sr.winner === side ? "✓ " : "") + p[side]));
    card.appendChild(el("div", "goals", String(goals[i])));
  }
  card.appendChild(gamesRow(sr, "label games"));
  const left = status ? (status.countdown ?? status.remaining) : null;
  card.appendChild(el("div", "clock", !sr.winner && status && status.state !== "finished"
    ? clock(left) : ""));
  resultMark(card, t);
  return card;
}

function resultMark(card, t) {
  if (!t.result_id) return;
  const mark = el("div", "mark", word(t.confirmed ? "boardConfirmed" : "boardUnconfirmed"));
  if (token && !t.confirmed) {
    const yes = el("button", "", word("boardConfirm"));
    yes.onclick = () => act("confirm", { id: t.result_id });
    mark.appendChild(yes);
  }
  card.appendChild(mark);
}

function decidedBy(r) {
  if (r.lot === "pending") return word("boardLotPending");
  return DECIDED_BY[r.ahead_by] ? word(DECIDED_BY[r.ahead_by]) : "";
}

// a frozen group's table says so under it: the round it stands at (the last round's results
// come later); with points hidden the groups' title says why the figures are blank
function standings(name, rows, frozen) {
  const table = el("table", "standings");
  table.appendChild(el("caption", "", word("boardGroup", { name })));
  const head = el("tr");
  COLUMNS.forEach((c, i) => head.appendChild(el("th", CLASSES[i], c ? word(c) : "")));
  table.appendChild(head);
  for (const r of rows) {
    const tr = el("tr");
    [`${r.place}. ${r.player}`, r.played, r.goals, r.points]
      .forEach((v, i) => tr.appendChild(el("td", CLASSES[i], String(v ?? ""))));  // (null: hidden)
    tr.appendChild(el("td", "by", decidedBy(r)));
    table.appendChild(tr);
  }
  const box = el("div", "group");
  box.dataset.group = name;
  box.appendChild(table);
  if (frozen) box.appendChild(el("div", "note", word("boardFrozen", { n: frozen })));
  return box;
}

// the next round's match: where, and who
function matchBox(label, sides) {
  const box = el("div", "match");
  box.appendChild(el("div", "label", label));
  box.appendChild(el("div", "sides", sides));
  return box;
}

// a play-off match: the names first, each with its figure beside it (games won in a series,
// goals in a single match), the winner marked; a series' games in a row under them
function bracketBox(m) {
  const sr = m.series;
  const box = el("div", "match" + (m.winner ? " done" : "") + (sr ? " series" : ""));
  box.dataset.match = m.id;
  const label = [m.stage, sr ? SERIES.bestOf.replace("{n}", sr.best_of)
    : word("boardRound", { n: m.round }), word("table", { name: m.table })];
  box.appendChild(el("div", "label", label.join(" · ")));
  const played = sr ? sr.games.length > 0 : m.result !== null;
  const goals = !sr && m.result ? /^(\d+):(\d+)\s*(.*)$/.exec(m.result) : null;
  for (const [i, side] of ["home", "away"].entries()) {
    const won = m.winner === side;
    const row = el("div", "pair" + (won ? " won" : ""));
    row.appendChild(el("span", "name", (won ? "✓ " : "") + TK.sideText(m[side],
      m[`${side}_from`], word("boardWinnerOf"), word("boardLoserOf"))));
    const figure = sr ? (played ? sr[`${side}_wins`] : "") : goals ? goals[i + 1] : "";
    row.appendChild(el("span", "figure", String(figure)));
    box.appendChild(row);
  }
  if (sr && sr.games.length) box.appendChild(gamesRow(sr, "games"));
  else if (goals && goals[3]) box.appendChild(el("div", "games", goals[3]));
  return box;
}

// ------------------------------------------------------------------ pages

function newPage() {
  const page = el("div", "page");
  $("pages").appendChild(page);
  return page;
}

function section(page, title, cls) {
  const head = el("h2", "", title);
  const flow = el("div", "flow " + (cls || ""));
  page.append(head, flow);
  return { head, flow };
}

const overflows = (page) => page.scrollHeight > page.clientHeight + 1 ||
  page.scrollWidth > page.clientWidth + 1;

// blocks [{title, cls, items}] onto as many pages as they need, each page full before the
// next; a block that would be split although it fits a page of its own begins a new page
function paginate(blocks) {
  $("pages").replaceChildren();
  const out = [newPage()];
  for (const block of blocks) {
    const page = out[out.length - 1];
    const started = page.children.length > 0;
    const made = place(block, page);
    if (started && made.length > 1) {  // split: try it whole on a page of its own
      made.slice(1).forEach((p) => p.remove());
      if (made.partsOnFirst) {
        [...page.children].slice(-made.partsOnFirst).forEach((n) => n.remove());
      }
      const again = place(block, newPage());
      out.push(...again);
    } else {
      out.push(...made.slice(1));
    }
  }
  return out;
}

// one block from `page` on: the pages it is on (`page` first), and how many elements it put
// on the first
function place(block, page) {
  const made = [page];
  let here = section(page, block.title, block.cls);
  made.partsOnFirst = 2;
  if (overflows(page) && page.children.length > 2) {  // not even its heading: a new page
    here.head.remove(); here.flow.remove();
    made.partsOnFirst = 0;
    page = newPage(); made.push(page);
    here = section(page, block.title, block.cls);
  }
  for (const item of block.items) {
    here.flow.appendChild(item);
    if (!overflows(page) || here.flow.children.length === 1 && page.children.length === 2) {
      continue;  // it fits (or it is alone on its page: it is shown as it is)
    }
    item.remove();
    if (!here.flow.children.length) {
      here.head.remove(); here.flow.remove();
      if (made.length === 1) made.partsOnFirst = 0;
    }
    page = newPage(); made.push(page);
    here = section(page, block.title, block.cls);
    here.flow.appendChild(item);
  }
  return made;
}

// what the pages' layout depends on: all but the clocks and the goals (whose boxes keep their
// size), so that a board whose tables only tick is laid out as it was, not measured anew
let plan = null;
let planKey = null;
const layoutKey = (board) => JSON.stringify([innerWidth, innerHeight, board.title,
  board.tables.map((t) => [t.table, t.pairing && t.pairing.id, t.result, t.result_id,
    t.confirmed, t.status && t.status.online && t.status.status.state, t.series,
    t.status && t.status.online && t.status.status.sudden_death]),
  board.groups, board.frozen, board.points_hidden, board.bracket, board.next,
  board.pending.length, board.players_url,
  (board.trouble || []).length]);

// the blocks' items onto the pages `where` says (each item's page), without measuring
function replay(blocks, where) {
  $("pages").replaceChildren();
  const out = [];
  blocks.forEach((block, b) => {
    let here = null;
    let on = -1;
    block.items.forEach((item, i) => {
      const n = where[b][i];
      while (out.length <= n) out.push(newPage());
      if (n !== on) { here = section(out[n], block.title, block.cls); on = n; }
      here.flow.appendChild(item);
    });
  });
  return out;
}

function turnTo(n) {
  shown = pages.length ? ((n % pages.length) + pages.length) % pages.length : 0;
  pages.forEach((p, i) => { p.hidden = i !== shown; });
  $("turns").hidden = pages.length < 2;
  $("pageText").textContent = word("boardPage", { n: shown + 1, of: pages.length });
  $("dots").textContent = pages.map((p, i) => (i === shown ? "●" : "○")).join("");
}

// ------------------------------------------------------------------ the board

function show(board) {
  $("title").textContent = board.title;
  const called = board.tables.map((t) => t.pairing && t.pairing.round).filter(Boolean);
  const current = called.length ? Math.max(...called) : null;
  $("roundTitle").textContent = current ? word("boardRound", { n: current })
    : word("boardTables");
  const link = `${board.players_url || location.origin}/player`;
  $("qrLink").textContent = link.replace(/^https?:\/\//, "");
  const blocks = [{ title: current ? word("boardRound", { n: current }) : word("boardTables"),
    cls: board.tables.length <= 4 ? "two" : "", items: board.tables.map((t) =>
      tableCard(t, current)) }];
  const groups = Object.entries(board.groups);
  if (groups.length) {
    const title = word("boardGroups") + (board.points_hidden
      ? ` · ${word("boardPointsHidden")}` : "");
    blocks.push({ title, items: groups.map(([g, rows]) =>
      standings(g, rows, (board.frozen || {})[g])) });
  }
  if (board.bracket.length) {
    blocks.push({ title: word("boardBracket"), items: board.bracket.map(bracketBox) });
  }
  nextRound = board.next.round;
  blocks.push({ title: nextRound ? word("boardNextRound", { n: nextRound }) : word("boardNext"),
    items: nextRound ? board.next.matches.map((m) => matchBox(word("table", { name: m.table }),
      m.sides)) : [el("div", "none", word("boardNoNext"))] });
  const key = layoutKey(board);
  if (key === planKey) {
    pages = replay(blocks, plan);
  } else {
    pages = paginate(blocks);
    plan = blocks.map((block) => block.items.map((item) => pages.indexOf(item.closest(".page"))));
    planKey = key;
  }
  turnTo(shown);
  // what keeps results from the standings (a journal broken by hand, results held): named
  const trouble = board.trouble || [];
  $("trouble").hidden = !trouble.length;
  $("trouble").textContent = trouble.join("\n");
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
  // the earlier rounds' results that wait for a look (the round's own are on its tiles)
  $("unconfirmed").replaceChildren(...(board.unconfirmed.length
    ? [el("div", "", word("boardEarlier"))] : []), ...board.unconfirmed.map((u) => {
    const line = el("div", "", `${u.match} ${u.sides} ${u.result}`);
    if (token) {
      const yes = el("button", "", word("boardConfirm"));
      yes.onclick = () => act("confirm", { id: u.id });
      line.appendChild(yes);
    }
    return line;
  }));
  $("director").hidden = !token;
  $("call").hidden = !nextRound;
}

async function act(action, body) {
  const answer = await fetch(`/api/board/${action}`, { method: "POST",
    headers: { "Authorization": `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body) });
  const data = await answer.json();
  $("answer").textContent = data.ok ? "" : data.error;
  refresh();
}
$("call").onclick = () => nextRound && act("round", { round: nextRound });
// a result typed at the board, or a correction with its reason: as `tournament result` takes it
$("correct").onsubmit = (event) => {
  event.preventDefault();
  act("result", { round: Number($("cRound").value), table: $("cTable").value.trim(),
    score: $("cScore").value.trim(), decided: $("cDecided").value,
    reason: $("cReason").value.trim() });
};

let last = null;
async function refresh() {
  try {
    // the director's board (#token=…) is the whole board; without the token, the public's
    const answer = await fetch("/api/board", { cache: "no-store",
      headers: token ? { "Authorization": `Bearer ${token}` } : {} });
    if (!answer.ok) throw new Error(answer.status);
    last = await answer.json();
    show(last);
    $("offline").hidden = true;
  } catch (e) {
    $("offline").hidden = false;  // the last board stays up
  }
}
// the tests (and a curious director at the console) turn the pages without waiting
window.tkBoard = { turn: () => turnTo(shown + 1), count: () => pages.length,
  shown: () => shown, last: () => last };
refresh();
setInterval(refresh, 1000);
setInterval(() => turnTo(shown + 1), TURN);
// a new window size: the same board laid out again (a TV that switches its mode)
window.addEventListener("resize", () => last && show(last));
