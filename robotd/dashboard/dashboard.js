// The robot daemon's dashboard: plain DOM code over the daemon's documented REST API
// (docs/robot-api.md), no build step. Requests are same-origin with the browser's credentials:
// the login cookie (HttpOnly: no script reads it) or the daemon's trust in its own user. The page
// never holds the API token: a refused request sends the browser to /login.
"use strict";

const $ = (id) => document.getElementById(id);
localStorage.removeItem("robotDaemonToken"); // where pages of earlier daemons kept it
// Until the daemon has answered, the page says "loading…": "No app installed yet" or "none" beside
// a running app (its status came first) were falsehoods of the first paint.
let installed = [];
let appsLoaded = false; // /api/apps/list has answered once
let current = null;
let updates = {}; // app name -> the check-updates entry of an app whose source moved on
let updatesChecked = false; // a check has run: apps not in updates are up to date
let online = true;

// unreachable is the error of a request that got no answer: the daemon is down or restarting.
class Unreachable extends Error {}

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, opts);
  } catch (e) {
    setOnline(false);
    throw new Unreachable("The robot daemon is unreachable");
  }
  setOnline(true);
  if (resp.status === 401 && !path.startsWith("/api/apps/install-private-space")) {
    window.location.assign("/login"); // its form sets the login cookie, then comes back here
    throw new Error("This daemon needs a login");
  }
  const data = await resp.json().catch(() => null);
  if (!resp.ok) throw new Error((data && data.detail) || resp.status + " " + resp.statusText);
  return data;
}


// setOnline shows or hides the "unreachable" banner; coming back reloads everything, so that the
// page is right again after a daemon restart without a reload.
function setOnline(ok) {
  if (ok === online) return;
  online = ok;
  $("offline").hidden = ok;
  document.body.classList.toggle("offline", !ok);
  if (ok) reloadAll();
}

function showError(err) {
  if (err instanceof Unreachable) return; // the banner says it
  const el = $("action-error");
  el.textContent = err ? err.message : "";
  el.hidden = !err;
}

async function act(fn) {
  try {
    showError(null);
    await fn();
  } catch (err) {
    showError(err);
  }
  await Promise.all([refreshCurrent(), refreshApps()]).catch(() => {});
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) if (c) node.append(c);
  return node;
}

function isActive(st) {
  return !!st && ["starting", "running", "stopping"].includes(st.state);
}

// appURL is an app's own page, pointed at the host that serves this dashboard (so that
// http://0.0.0.0:8042 works from another machine); only http and https pages are linked.
function appURL(url) {
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    if (["0.0.0.0", "127.0.0.1", "localhost", "[::]", "[::1]"].includes(u.hostname)) u.hostname = location.hostname;
    return u.toString();
  } catch (e) {
    return null;
  }
}

// ---- Installed apps ----

async function refreshApps() {
  installed = await api("GET", "/api/apps/list");
  appsLoaded = true;
  renderApps();
}

let renderedApps = "";

