// The live status from the box, and the clocks drawn from it.
//
// The box pushes its status on every change and at least once a second. Between pushes a
// running clock is drawn from the last status and performance.now() (the browser's monotonic
// clock): it never drifts (every push re-anchors it), never jumps backwards, and never shows a
// second the box has not reached (while running, a shown value never goes up again unless the
// box corrected its clock: added time, a correction, a new period). The words, the clock's
// text and the parts' names are common.js's (TK.say, TK.clockText, TK.partName), loaded first.
"use strict";

Object.assign(TK, (() => {
  const { say, clockText, partName, el } = TK;
  const OFFLINE_AFTER = 2500; // ms without a message (the box sends one at least every 1 s)
  const RETRY = 1000;

  class Model {
    constructor() {
      this.status = null;
      this.at = 0; // performance.now() when the status arrived
      this.lastShown = null; // the running game clock's last shown value
    }

    update(status) {
      const now = performance.now();
      const prev = this.status;
      const expected = prev ? this.gameClock(now, false) : null;
      this.status = status;
      this.at = now;
      const corrected = !prev || prev.state !== status.state || prev.period !== status.period ||
        prev.part !== status.part || prev.added !== status.added || expected === null ||
        status.remaining === null || status.remaining - expected > 0.25;
      if (corrected) this.lastShown = null;
    }

    elapsed(now) {
      return Math.max(0, (now - this.at) / 1000);
    }

    running() {
      return this.status && this.status.state === "running";
    }

    // The period's time left as shown now (or null when untimed / none).
    gameClock(now = performance.now(), remember = true) {
      const s = this.status;
      if (!s || s.remaining === null) return null;
      let value = s.remaining;
      if (s.state === "running") {
        value = Math.max(0, value - this.elapsed(now));
        if (this.lastShown !== null) value = Math.min(value, this.lastShown);
        if (remember) this.lastShown = value;
      }
      return value;
    }

    playTime(now = performance.now()) {
      const s = this.status;
      if (!s) return 0;
      return s.play_time + (s.state === "running" ? this.elapsed(now) : 0);
    }

    // pre-start, break and shot countdowns run whatever the game clock does
    countdown(now = performance.now()) {
      const s = this.status;
      if (!s || s.countdown === null) return null;
      return Math.max(0, s.countdown - this.elapsed(now));
    }

    timeout(now = performance.now()) {
      const s = this.status;
      if (!s || s.timeout_countdown === null) return null;
      return Math.max(0, s.timeout_countdown - this.elapsed(now));
    }

    penaltyLeft(penalty, now = performance.now()) {
      if (penalty.remaining === null) return null;
      const counting = this.running() && penalty.state === "running";
      return Math.max(0, penalty.remaining - (counting ? this.elapsed(now) : 0));
    }
  }

  // The connection: reconnects by itself; says offline when the box goes quiet.
  class Live {
    constructor({ onStatus, onOnline, onAuth, onEnded, token }) {
      this.model = new Model();
      this.onStatus = onStatus || (() => {});
      this.onOnline = onOnline || (() => {});
      this.onAuth = onAuth || (() => {});
      this.onEnded = onEnded || (() => {});
      this.token = token || null;
      this.online = false;
      this.heard = 0;
      this.ws = null;
      this.connect();
      setInterval(() => this.watch(), 250);
    }

    connect() {
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const ws = new WebSocket(`${scheme}://${location.host}/api/live`);
      this.ws = ws;
      this.heard = performance.now();
      ws.onopen = () => {
        if (this.token) ws.send(JSON.stringify({ token: this.token }));
      };
      ws.onmessage = (event) => {
        if (ws !== this.ws) return;
        let msg;
        try { msg = JSON.parse(event.data); } catch { return; }
        this.heard = performance.now();
        if (msg.type === "auth") { this.onAuth(msg.ok); return; }
        if (!msg.status) return;
        this.model.update(msg.status);
        this.setOnline(true);
        this.onStatus(this.model.status, msg.type);
      };
      ws.onclose = (event) => {
        if (ws !== this.ws) return;
        if (event.code === 4001) this.onEnded(event.reason);
        this.setOnline(false);
        setTimeout(() => { if (ws === this.ws) this.connect(); }, RETRY);
      };
    }

    watch() {
      if (performance.now() - this.heard > OFFLINE_AFTER && this.ws) {
        this.setOnline(false);
        const old = this.ws;
        this.ws = null;
        try { old.close(); } catch { /* already gone */ }
        this.connect();
      }
    }

    setOnline(online) {
      if (!online && this.online) this.silence = performance.now() - this.heard; // for tests
      if (online !== this.online) {
        this.online = online;
        this.onOnline(online);
      }
    }

    setToken(token) {
      this.token = token;
      if (this.ws && this.ws.readyState === WebSocket.OPEN && token) {
        this.ws.send(JSON.stringify({ token }));
      }
    }
  }

  // What the state says, plainly, for a hall.
  function stateWord(s) {
    if (!s) return "";
    const overtime = s.period > s.periods && s.part !== "shoot-out";
    switch (s.state) {
      case "idle": return say("ready");
      case "prestart": return say("getReady");
      case "running": return s.sudden_death ? say("suddenDeath") : overtime ? say("overtime") : "";
      case "stopped": return overtime ? say("overtimeStopped") : say("stopped");
      case "break": return say("breakWord");
      case "waiting": return say("periodOver");
      case "shootout": case "shot": return say("shootout");
      case "finished": return say("final");
      default: return s.state.toUpperCase();
    }
  }

  function partText(s) {
    if (!s || !s.part) return s ? s.title : "";
    if (s.part === "shoot-out") {
      return s.series ? say("shootoutSeries", { n: s.series }) : say("shootoutPart");
    }
    return partName(s.part);
  }

  // The shoot-out's attempts per side, and whose turn is next (null: not known yet).
  function shootout(s) {
    const attempts = s.shootout_attempts || [];
    const per = { home: [], away: [] };
    for (const a of attempts) per[a.team].push(!!a.goal);
    const last = attempts.length ? attempts[attempts.length - 1].team : null;
    const next = last ? (last === "home" ? "away" : "home") : null;
    const goals = (t) => per[t].filter(Boolean).length;
    return { per, next, goals: { home: goals("home"), away: goals("away") },
      any: attempts.length > 0 };
  }

  // One penalty as both pages list it: who, what, the time left (kept current by the page's
  // tick through data-team/data-id) and whether it waits. The time is drawn at once, so a
  // new item never shows a blank until the next tick.
  const KINDS = { minor: "kindMinor", major: "kindMajor", personal: "kindPersonal",
    game: "kindGame", match: "kindMatch" };

  function penaltyItem(p, team, model) {
    const item = el("li", `penalty ${p.state}`);
    item.append(el("span", "who", p.player ? `#${p.player}` : `(${p.id})`));
    item.append(el("span", "kind", p.kinds.split("+").map((k) => say(KINDS[k] || k)).join("+")));
    const left = el("span", "left", p.state === "game" ? say("game")
      : clockText(model.penaltyLeft(p)));
    left.dataset.id = p.id;
    left.dataset.team = team;
    item.append(left);
    if (p.state === "waiting") item.append(el("span", "tag", say("waiting")));
    return item;
  }

  return { Live, Model, stateWord, partText, shootout, penaltyItem };
})());
