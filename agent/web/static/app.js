// The devicectl page: everything it shows comes from one event stream (GET /web/events), a
// snapshot first and then each change; what is typed goes to POST /web/say (a turn) or POST
// /web/announce (the device says it). The reminders are read from GET /web/reminders: every few
// seconds, at once after a tool call or a cancel, and just after the soonest is due. Text from
// the server is only ever set as textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { devices: new Map(), turns: new Map(), showThoughts: false, source: null, reminders: false };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function setLink(text) { $("link").textContent = text; }

// --- devices -------------------------------------------------------------------------------

function fmtUptime(s) {
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
  const parts = [];
  if (d) parts.push(d + "d");
  if (d || h) parts.push(h + "h");
  if (d || h || m) parts.push(m + "m");
  parts.push((s % 60) + "s");
  return parts.join(" ");
}

function deviceCard(mac) {
  const li = el("li", "device");
  li.dataset.mac = mac;
  li.append(el("h3", "", mac));
  const img = el("img", "face");
  img.width = 256; img.height = 128;
  li.append(img);
  const dl = el("dl");
  const row = (label, dd) => { dl.append(el("dt", "", label), dd); return dd; };
  row("Connection", el("dd", "conn"));
  const vol = el("dd", "vol");
  const meter = el("meter");
  meter.min = 0; meter.max = 100;
  meter.setAttribute("aria-label", "volume of " + mac);
  vol.append(meter, " ", el("span", "volume"));
  row("Volume", vol);
  const up = row("Uptime", el("dd", "uptime"));
  up.dataset.vary = "uptime";
  li.append(dl);
  const rem = el("div", "reminders");
  rem.hidden = !state.reminders;
  rem.append(el("h4", "", "Reminders"), el("p", "none", "None to come."), el("ul"), el("p", "rem-error"));
  rem.querySelector(".rem-error").setAttribute("role", "alert");
  li.append(rem);
  return li;
}

function showDevice(d) {
  const old = state.devices.get(d.mac);
  d.receivedAt = performance.now();
  state.devices.set(d.mac, d);
  const list = $("device-list");
  let li = list.querySelector(`li[data-mac="${CSS.escape(d.mac)}"]`);
  if (!li) {
    li = deviceCard(d.mac);
    const after = [...list.children].find((c) => c.dataset.mac > d.mac);
    list.insertBefore(li, after || null);
  }
  li.classList.toggle("offline", !d.connected);
  const expr = d.expression || "idle";
  const img = li.querySelector(".face");
  if (img.dataset.expr !== expr) {
    img.dataset.expr = expr;
    img.src = "/web/face/" + encodeURIComponent(expr) + ".png";
    img.alt = "face: " + expr;
  }
  const conn = li.querySelector(".conn");
  conn.className = "conn " + (d.connected ? "on" : "off");
  conn.textContent = d.connected ? "connected" : "disconnected" + (d.reason ? " (" + d.reason + ")" : "");
  const known = typeof d.volume === "number";
  li.querySelector(".volume").textContent = known ? String(d.volume) : "unknown";
  const meter = li.querySelector("meter");
  if (known) meter.value = d.volume;
  meter.hidden = !known;
  tickUptime(li, d);
  $("no-devices").hidden = state.devices.size > 0;
  if (!old || old.connected !== d.connected) refreshChoice();
  if (d.connected && !(old && old.connected)) loadReminders(); // a disconnection changes none
}

function tickUptime(li, d) {
  let text = "unknown";
  if (typeof d.uptime_s === "number") {
    const since = d.connected ? Math.floor((performance.now() - d.receivedAt) / 1000) : 0;
    text = fmtUptime(d.uptime_s + since);
  }
  const up = li.querySelector(".uptime");
  if (up.textContent !== text) up.textContent = text;
}

setInterval(() => {
  for (const li of $("device-list").children) {
    const d = state.devices.get(li.dataset.mac);
    if (d) tickUptime(li, d);
  }
}, 1000);

// The device box is shown only when there is a choice to make.
function refreshChoice() {
  const sel = $("device-select");
  const keep = sel.value;
  const macs = [...state.devices.values()].filter((d) => d.connected).map((d) => d.mac).sort();
  sel.replaceChildren(...macs.map((m) => { const o = el("option", "", m); o.value = m; return o; }));
  if (macs.includes(keep)) sel.value = keep;
  $("device-choice").hidden = macs.length < 2;
}

// --- reminders -----------------------------------------------------------------------------

const rem = { poll: null, soon: null, busy: false, again: false };

// startReminders follows a snapshot: it says whether the server has reminders, and how often
// to read them.
function startReminders(s) {
  state.reminders = !!s.reminders;
  clearInterval(rem.poll);
  clearTimeout(rem.soon);
  $("announce").hidden = !state.reminders;
  for (const d of document.querySelectorAll("#device-list .reminders")) d.hidden = !state.reminders;
  if (!state.reminders) return;
  rem.poll = setInterval(() => { if (!document.hidden) loadReminders(); }, Math.max(s.reminders_every_ms || 10000, 100));
  loadReminders();
}

