// The stream overlay: the names, the score, the clock and the part in one compact bar, over
// a transparent page (an OBS browser source). Read-only: it only listens to the box.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const live = new TK.Live({
    onStatus: (s) => draw(s),
    onOnline: (online) => document.body.classList.toggle("is-offline", !online),
  });
  const model = live.model;

  function draw(s) {
    $("ov-name-home").textContent = TK.teamName(s, "home");
    $("ov-name-away").textContent = TK.teamName(s, "away");
    const score = s.score || { home: 0, away: 0 };
    let text = `${score.home}:${score.away}`;
    const so = TK.shootout(s);
    if (s.part === "shoot-out" && so.any) text += ` (${so.goals.home}:${so.goals.away})`;
    $("ov-score").textContent = text;
    const word = TK.stateWord(s);
    const part = TK.partText(s);
    $("ov-part").textContent = s.state === "running" || !word ? part : word;
    const series = TK.seriesText(s);
    $("ov-series").textContent = series;
    $("ov-series").hidden = !series;
    document.body.dataset.state = s.state;
    tick();
  }

  function tick() {
    const s = model.status;
    if (!s) return;
    let text = "";
    if (["prestart", "break", "shot"].includes(s.state)) text = TK.clockText(model.countdown());
    else if (s.state === "idle") text = s.length ? TK.clockText(s.length) : "";
    else if (["running", "stopped", "waiting"].includes(s.state)) {
      const v = model.gameClock();
      text = v === null ? TK.elapsedText(model.playTime()) : TK.clockText(v);
    }
    if ($("ov-clock").textContent !== text) $("ov-clock").textContent = text;
    $("ov-clock").hidden = !text;
  }
  setInterval(tick, 100);
  window.tkOverlay = { clock: () => $("ov-clock").textContent };
})();
