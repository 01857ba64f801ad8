// The operator page: every button is one command to the box, answered as `ctl` answers it.
// The token comes from the link `timekeeper ctl link` prints (#token=…); it is kept in this
// browser's storage and sent in a header, never in a cookie.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const KEY = "timekeeper-token";
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

  function note(text, kind) {
    const box = $("note");
    box.textContent = text;
    box.className = `note ${kind || ""}`;
  }

  function noToken(why) {
    token = null;
    localStorage.removeItem(KEY);
    note(`${why}: open the link that \`timekeeper ctl link\` prints (or scan its QR code)`, "auth");
  }

  const live = new TK.Live({
    token,
    onStatus: (s) => draw(s),
    onOnline: (online) => { $("offline").hidden = online; },
    onAuth: (ok) => { if (!ok && token) noToken("this link is no longer valid"); },
    onEnded: () => noToken("the operator link was renewed"),
  });
  if (!token) noToken("no operator token");
  else note("ready");
  window.addEventListener("hashchange", () => {
    token = tokenFromLink();
    if (token) { live.setToken(token); note("ready"); }
  });

  async function send(command, args = []) {
    if (!token) { noToken("no operator token"); return; }
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
      if (response.status === 401) { noToken("not accepted"); return; }
      if (!answer.ok) { note(`${command} refused: ${answer.error}`, "refused"); return; }
    } catch (err) {
      note(`${command}: the box did not answer (${err.message})`, "refused");
      return;
    }
    note(`${[command, ...args].join(" ")}: done`, "done");
    live.model.update(answer.status);
    draw(answer.status);
  }

  function words(text) {
    const [command, ...args] = text.split(" ");
    return [command, args];
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    const d = button.dataset;
    const player = $("player").value.trim();
    if (d.cmd === "minus") send("add", [String(-addStep)]);
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
    } else if (d.kind) { kinds.push(d.kind); $("pen-kinds").textContent = kinds.join("+"); }
    else if (button.id === "pen-clear") { kinds = []; $("pen-kinds").textContent = "—"; }
    else if (button.id === "pen-send") {
      if (!kinds.length) { note("choose the penalty first (minor, major, …)", "refused"); return; }
      send("penalty", player ? [penTeam, kinds.join("+"), player] : [penTeam, kinds.join("+")]);
      kinds = []; $("pen-kinds").textContent = "—"; $("player").value = "";
    } else if (button.id === "set") send("set", [$("set-time").value.trim()]);
  });

  function confirmThen(button, command) {
    // a second tap within 3 s confirms (a dialog would block the page and its clock)
    if (button.classList.contains("armed")) {
      button.classList.remove("armed");
      button.textContent = "RESET…";
      send(command);
      return;
    }
    button.classList.add("armed");
    button.textContent = "TAP AGAIN TO RESET";
    setTimeout(() => { button.classList.remove("armed"); button.textContent = "RESET…"; }, 3000);
  }

  function draw(s) {
    if (s.add_step) addStep = s.add_step;
    $("plus").textContent = `+ ${addStep} s`;
    $("minus").textContent = `− ${addStep} s`;
    $("state").textContent = TK.stateWord(s);
    $("part").textContent = TK.partText(s);
    $("scoreline").textContent = s.score ? `${s.score.home}:${s.score.away}` : "0:0";
    $("hockey").hidden = !s.teams;
    $("mute").textContent = s.muted ? "SOUND IS OFF · TAP TO UNMUTE" : "MUTE SOUND";
    $("mute").classList.toggle("on", !!s.muted);
    keepAwake(["prestart", "running", "stopped", "break", "waiting", "shootout", "shot"]
      .includes(s.state));
  }

  function tick() {
    const m = live.model;
    const s = m.status;
    if (!s) return;
    let text = "--:--";
    if (["prestart", "break", "shot"].includes(s.state)) text = TK.clockText(m.countdown());
    else if (s.remaining !== null) text = TK.clockText(m.gameClock());
    if ($("clock").textContent !== text) $("clock").textContent = text;
  }
  setInterval(tick, 100);

  async function keepAwake(wanted) {
    const say = (text) => { $("awake").textContent = text; };
    if (!("wakeLock" in navigator)) {
      say(window.isSecureContext
        ? "This browser cannot keep the screen awake: set the phone's screen timeout longer."
        : "The phone's screen may sleep: browsers keep it awake only for https or localhost " +
          "pages. Set the screen timeout longer for the match.");
      return;
    }
    if (wanted && !wakeLock) {
      try {
        wakeLock = await navigator.wakeLock.request("screen");
        wakeLock.addEventListener("release", () => { wakeLock = null; });
        say("The screen stays awake while a match runs.");
      } catch (err) {
        say(`The screen may sleep (${err.message}): set the screen timeout longer.`);
      }
    } else if (!wanted && wakeLock) {
      wakeLock.release();
      wakeLock = null;
      say("");
    }
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && live.model.status) draw(live.model.status);
  });
})();