// loadReminders reads every device's reminders; one read at a time, and one more if asked
// meanwhile.
async function loadReminders() {
  // A page whose stream is down waits for the next snapshot, rather than asking a server that
  // is away (which the browser logs as an error however the page handles it).
  if (!state.reminders || !state.source || state.source.readyState !== EventSource.OPEN) return;
  if (rem.busy) { rem.again = true; return; }
  rem.busy = true;
  try {
    const resp = await fetch("/web/reminders", { credentials: "same-origin" });
    if (resp.ok) showReminders((await resp.json()).devices);
  } catch {
    // The server is away: the event stream says so, and the next read catches up.
  } finally {
    rem.busy = false;
    if (rem.again) { rem.again = false; loadReminders(); }
  }
}

function showReminders(devices) {
  let soonest = Infinity;
  for (const d of devices) {
    const box = $("device-list").querySelector(`li[data-mac="${CSS.escape(d.mac)}"] .reminders`);
    if (!box) continue;
    box.querySelector(".rem-error").textContent = d.error || "";
    const items = d.reminders.map((r) => {
      soonest = Math.min(soonest, Date.parse(r.due));
      return reminderItem(d.mac, r);
    });
    if (d.more) items.push(el("li", "more", "and " + d.more + " more"));
    box.querySelector("ul").replaceChildren(...items);
    box.querySelector(".none").hidden = items.length > 0;
  }
  // A one-off leaves the list once said: read again just after the soonest is due. One past
  // due already (its device is away) waits for the regular reads.
  clearTimeout(rem.soon);
  const wait = soonest - Date.now() + 1500;
  if (wait > 0 && wait < 24 * 3600 * 1000) rem.soon = setTimeout(loadReminders, Math.max(wait, 1000));
}

function reminderItem(mac, r) {
  const li = el("li", r.timer ? "timer" : "");
  li.dataset.id = r.id;
  const what = r.timer ? "Timer" + (r.text ? ": " + r.text : "") : r.text;
  li.append(el("span", "what", what));
  const when = el("span", "when", r.when + " · " + (r.every || "once"));
  when.dataset.vary = "when";
  li.append(when);
  const b = el("button", "cancel", "Cancel");
  b.type = "button";
  b.setAttribute("aria-label", "Cancel " + (r.timer ? "the timer" : "the reminder " + r.text) + " at " + r.when);
  b.addEventListener("click", () => cancelReminder(mac, r.id, b));
  li.append(b);
  return li;
}

async function cancelReminder(mac, id, button) {
  button.disabled = true;
  const box = $("device-list").querySelector(`li[data-mac="${CSS.escape(mac)}"] .reminders`);
  try {
    const resp = await fetch("/web/reminders/" + encodeURIComponent(id) + "/cancel", { method: "POST", credentials: "same-origin" });
    if (!resp.ok && box) box.querySelector(".rem-error").textContent = (await resp.text()).trim();
  } catch (err) {
    if (box) box.querySelector(".rem-error").textContent = String(err);
  }
  button.disabled = false;
  loadReminders();
}

// --- conversation --------------------------------------------------------------------------

function showTurn(t) {
  state.turns.set(t.id, t);
  const list = $("transcript");
  let you = list.querySelector(`li.you[data-turn="${t.id}"]`);
  if (!you) {
    // A turn a device started: what its microphone heard (or its person typed on it).
    const said = t.source ? t.mac + (t.source === "voice" ? " heard: " : " said: ") + t.text : t.text;
    you = el("li", "you", said);
    you.dataset.turn = t.id;
    const reply = el("li", "reply pending");
    reply.dataset.turn = t.id;
    reply.append(el("span", "thought"), el("span", "text"));
    reply.querySelector(".thought").hidden = true;
    list.append(you, reply);
  }
  renderReply(t);
}

function renderReply(t) {
  const reply = $("transcript").querySelector(`li.reply[data-turn="${t.id}"]`);
  if (!reply) return;
  const th = reply.querySelector(".thought");
  th.textContent = t.thought || "";
  th.hidden = !(state.showThoughts && t.thought);
  reply.querySelector(".text").textContent = t.error ? "error: " + t.error : t.reply;
  reply.classList.toggle("pending", !t.done);
  reply.classList.toggle("failed", !!t.error);
  reply.setAttribute("aria-busy", t.done ? "false" : "true");
  const list = $("transcript");
  list.scrollTop = list.scrollHeight;
}

function addText(ev, field) {
  const t = state.turns.get(ev.id);
  if (!t) return;
  t[field] = (t[field] || "") + ev.text;
  renderReply(t);
}

// --- tool log ------------------------------------------------------------------------------