function renderApps() {
  if (!appsLoaded) return; // index.html's "loading…" stays
  // Re-render only on change, so that buttons do not move under the pointer.
  const running = isActive(current) ? current.info.name : null;
  const busy = !!activeJob;
  const signature = JSON.stringify([installed, running, updates, updatesChecked, busy]);
  if (signature === renderedApps) return;
  renderedApps = signature;
  const list = $("apps");
  list.replaceChildren();
  if (installed.length === 0) list.append(el("li", { className: "muted", text: "No app installed yet: pick one in the app store." }));
  for (const app of installed) {
    const start = el("button", { type: "button", className: "start", text: "Start", disabled: !!running });
    start.addEventListener("click", () => act(() => api("POST", "/api/apps/start-app/" + encodeURIComponent(app.name))));
    const remove = el("button", { type: "button", className: "remove", text: "Remove", disabled: running === app.name || busy });
    remove.addEventListener("click", () => act(async () => {
      if (!window.confirm("Remove " + app.name + "?")) return;
      const job = await api("POST", "/api/apps/remove/" + encodeURIComponent(app.name));
      followJob(job.job_id, "Removing " + app.name);
    }));
    let update = null;
    if (app.extra.source) {
      // Once a check has run, Update is for apps whose source moved on; before, it is always offered.
      const upToDate = updatesChecked && !updates[app.name];
      update = el("button", { type: "button", className: "update" + (updates[app.name] ? " primary" : ""), text: "Update",
        disabled: busy || upToDate, title: upToDate ? "Up to date: nothing changed at its source" : "" });
      update.addEventListener("click", () => act(async () => {
        const job = await api("POST", "/api/apps/update/" + encodeURIComponent(app.name));
        followJob(job.job_id, "Updating " + app.name);
      }));
    }
    const badge = updates[app.name] ? el("span", { className: "badge update-available", text: "update available" }) : null;
    // The revision shows which push runs (the version stays the same across pushes).
    const revision = app.extra.revision ? el("span", { className: "revision muted", title: app.extra.revision, text: " @" + app.extra.revision.slice(0, 7) }) : null;
    list.append(el("li", { "data-app": app.name },
      el("div", { className: "app-head" }, el("strong", { text: app.name }), el("span", { className: "muted", text: " " + (app.extra.version || "") }), revision, badge),
      el("div", { className: "muted", text: app.description || "" }),
      lastUpdate(app, busy),
      el("div", { className: "actions" }, start, update, remove)));
  }
  const select = $("startup-app");
  const chosen = select.dataset.value || "";
  select.replaceChildren(el("option", { value: "", text: "none" }));
  for (const app of installed) select.append(el("option", { value: app.name, text: app.name }));
  select.value = chosen;
}

// lastUpdate shows the app's last update (a push to its space runs one in the background): when,
// to which revision, and how it ended; a failed one shows its error and a Retry button.
function lastUpdate(app, busy) {
  const u = app.extra.last_update;
  if (!u) return null;
  const when = new Date(u.finished_at || u.started_at).toLocaleString();
  const rev = u.revision ? " to " + u.revision.slice(0, 7) : "";
  if (u.status === "failed") {
    const retry = el("button", { type: "button", className: "retry", text: "Retry", disabled: busy });
    retry.addEventListener("click", () => act(async () => {
      const job = await api("POST", "/api/apps/update/" + encodeURIComponent(app.name));
      followJob(job.job_id, "Updating " + app.name);
    }));
    // Plain words, as for a failed install; pip's own output is one click away.
    const why = u.error ? plainError(u.error, [], "The installed version stays.") : "no reason given.";
    const raw = u.error ? el("details", { className: "raw-error" }, el("summary", { text: "Details" }), el("pre", { className: "log", text: u.error })) : null;
    return el("div", { className: "last-update failed" },
      el("span", { className: "error", text: "Update" + rev + " failed (" + when + "): " + why }), " ", retry, raw);
  }
  const text = u.status === "done" ? "Updated" + rev + " " + when : "Updating" + rev + " since " + when;
  return el("div", { className: "last-update muted", text });
}

async function checkUpdates(quiet) {
  // quiet: on load, the daemon's cached answer, shown without "checking…"; the button asks the sources.
  const status = $("updates-status");
  if (quiet !== true) status.textContent = "checking…";
  try {
    const res = await api("GET", "/api/apps/check-updates" + (quiet === true ? "" : "?force=true"));
    updates = {};
    updatesChecked = !(res.errors && res.errors.length);
    for (const a of res.apps_with_updates || []) if (a.update_available) updates[a.app_name] = a;
    status.textContent = res.apps_checked === 0 ? "No app installed from the hub or git to check." : updatesText();
    if (res.errors && res.errors.length) status.textContent += " (could not check: " + res.errors.map((e) => e.app_name || e).join(", ") + ")";
    renderedApps = "";
    renderApps();
  } catch (err) {
    status.textContent = "";
    if (quiet !== true) showError(err);
  }
}

function updatesText() {
  const n = Object.keys(updates).length;
  return n === 0 ? "Everything is up to date." : n + (n === 1 ? " app has" : " apps have") + " an update: " + Object.keys(updates).join(", ");
}

// ---- App store ----

let catalog = [];
let storeItems = []; // [{app, node, text}] in catalog order

async function refreshStore(fresh) {
  // fresh: the hub is asked again, not the daemon's cache (the Refresh button: an app just published).
  const all = await api("GET", "/api/apps/list-available" + (fresh === true ? "/hf_space?refresh=true" : ""));
  catalog = all.filter((a) => a.source_kind !== "installed");
  renderStore();
}

