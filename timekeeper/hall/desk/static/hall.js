"use strict";
// The desk's overview (hall.html). Its words come from the script before common.js
// (lang/XX.json's `hall` and `parts`, in the desk's language or the page's ?lang=xx); the
// words, the clock's text and the parts' names are common.js's, as on the box's pages.
const { say: word, clockText: clock, partName } = TK;
TK.fill();
const token = new URLSearchParams(location.hash.slice(1)).get("token");
if (token) { document.getElementById("desk").hidden = false; history.replaceState(null, "", "/hall" + location.search); }
let last = null, lastAt = 0;

// One table's tile; a status the page cannot read marks its own tile BAD, never the grid.
function tile(name, t, now) {
  try {
    if (t.bad) throw new Error(t.bad);
    return goodTile(name, t, now);
  } catch (e) {
    const div = document.createElement("div");
    div.className = "table bad";
    div.innerHTML = `<div class="head"><span class="name"></span><span class="state"></span></div><div class="why"></div>`;
    div.querySelector(".state").textContent = word("bad");
    div.querySelector(".name").textContent = word("table", { name });
    div.querySelector(".why").textContent = String(e.message || e).slice(0, 200);
    return div;
  }
}

function text(value, what) {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw new Error(what + " is not text");
  return value;
}

function goodTile(name, t, now) {
  const div = document.createElement("div");
  if (!t || typeof t !== "object") throw new Error("not a status");
  const s = t.status || {};
  if (typeof s !== "object") throw new Error("status is not an object");
  let state = text(s.state, "state") || "idle", label = state in WORDS ? word(state) : state.toUpperCase();
  div.className = "table " + state;
  if (!t.online) { div.className = "table offline-t"; label = word("offline"); }
  else if (!t.synced) { div.className += " notsynced"; label = word("notSynced"); }
  if (t.online && t.in_step === false && !["idle", "finished"].includes(state)) div.className += " offstep";
  // the pre-start, break and shot count down on their own; the game clock while it runs
  const counting = ["prestart", "break", "shot"].includes(state);
  let left = counting ? s.countdown : s.remaining;
  if (t.online && (state === "running" || counting) && left !== null && left !== undefined && t.sent)
    left = Math.max(0, left - Math.max(0, now - t.sent));  // the desk's clock is the hall's
  const score = s.score || { home: 0, away: 0 };
  if (typeof score !== "object" || ![score.home, score.away].every(Number.isFinite))
    throw new Error("score is not numbers");
  if (left !== null && left !== undefined && !Number.isFinite(left)) throw new Error("clock is not a number");
  const why = t.online ? (t.synced ? text(t.error, "error") : text(t.sync, "sync")) : "";
  const pending = Array.isArray(s.scheduled) ? s.scheduled : [];
  div.innerHTML = `<div class="head"><span class="name"></span><span class="state"></span></div><div class="clock"></div>
    <div class="score"></div><div class="part"></div><div class="series"></div><div class="pending"></div><div class="why"></div>`;
  div.querySelector(".state").textContent = label;
  div.querySelector(".name").textContent = word("table", { name });
  div.querySelector(".clock").textContent = t.online ? clock(left) : "";
  // (no score: a result the public may not see yet, `public:` in the tournament file)
  div.querySelector(".score").textContent = t.online && s.score ? `${score.home}:${score.away}` : "";
  div.querySelector(".part").textContent = partName(text(s.part, "part"));
  div.querySelector(".series").textContent = t.online ? TK.seriesText(s) : "";
  div.querySelector(".pending").textContent = t.online ? pending.map(w =>
    word("pending", { command: text(w.command, "scheduled"), seconds: Math.round(w.in) })).join(" · ") : "";
  if (div.classList.contains("offstep")) {
    const note = document.createElement("span");
    note.className = "offstep-note";
    note.textContent = word("offStep");
    div.querySelector(".part").append(note);
  }
  div.querySelector(".why").textContent = why;
  return div;
}

function draw() {
  if (!last) return;
  const now = last.now + (performance.now() - lastAt) / 1000;
  const grid = document.getElementById("grid");
  const names = Object.keys(last.tables).sort((a, b) =>
    (isNaN(a) || isNaN(b)) ? a.localeCompare(b) : a - b);
  grid.replaceChildren(...names.map(n => tile(n, last.tables[n], now)));
  const online = names.filter(n => last.tables[n].online === true).length;
  const lost = last.on_bus === false ? word("busLost") : "";
  const warnings = [lost, ...(Array.isArray(last.warnings) ? last.warnings : [])].join(" ").trim();
  document.getElementById("warnings").textContent = warnings;
  document.getElementById("warnings").hidden = !warnings;
  document.getElementById("title").textContent = word("hall", { name: last.hall });
  document.getElementById("counts").textContent =
    word("counts", { tables: names.length, online });
}

async function poll() {
  try {
    const r = await fetch("/api/hall", { cache: "no-store",
      headers: token ? { "Authorization": "Bearer " + token } : {} });
    if (!r.ok) throw new Error(r.status);
    last = await r.json(); lastAt = performance.now();
    document.getElementById("offline").hidden = true;
    draw();  // (at once: the first tiles need not wait for the next redraw)
  } catch (e) { document.getElementById("offline").hidden = false; }
}

document.querySelectorAll(".desk button").forEach(b => b.addEventListener("click", async () => {
  const body = { command: b.dataset.command };
  if (["start", "resume", "next"].includes(body.command)) body.in = document.getElementById("lead").value;
  if (body.command === "start" && document.getElementById("profile").value)
    body.profile = document.getElementById("profile").value;
  if (b.dataset.seconds) body.seconds = Number(b.dataset.seconds);
  if (body.command === "reset" && !confirm(word("confirmReset"))) return;
  if (body.command === "stop" && !confirm(word("confirmStop"))) return;
  const answer = document.getElementById("answer");
  answer.textContent = word("sending", { command: body.command });
  try {
    const r = await fetch("/api/hall/command", { method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "Authorization": "Bearer " + token } });
    const a = await r.json();
    answer.textContent = a.ok ? Object.entries(a.answers).map(([t, x]) =>
      word("answerLine", { table: t,
        answer: x.ok ? word("ok") : word("refusedOne", { error: x.error }) })).join("\n") ||
      word("noTable") : word("refused", { error: a.error });
  } catch (e) { answer.textContent = word("noAnswer"); }
}));

poll(); setInterval(poll, 1000); setInterval(draw, 200);
