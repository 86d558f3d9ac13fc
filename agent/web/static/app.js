// The devicectl page: everything it shows comes from one event stream (GET /web/events), a
// snapshot first and then each change; what is typed goes to POST /web/say. Text from the
// server is only ever set as textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { devices: new Map(), turns: new Map(), showThoughts: false, source: null };

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
  const resp = await fetch("/web/say", {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ text, mac: choice }),
  });
  if (resp.ok) {
    input.value = "";
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