function renderStore() {
  const names = new Set(installed.map((a) => a.name));
  const list = $("store-list");
  const items = [];
  const frag = document.createDocumentFragment();
  for (const app of catalog) {
    const title = app.extra.title || app.name;
    const author = app.extra.author || "";
    const isInstalled = app.extra.installed || names.has(app.name);
    let action;
    if (isInstalled) {
      action = el("span", { className: "badge installed", text: "Installed" });
    } else {
      action = el("button", { type: "button", className: "install primary", text: "Install", disabled: !!activeJob });
      action.addEventListener("click", () => act(async () => {
        const job = await api("POST", "/api/apps/install", { url: app.url });
        followJob(job.job_id, "Installing " + title);
      }));
    }
    const node = el("li", { "data-app": app.name, className: isInstalled ? "card is-installed" : "card" },
      el("div", { className: "card-head" },
        app.extra.emoji ? el("span", { className: "emoji", text: app.extra.emoji }) : null,
        el("span", {}, el("strong", { className: "title", text: title }), el("span", { className: "author muted", text: author ? " by " + author : "" }))),
      el("p", { className: "description", text: app.description || "No description." }),
      el("div", { className: "actions" }, action));
    items.push({ app, node, text: [title, app.name, author, app.description].join(" ").toLowerCase() });
    frag.append(node);
  }
  list.replaceChildren(frag);
  storeItems = items;
  filterStore();
  performance.mark("store-rendered"); // how long the store takes to show (BenchmarkDashboardStore200)
}

// storePage is how many matching cards show before "Show more": a phone scrolls past a few
// dozen cards, not 200.
const storePage = 24;
let storeLimit = storePage;

function filterStore() {
  const words = $("store-search").value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const item of storeItems) {
    const match = words.every((w) => item.text.includes(w));
    item.node.hidden = !match || shown >= storeLimit;
    if (match) shown++;
  }
  const more = $("store-more");
  more.hidden = shown <= storeLimit;
  more.textContent = "Show more (" + (shown - storeLimit) + ")";
  const total = storeItems.length;
  $("store-count").textContent = total === 0 ? "The hub lists no app for this robot (or the daemon has no hub: --hub-url none)." :
    words.length ? shown + " of " + total + " apps match" : total + (total === 1 ? " app" : " apps") + " on the hub";
}

// ---- Jobs: install, update, remove ----

let activeJob = null; // {id, title, stream}
const jobKey = "robotDaemonJob";

// Steps of an install or update, recognised in the job's log (core/apps/install.go's messages).
const installSteps = [
  [/^(Cloning|Copying) /, "getting the app"],
  [/^Building the package/, "building the package"],
  [/^(Installing dependencies|Updating .* to the newest)/, "installing its dependencies"],
  [/^Installing .*\.whl$|^Installed /, "installing the app"],
];