function showCall(c) {
  const li = el("li", c.error ? "failed" : "");
  li.dataset.call = c.id;
  const head = el("div", "head");
  head.append(el("span", "name", c.tool));
  const ms = el("span", "ms", c.ms.toFixed(1) + " ms");
  ms.dataset.vary = "duration";
  head.append(ms);
  li.append(head);
  li.append(el("span", "where", c.where === "server" ? "server tool" : "on " + c.mac));
  if (c.where === "server") loadReminders(); // set_reminder, cancel_reminder, ...
  li.append(el("code", "input", "in: " + (c.input ? JSON.stringify(c.input) : "{}")));
  if (c.error) li.append(el("code", "err", "error: " + c.error));
  else li.append(el("code", "result", "out: " + JSON.stringify(c.result)));
  const log = $("log");
  log.prepend(li); // newest first
  while (log.children.length > 100) log.lastElementChild.remove();
  $("no-calls").hidden = true;
}

// --- the stream ----------------------------------------------------------------------------

function on(src, name, f) {
  src.addEventListener(name, (e) => f(JSON.parse(e.data)));
}

function connect() {
  if (state.source) state.source.close();
  const src = new EventSource("/web/events");
  state.source = src;
  on(src, "snapshot", (s) => {
    state.showThoughts = s.show_thoughts;
    state.reminders = !!s.reminders;
    state.devices.clear(); state.turns.clear();
    $("device-list").replaceChildren();
    $("transcript").replaceChildren();
    $("log").replaceChildren();
    $("no-calls").hidden = s.calls.length > 0;
    s.devices.forEach(showDevice);
    s.turns.forEach(showTurn);
    s.calls.forEach(showCall);
    $("no-devices").hidden = s.devices.length > 0;
    refreshChoice();
    startReminders(s);
    setLink("live");
    document.body.dataset.ready = "true";
  });
  on(src, "device", showDevice);
  on(src, "call", showCall);
  on(src, "turn", showTurn);
  on(src, "chunk", (e) => addText(e, "reply"));
  on(src, "thought", (e) => addText(e, "thought"));
  on(src, "end", showTurn);
  // EventSource reconnects by itself; the next snapshot brings the page up to date. It gives up
  // for good on an answer other than 200 (a session the server no longer knows, after the token
  // changed): then the page asks again whether it may listen, and shows the login if not.
  src.onerror = () => {
    setLink("reconnecting…");
    if (src.readyState === EventSource.CLOSED) setTimeout(recover, 2000);
  };
}

async function recover() {
  try {
    const probe = await fetch("/web/session", { credentials: "same-origin" });
    if ((await probe.json()).authorized) connect(); else location.reload();
  } catch {
    setTimeout(recover, 2000); // the server is down: try again
  }
}

async function say(ev) {
  ev.preventDefault();
  const input = $("say-text");
  const text = input.value.trim();
  if (!text) return;
  const choice = $("device-choice").hidden ? "" : $("device-select").value;
  $("say-error").textContent = "";
  $("say-status").textContent = "";
  // Send starts a turn with the agent; Announce has the device say the text as it is.
  const announce = ev.submitter && ev.submitter.id === "announce";
  const resp = await fetch(announce ? "/web/announce" : "/web/say", {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ text, mac: choice }),
  });
  if (resp.ok) {
    input.value = "";
    if (announce) $("say-status").textContent = "Said on " + (await resp.json()).said.join(", ") + ".";
  } else {
    $("say-error").textContent = (await resp.text()).trim();
  }
  input.focus();
}

// login trades the token for the session cookie; the token is not kept by the page.
async function login(token) {
  const resp = await fetch("/web/session", { method: "POST", credentials: "same-origin", headers: { Authorization: "Bearer " + token } });
  return resp.ok;
}

// The sections show what only an authorized page can read: a locked page hides them and asks
// for the token, rather than looking empty with a box that cannot send.
function showSections(on) {
  for (const id of ["devices", "talk", "tools"]) $(id).hidden = !on;
}

async function start() {
  $("say").addEventListener("submit", (e) => { say(e).catch((err) => { $("say-error").textContent = String(err); }); });
  // A link may carry the token in its fragment (never sent to the server by the browser):
  // trade it for the cookie and drop it from the address bar.
  const m = location.hash.match(/^#token=(.+)$/);
  if (m) {
    history.replaceState(null, "", location.pathname + location.search);
    await login(decodeURIComponent(m[1]));
  }
  const probe = await fetch("/web/session", { credentials: "same-origin" });
  if (!(await probe.json()).authorized) {
    setLink("locked");
    document.body.dataset.locked = "true";
    showSections(false);
    const form = $("login");
    form.hidden = false;
    $("token").focus();
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (await login($("token").value)) {
        $("token").value = "";
        form.hidden = true;
        delete document.body.dataset.locked;
        showSections(true);
        connect();
        $("say-text").focus();
      } else {
        $("login-error").textContent = "That token is not the one in agent.token_file.";
      }
    });
    return;
  }
  showSections(true);
  connect();
}

start().catch((err) => setLink("error: " + err));
