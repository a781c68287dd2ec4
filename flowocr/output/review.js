// The review page of one flowocr run (flowocr/output/review.py writes the data this reads).
// Times are integer milliseconds as flowocr's SRT/VTT writers floor them; srtText/vttText write exactly what
// flowocr.output.writers.srt_text/vtt_text write for the same cues (tests/test_review.py holds them to it).
"use strict";
(function () {
  // Python's str.isspace() and str.splitlines() sets: a line is split and stripped as writers._lines does it.
  const WS = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  const EDGES = new RegExp("^[" + WS + "]+|[" + WS + "]+$", "g");
  const BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

  function lines(text) {
    return text.split(BREAK).map((line) => line.replace(EDGES, "")).filter((line) => line);
  }

  function pad(value, width) {
    return String(value).padStart(width, "0");
  }

  function clock(ms, sep) {
    const h = Math.floor(ms / 3600000), m = Math.floor(ms / 60000) % 60, s = Math.floor(ms / 1000) % 60;
    return pad(h, 2) + ":" + pad(m, 2) + ":" + pad(s, 2) + sep + pad(ms % 1000, 3);
  }

  function parseClock(text) {
    const m = /^\s*(\d+):(\d{1,2}):(\d{1,2})[,.](\d{1,3})\s*$/.exec(text);
    return m ? ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000 + Number(m[4].padEnd(3, "0")) : null;
  }

  // The writers' order (start, then their own order for ties: rank); a cue whose text was emptied, or that the
  // subtitle files leave out (an overlay's, written false), is left out.
  function ordered(cues) {
    return cues.filter((c) => c.written !== false && lines(c.text).length).sort((a, b) => a.startMs - b.startMs || a.rank - b.rank);
  }

  function timing(c) {
    return [c.startMs, Math.max(c.endMs, c.startMs + 1)];
  }

  function srtText(cues) {
    return ordered(cues).map((c, k) => {
      const [start, end] = timing(c);
      return `${k + 1}\n${clock(start, ",")} --> ${clock(end, ",")}\n${lines(c.text).join("\n")}\n`;
    }).join("\n");
  }

  function vttEscape(line) {
    return line.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function vttText(cues) {
    return ["WEBVTT\n", ...ordered(cues).map((c) => {
      const [start, end] = timing(c);
      return `${clock(start, ".")} --> ${clock(end, ".")}\n${lines(c.text).map(vttEscape).join("\n")}\n`;
    })].join("\n");
  }

  const api = { lines, clock, parseClock, srtText, vttText, offset: () => offset };
  window.flowocrReview = api;
  const source = document.getElementById("flowocr-data");
  if (!source) return;
  const data = JSON.parse(source.textContent);
  const frameS = data.frame_s;
  const cues = data.cues.map((c, rank) => ({
    rank, n: c.n, startMs: c.start_ms, endMs: c.end_ms, startS: c.start_s, endS: c.end_s, text: c.text,
    original: { text: c.text, startMs: c.start_ms, endMs: c.end_ms }, score: c.score, flags: c.flags,
    img: c.img, reviewed: false, written: c.written,
  }));
  api.cues = cues;
  let filter = "all", current = -1;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    for (const child of children) node.append(child);
    return node;
  }

  function edited(c) {
    return c.text !== c.original.text || c.startMs !== c.original.startMs || c.endMs !== c.original.endMs;
  }

  const filters = {
    all: () => true, unreviewed: (c) => !c.reviewed, edited,
    ...Object.fromEntries(data.flags.map((f) => [f, (c) => c.flags.includes(f)])),
  };

  const video = el("video", { controls: "", preload: "metadata", src: data.video });
  const now = el("div", { class: "now" }, "00:00:00.000");
  // Cue times count from the first frame. A player whose clock counts from the stream's zero instead shows a
  // duration of first frame + length: then its clock is offset by the first frame's time.
  let offset = 0;
  video.addEventListener("loadedmetadata", () => {
    const length = data.duration_s, first = data.first_frame_s;
    const fromZero = Math.abs(video.duration - first - length) < Math.abs(video.duration - length);
    offset = length && first > 0 && fromZero ? first : 0;
  });
  video.addEventListener("timeupdate", () => {
    const ms = Math.max(0, Math.floor((video.currentTime - offset) * 1000));
    now.textContent = clock(ms, ".");
    cues.forEach((c, k) => rows[k].row.classList.toggle("playing", c.startMs <= ms && ms < c.endMs));
  });
  const count = el("span", { class: "count" });
  const filterBar = el("span", { class: "filters" });
  const list = el("ol", { class: "cues" });
  const srtButton = el("button", { id: "download-srt" }, "Download SRT");
  const vttButton = el("button", { id: "download-vtt" }, "Download VTT");
  const keys = "j/k or ↓/↑ next/previous · Enter edit · Esc done · a accept · [ ] start, { } end ±1 frame · "
    + "p play";
  document.body.append(
    el("header", {}, el("h1", {}, data.title), count, filterBar, srtButton, vttButton,
       el("span", { class: "keys" }, keys)),
    el("main", {}, el("div", { class: "player" }, video, now), list),
  );

  function download(name, text) {
    const blob = new Blob([text], { type: "text/plain;charset=utf-8" });
    const a = el("a", { href: URL.createObjectURL(blob), download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }
  srtButton.addEventListener("click", () => download(data.stem + ".srt", srtText(cues)));
  vttButton.addEventListener("click", () => download(data.stem + ".vtt", vttText(cues)));

  function seek(c, play) {
    video.currentTime = c.startS + offset;
    if (play) video.play().catch(() => {});  // a source the browser cannot play still seeks
  }

  // Steps a time by frames from its exact position; the ms are floored as the writers floor them.
  function step(c, which, frames) {
    const seconds = Math.max(0, c[which + "S"] + frames * frameS);
    const ms = Math.floor(seconds * 1000 + 1e-6);
    if (which === "start" ? ms >= c.endMs : ms <= c.startMs) return;
    c[which + "S"] = seconds;
    c[which + "Ms"] = ms;
    if (which === "start") seek(c, false);
  }

  const rows = cues.map((c, k) => {
    const crop = c.img ? el("img", { class: "crop", src: c.img, alt: "text as read" })
                       : el("div", { class: "crop none" }, "no image");
    const timeField = (which) => {
      const input = el("input", { class: "time " + which, value: clock(c[which + "Ms"], ",") });
      input.addEventListener("change", () => {
        const ms = parseClock(input.value);
        if (ms !== null && (which === "start" ? ms < c.endMs : ms > c.startMs)) {
          c[which + "Ms"] = ms;
          c[which + "S"] = ms / 1000;
        }
        update(k);
      });
      const back = el("button", { class: "step", title: "one frame earlier" }, "−1f");
      const on = el("button", { class: "step", title: "one frame later" }, "+1f");
      back.addEventListener("click", () => { step(c, which, -1); update(k); });
      on.addEventListener("click", () => { step(c, which, 1); update(k); });
      return el("span", { class: "when" }, which + " ", input, back, on);
    };
    const flags = el("span", { class: "flags" });
    const text = el("textarea", { class: "text", rows: String(Math.max(2, lines(c.text).length)) });
    text.value = c.text;
    text.addEventListener("input", () => { c.text = text.value; update(k); });
    const row = el("li", { class: "cue", "data-n": String(c.n) }, crop,
                   el("div", { class: "meta" }, el("span", { class: "n" }, "#" + c.n), timeField("start"),
                      timeField("end"), el("span", { class: "score" }, "conf " + c.score.toFixed(2)), flags),
                   text);
    row.addEventListener("click", (event) => {
      if (event.target.closest("input, textarea, button")) { select(k, false); return; }
      select(k, false);
      seek(c, true);
    });
    return { row, flags, text, start: row.querySelector("input.start"), end: row.querySelector("input.end") };
  });
  list.append(...rows.map((r) => r.row));

  function refresh(k) {
    const c = cues[k], r = rows[k];
    r.start.value = clock(c.startMs, ",");
    r.end.value = clock(c.endMs, ",");
    const badges = c.flags.map((f) => el("span", { class: "flag " + f }, f));
    if (edited(c)) badges.push(el("span", { class: "flag edited" }, "edited"));
    if (c.reviewed) badges.push(el("span", { class: "flag ok" }, "accepted"));
    r.flags.replaceChildren(...badges);
    r.row.classList.toggle("reviewed", c.reviewed);
    r.row.classList.toggle("hidden", !filters[filter](c));
  }

  function update(k) {
    refresh(k);
    summary();
  }

  function summary() {
    count.textContent = `${cues.length} cues · ${cues.filter((c) => c.reviewed).length} accepted`;
    filterBar.replaceChildren(...Object.keys(filters).map((name) => {
      const button = el("button", { class: name === filter ? "on" : "", "data-filter": name },
                        `${name} (${cues.filter(filters[name]).length})`);
      button.addEventListener("click", () => { filter = name; cues.forEach((_, k) => refresh(k)); summary(); });
      return button;
    }));
  }

  function select(k, move) {
    if (current >= 0) rows[current].row.classList.remove("current");
    current = k;
    rows[k].row.classList.add("current");
    if (move) {
      rows[k].row.scrollIntoView({ block: "nearest" });
      seek(cues[k], false);
    }
  }

  function go(direction) {
    for (let k = current + direction; k >= 0 && k < cues.length; k += direction) {
      if (filters[filter](cues[k])) { select(k, true); return; }
    }
  }

  document.addEventListener("keydown", (event) => {
    if (event.target.matches("textarea, input")) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const c = cues[current];
    const keys = {
      j: () => go(1), ArrowDown: () => go(1), k: () => go(-1), ArrowUp: () => go(-1),
      Enter: () => c && rows[current].text.focus(),
      a: () => { if (c) { c.reviewed = !c.reviewed; update(current); go(1); } },
      p: () => (video.paused ? video.play().catch(() => {}) : video.pause()),
      "[": () => c && step(c, "start", -1), "]": () => c && step(c, "start", 1),
      "{": () => c && step(c, "end", -1), "}": () => c && step(c, "end", 1),
    };
    if (!keys[event.key]) return;
    event.preventDefault();
    keys[event.key]();
    if (c && "[]{}".includes(event.key)) update(current);
  });

  cues.forEach((_, k) => refresh(k));
  summary();
})();