function followJob(id, title) {
  if (activeJob && activeJob.stream) activeJob.stream.close();
  localStorage.setItem(jobKey, JSON.stringify({ id, title }));
  const job = { id, title, step: -1, lines: [] };
  activeJob = job;
  $("job").hidden = false;
  $("job-dismiss").hidden = true;
  $("job-cancel").hidden = false;
  $("job-cancel").disabled = false;
  $("job-h").textContent = /^Removing/.test(title) ? "Remove" : /^Updating/.test(title) ? "Update" : "Install";
  $("job-title").textContent = title;
  const log = $("job-log"), status = $("job-status"), progress = $("job-progress"), summary = $("job-summary");
  log.textContent = "";
  summary.hidden = true;
  $("job-details").open = false;
  progress.max = /^Removing/.test(title) ? 1 : installSteps.length + 1;
  progress.removeAttribute("value"); // indeterminate until the first step
  status.className = "muted";
  status.textContent = "waiting for the daemon…";
  $("job").scrollIntoView({ block: "nearest" });
  renderedApps = "";
  renderApps();
  renderStore();
  const stream = new EventSource("/api/apps/job-log/" + encodeURIComponent(id));
  job.stream = stream;
  stream.addEventListener("log", (e) => {
    job.lines.push(e.data);
    log.append(e.data + "\n");
    log.scrollTop = log.scrollHeight;
    installSteps.forEach(([re], i) => { if (i > job.step && re.test(e.data)) job.step = i; });
    if (job.step >= 0) {
      progress.value = /^Removing/.test(title) ? 0 : job.step + 1;
      status.textContent = "Step " + (job.step + 1) + " of " + installSteps.length + ": " + installSteps[job.step][1] + "…";
    } else {
      status.textContent = "in progress…";
    }
  });
  stream.addEventListener("status", (e) => {
    stream.close();
    const info = JSON.parse(e.data);
    finishJob(job, info);
  });
  stream.onerror = () => {
    if (stream.readyState !== EventSource.CLOSED || activeJob !== job) return;
    // The daemon answered with an error (the job is gone: the daemon restarted), or is down.
    api("GET", "/api/apps/job-status/" + encodeURIComponent(id)).then((info) => {
      if (info.status === "done" || info.status === "failed") finishJob(job, info);
      else followJob(id, title);
    }).catch((err) => {
      if (err instanceof Unreachable) return; // reloadAll follows it again once the daemon is back
      endJob(job);
      status.className = "error";
      status.textContent = "The daemon no longer knows this job (it restarted): look at the installed apps.";
    });
  };
}

function endJob(job) {
  if (activeJob !== job) return;
  activeJob = null;
  $("job-dismiss").hidden = false;
  $("job-cancel").hidden = true;
  localStorage.removeItem(jobKey);
  renderedApps = "";
  // list-available marks what is installed now (a removal unmarks its card).
  refreshApps().then(refreshStore).catch(showError);
}

function finishJob(job, info) {
  const status = $("job-status"), progress = $("job-progress"), summary = $("job-summary");
  progress.value = progress.max;
  if (info.status === "done") {
    status.className = "ok";
    const verb = info.command === "remove" ? "removed" : info.command === "update" ? "updated" : "installed";
    status.textContent = "Done: " + verb + " " + ((info.apps && info.apps.join(", ")) || "nothing new") + ".";
    const before = Object.keys(updates).length;
    delete updates[info.target];
    for (const a of info.apps || []) delete updates[a];
    if (Object.keys(updates).length !== before) $("updates-status").textContent = updatesText();
  } else {
    status.className = "error";
    status.textContent = "Failed.";
    summary.textContent = plainError(info.error || "", job.lines);
    summary.hidden = false;
  }
  endJob(job);
}

// plainError says in plain words why a job failed, from its error and pip's messages, followed by
// what became of the robot (after); the full log stays one click away.
function plainError(error, lines, after) {
  after = after || "Nothing was changed on the robot.";
  const text = error + "\n" + lines.join("\n");
  const unreachable = /package index (\S+) cannot be reached/.exec(text);
  let m = text.match(/No matching distribution found for ([^\s);,]+)/);
  if (m && unreachable) return "The robot cannot reach the package index (" + unreachable[1] + ") to get the Python package " + m[1] + " this app needs. " + after;
  if (m) return "This app needs the Python package " + m[1] + ", which the package index does not have (or not in a version that fits). " + after;
  if (unreachable) return "The robot cannot reach the package index (" + unreachable[1] + ") to get what this app needs. " + after;
  m = text.match(/No module named '([^']+)'/);
  if (m) return "The app needs the Python module " + m[1] + ", which is not installed on the robot. " + after;
  m = text.match(/(?:Could not|Cannot) (?:find|install) ([^\n;(]*)/);
  if (m) return "The app's Python packages could not be installed (" + m[1].trim() + "). " + after;
  if (/^ERROR: |exited with code/m.test(text)) return "Installing the app's Python packages failed. " + after + " The details say why.";
  return (error.split("\n")[0] || "The job failed.") + " " + after;
}

async function resumeJob() {
  let saved;
  try {
    saved = JSON.parse(localStorage.getItem(jobKey) || "null");
  } catch (e) {
    saved = null;
  }
  if (!saved || !saved.id) return;
  if (activeJob && activeJob.id === saved.id && activeJob.stream && activeJob.stream.readyState !== EventSource.CLOSED) return;
  try {
    await api("GET", "/api/apps/job-status/" + encodeURIComponent(saved.id));
    followJob(saved.id, saved.title || "Job " + saved.id);
  } catch (err) {
    if (!(err instanceof Unreachable)) localStorage.removeItem(jobKey); // a job of a previous daemon
  }
}

// ---- The current app and its output ----

let logStream = null;
let logRun = null; // the run whose output the log view shows: name and the first state seen
let logLines = []; // [{stream, line}] of that run

async function refreshCurrent() {
  const prev = current;
  current = await api("GET", "/api/apps/current-app-status");
  const name = $("current-name"), state = $("current-state"), link = $("current-settings");
  name.textContent = current ? current.info.name : "none";
  state.textContent = current ? current.state : "";
  state.className = "state-badge" + (current ? " state-" + current.state : "");
  const url = current && current.state === "running" && current.info.extra.custom_app_url && appURL(current.info.extra.custom_app_url);
  link.hidden = !url;
  $("app-page").hidden = !url;
  if (url) {
    link.href = url;
    $("app-page-link").href = url;
    $("app-page-link").textContent = url;
  }
  $("stop-btn").disabled = !isActive(current);
  // After a crash (or an app that ended) Restart runs it again: the slot is free, so as a start.
  $("restart-btn").disabled = !current || current.state === "stopping";
  // A new run (a start, a restart, a startup app) gets a fresh output view.
  const newRun = current && (!prev || prev.info.name !== current.info.name || (isActive(current) && !isActive(prev)) || !logRun);
  if (newRun) followAppLog();
  else if (!current && !logRun) $("app-log").replaceChildren(el("span", { className: "muted", text: "No app is running: start one to see its output here." }));
  renderCrash();
  renderApps();
}

function followAppLog() {
  if (logStream) logStream.close();
  logRun = current ? current.info.name : null;
  logLines = [];
  const log = $("app-log");
  log.replaceChildren(el("span", { className: "muted waiting", text: "Nothing written yet." }));
  const stream = new EventSource("/api/apps/current-app-logs");
  logStream = stream;
  stream.addEventListener("log", (e) => {
    const line = JSON.parse(e.data);
    if (logLines.length === 0) log.replaceChildren();
    logLines.push(line);
    if (logLines.length > 2000) logLines.shift();
    log.append(el("span", { className: line.stream, text: line.line + "\n" }));
    while (log.childNodes.length > 2000) log.firstChild.remove();
    if (log.scrollHeight - log.scrollTop - log.clientHeight < 80) log.scrollTop = log.scrollHeight;
  });
  stream.addEventListener("end", () => {
    stream.close();
    // A restart ends this run and starts the next one between two status polls.
    api("GET", "/api/apps/current-app-status").then((st) => {
      current = st;
      if (logStream === stream && isActive(st)) followAppLog();
      else renderCrash();
    }).catch(() => {});
  });
  stream.onerror = () => {
    // 204: no run to show. Otherwise the daemon went away; reloadAll opens the stream again.
    if (stream.readyState === EventSource.CLOSED) stream.close();
  };
}

// renderCrash shows why the last app ended with an error: the status's cause, then the Python
// traceback from its stderr (the status keeps only the last lines, the output view has it whole).
function renderCrash() {
  const crashed = current && current.state === "error";
  $("crash").hidden = !crashed;
  if (!crashed) return;
  const stderr = logLines.filter((l) => l.stream === "stderr").map((l) => l.line);
  const start = stderr.lastIndexOf("Traceback (most recent call last):");
  const cause = (current.error || "").split("\n")[0];
  const view = $("current-error");
  view.textContent = start >= 0 ? cause + "\n\n" + stderr.slice(start).join("\n") : current.error || "";
  view.scrollTop = view.scrollHeight; // the end of a traceback is the error: show it first
}

async function refreshStartup() {
  const s = await api("GET", "/api/apps/startup-app");
  const select = $("startup-app");
  select.dataset.value = s.startup_app || "";
  select.value = select.dataset.value;
}

// ---- The robot at a glance ----

let stateStream = null;
let lastState = null;
let drawPending = false;
const deg = (rad) => (rad * 180) / Math.PI;
// Angles come in radians; people read degrees.
const fmt = (rad) => (rad >= 0 ? " " : "") + deg(rad).toFixed(1) + "°";

function followState() {
  if (stateStream) stateStream.close();
  // 10 Hz: smooth enough for a glance, and cheap for a phone and for the daemon.
  const stream = new EventSource("/api/state/stream?frequency=10");
  stateStream = stream;
  stream.onmessage = (e) => {
    lastState = JSON.parse(e.data);
    if (!drawPending) {
      drawPending = true;
      requestAnimationFrame(drawRobot);
    }
  };
  stream.onerror = () => {
    $("robot-state").textContent = "state stream interrupted; reconnecting…";
    $("robot-state").className = "muted";
    if (stream.readyState === EventSource.CLOSED) setTimeout(() => { if (stateStream === stream) followState(); }, 1000);
  };
}

// drawRobot draws the robot seen from the front: the head moves sideways with its yaw, the eyes
// up and down with its pitch, the head tilts with its roll; the antennas turn with their joints
// (state order [right, left]; the robot's right is the viewer's left); the mark on the base shows
// the body's yaw.
// The camera and the microphones come over WebRTC: one offer to the daemon's API, its answer with
// every candidate (no trickle). The microphones' level comes on a data channel, ten times a second.
let mediaPC = null;

async function startMedia() {
  if (mediaPC) mediaPC.close();
  const pc = new RTCPeerConnection();
  mediaPC = pc;
  const retry = () => {
    if (mediaPC !== pc) return;
    mediaPC = null;
    pc.close();
    setTimeout(startMedia, 3000);
  };
  pc.addTransceiver("video", { direction: "recvonly" });
  pc.addTransceiver("audio", { direction: "recvonly" });
  const stream = new MediaStream();
  pc.ontrack = (e) => {
    stream.addTrack(e.track);
    $("camera").srcObject = stream;
  };
  const levels = pc.createDataChannel("robot");
  levels.onmessage = (e) => {
    const m = JSON.parse(e.data);
    $("mic-level").value = m.level;
    $("mic-value").textContent = m.error ? m.error : (m.level > 0 ? (20 * Math.log10(m.level)).toFixed(0) + " dB" : "silent");
  };
  pc.onconnectionstatechange = () => {
    const st = pc.connectionState;
    $("media-state").textContent = st === "connected" ? "Live" : st;
    if (st === "failed" || st === "disconnected") retry();
  };
  try {
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise((done) => {
      if (pc.iceGatheringState === "complete") return done();
      pc.addEventListener("icegatheringstatechange", () => { if (pc.iceGatheringState === "complete") done(); });
    });
    const answer = await api("POST", "/api/media/webrtc/offer", { type: "offer", sdp: pc.localDescription.sdp });
    await pc.setRemoteDescription(answer);
  } catch (e) {
    $("media-state").textContent = "No camera or sound: " + e.message;
    retry();
  }
}

const builtinSounds = ["wake_up.wav", "go_sleep.wav", "confused1.wav", "impatient1.wav", "dance1.wav"];

async function refreshSounds() {
  const uploaded = (await api("GET", "/api/media/sounds")).files;
  const sel = $("sound-select");
  sel.replaceChildren(...[...builtinSounds, ...uploaded].map((f) => el("option", { value: f }, f)));
}

function drawRobot() {
  drawPending = false;
  const s = lastState;
  if (!s) return;
  const h = s.head_pose;
  const hx = 40 * Math.sin(h.yaw), hy = -400 * (h.z || 0);
  $("svg-head").setAttribute("transform", `translate(${hx.toFixed(2)} ${hy.toFixed(2)}) rotate(${(-deg(h.roll)).toFixed(2)})`);
  $("svg-eyes").setAttribute("transform", `translate(${(12 * Math.sin(h.yaw)).toFixed(2)} ${(18 * Math.sin(h.pitch)).toFixed(2)})`);
  const [right, left] = s.antennas_position;
  // Each antenna turns about its own base on the head (its x1, y1), so that it stays on the head
  // at any angle.
  $("svg-antenna-right").setAttribute("transform", `rotate(${deg(right).toFixed(2)} -22 -28)`);
  $("svg-antenna-left").setAttribute("transform", `rotate(${(-deg(left)).toFixed(2)} 22 -28)`);
  const bx = 60 * Math.sin(Math.max(-Math.PI / 2, Math.min(Math.PI / 2, s.body_yaw)));
  $("svg-body-mark").setAttribute("transform", `translate(${bx.toFixed(2)} 0)`);
  const svg = $("robot-svg");
  svg.classList.toggle("asleep", !s.awake);
  svg.classList.toggle("motors-off", s.control_mode === "disabled");
  $("robot-state").textContent = (s.awake ? "Awake" : "Asleep") + " · motors " + s.control_mode +
    (s.move ? " · moving (" + s.move.kind.replace("_", " ") + ")" : "") + " · " + s.backend;
  $("robot-state").className = s.awake ? "ok" : "muted";
  $("robot-head").textContent = [h.yaw, h.pitch, h.roll].map(fmt).join(" ");
  $("robot-antennas").textContent = s.antennas_position.map(fmt).join(" ");
  $("robot-body").textContent = fmt(s.body_yaw);
  $("wake-btn").disabled = s.awake && !s.move;
  $("sleep-btn").disabled = !s.awake && !s.move;
}

// refreshMotors shows the motors' mode and, on the hardware, the ones that are not well.
async function refreshMotors() {
  const m = await api("GET", "/api/motors/status");
  let text = m.mode;
  if (m.health) {
    const bad = m.health.filter((h) => h.state !== "ok");
    text += bad.length === 0 ? " · all " + m.health.length + " motors answer" :
      " · " + bad.map((h) => h.name + ": " + (h.error || h.state)).join("; ");
  }
  $("robot-motors").textContent = text;
  $("robot-motors").className = m.health && m.health.some((h) => h.state !== "ok") ? "error" : "";
}

async function refreshDaemon() {
  const d = await api("GET", "/api/daemon/status");
  $("daemon-info").textContent = "version " + d.version + " · " + d.backend;
}

// The daemon's own update (/api/update): "an update is available", then the job's progress and
// its result. The job's id outlives a reload (the daemon restarts during the update), and its info
// is served by the new daemon from the update's record.
let daemonUpdateJob = sessionStorage.getItem("daemonUpdateJob");
let followingDaemonUpdate = false;

async function refreshDaemonUpdate() {
  if (daemonUpdateJob) return followDaemonUpdate();
  const a = (await api("GET", "/api/update/available")).update.robot_daemon;
  $("daemon-update").hidden = !a.is_available;
  $("daemon-update-start").hidden = !a.is_available;
  if (!a.is_available) return;
  $("daemon-update").className = "banner";
  $("daemon-update-text").textContent = "robot-daemon " + a.available_version + " is available (this robot runs " + a.current_version + ").";
  $("daemon-update-start").dataset.version = a.available_version;
}

async function startDaemonUpdate() {
  const version = $("daemon-update-start").dataset.version;
  const job = await api("POST", "/api/update/start?version=" + encodeURIComponent(version));
  daemonUpdateJob = job.job_id;
  sessionStorage.setItem("daemonUpdateJob", daemonUpdateJob);
  $("daemon-update-start").hidden = true;
  await followDaemonUpdate();
}

async function followDaemonUpdate() {
  if (followingDaemonUpdate) return;
  followingDaemonUpdate = true;
  const box = $("daemon-update"), text = $("daemon-update-text");
  box.hidden = false;
  box.className = "banner";
  try {
    for (;;) {
      let info;
      try {
        info = await api("GET", "/api/update/info?job_id=" + encodeURIComponent(daemonUpdateJob));
      } catch (err) {
        if (!(err instanceof Unreachable)) throw err;
        text.textContent = "Updating: the daemon restarts into the new release…";
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const last = info.logs.length ? info.logs[info.logs.length - 1].replace(/^\S+ /, "") : "";
      if (info.status === "done" || info.status === "failed") {
        sessionStorage.removeItem("daemonUpdateJob");
        daemonUpdateJob = null;
        if (info.status === "done") {
          text.textContent = "Updated to robot-daemon " + info.to + ".";
        } else {
          box.className = "banner error";
          text.textContent = info.result === "rolled-back"
            ? "The update to robot-daemon " + info.to + " was rolled back: " + info.error + ". " + info.from + " runs again."
            : "The update failed: " + info.error;
        }
        refreshDaemon().catch(showError);
        return;
      }
      text.textContent = "Updating to robot-daemon " + (info.to || "…") + ": " + last;
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    followingDaemonUpdate = false;
  }
}

// reloadAll (re)loads every panel and (re)opens every stream: at load, and when the daemon is
// back after being unreachable.
function reloadAll() {
  $("action-error").hidden = true;
  refreshDaemon().catch(showError);
  refreshDaemonUpdate().catch(showError);
  refreshMotors().catch(showError);
  refreshStartup().catch(showError);
  logRun = null;
  // The store does not wait for the rest: catalog entries carry extra.installed themselves.
  Promise.all([refreshCurrent().then(refreshApps), refreshStore()]).then(resumeJob).catch(showError);
  checkUpdates(true);
  followState();
}

document.addEventListener("DOMContentLoaded", () => {
  $("daemon-update-start").addEventListener("click", () => act(startDaemonUpdate));
  $("install-form").addEventListener("submit", (e) => {
    e.preventDefault();
    act(async () => {
      const url = $("install-url").value.trim();
      const job = await api("POST", "/api/apps/install", { url });
      followJob(job.job_id, "Installing " + url);
    });
  });
  $("private-form").addEventListener("submit", (e) => {
    e.preventDefault();
    act(async () => {
      const id = $("private-space").value.trim();
      const body = { space_id: id };
      const hubToken = $("private-token").value.trim();
      if (hubToken) body.token = hubToken; // sent once, kept neither here nor by the daemon
      const job = await api("POST", "/api/apps/install-private-space", body);
      $("private-token").value = "";
      followJob(job.job_id, "Installing " + id);
    });
  });
  $("store-search").addEventListener("input", () => {
    storeLimit = storePage;
    filterStore();
  });
  $("store-more").addEventListener("click", () => {
    storeLimit += 4 * storePage;
    filterStore();
  });
  $("check-updates").addEventListener("click", checkUpdates);
  $("store-refresh").addEventListener("click", () => act(() => refreshStore(true)));
  $("job-dismiss").addEventListener("click", () => { $("job").hidden = true; });
  // Cancel kills the job's step; the job-log stream then reports it failed ("cancelled on request").
  $("job-cancel").addEventListener("click", async () => {
    if (!activeJob) return;
    $("job-cancel").disabled = true;
    try {
      await api("POST", "/api/apps/cancel-job/" + encodeURIComponent(activeJob.id));
    } catch (err) {
      $("job-cancel").disabled = false;
      showError(err);
    }
  });
  $("stop-btn").addEventListener("click", () => act(() => api("POST", "/api/apps/stop-current-app")));
  $("restart-btn").addEventListener("click", () => act(() => isActive(current) ? api("POST", "/api/apps/restart-current-app") :
    api("POST", "/api/apps/start-app/" + encodeURIComponent(current.info.name))));
  $("wake-btn").addEventListener("click", () => act(() => api("POST", "/api/move/play/wake_up")));
  $("sleep-btn").addEventListener("click", () => act(() => api("POST", "/api/move/play/goto_sleep")));
  $("startup-app").addEventListener("change", (e) => act(async () => {
    const name = e.target.value || null;
    await api("PUT", "/api/apps/startup-app", { startup_app: name });
    e.target.dataset.value = name || "";
  }));
  $("play-sound").addEventListener("click", () => act(async () => {
    const file = $("sound-select").value;
    await api("POST", "/api/media/play_sound", { file });
    $("media-state").textContent = "Playing " + file;
  }));
  $("listen-btn").addEventListener("click", () => {
    const v = $("camera");
    v.muted = !v.muted;
    $("listen-btn").setAttribute("aria-pressed", String(!v.muted));
    $("listen-btn").textContent = v.muted ? "Listen" : "Mute";
  });
  startMedia();
  refreshSounds().catch(() => {});
  reloadAll();
  // The status poll is also the liveness check that drives the "unreachable" banner.
  setInterval(() => refreshCurrent().catch(() => {}), 1000);
  setInterval(() => {
    if (!online) return;
    refreshApps().catch(() => {});
    refreshMotors().catch(() => {});
  }, 5000);
});
