// The robot daemon's dashboard: plain DOM code over the daemon's REST API, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
let token = localStorage.getItem("robotDaemonToken") || "";
let installed = [];
let current = null;

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (token) opts.headers.Authorization = "Bearer " + token;
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  if (resp.status === 401) {
    askToken();
    throw new Error("This daemon needs its API token");
  }
  const data = await resp.json().catch(() => null);
  if (!resp.ok) throw new Error((data && data.detail) || resp.status + " " + resp.statusText);
  return data;
}

function askToken() {
  const t = window.prompt("API token of this robot daemon");
  if (t) {
    token = t;
    localStorage.setItem("robotDaemonToken", t);
  }
}

function streamURL(path) {
  if (!token) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
}

// appURL points an app's custom_app_url at the host that serves this dashboard, so that
// http://0.0.0.0:8042 works from another machine.
function appURL(url) {
  try {
    const u = new URL(url);
    if (["0.0.0.0", "127.0.0.1", "localhost", "::"].includes(u.hostname)) u.hostname = location.hostname;
    return u.toString();
  } catch (e) {
    return null;
  }
}

function showError(err) {
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
  return st && ["starting", "running", "stopping"].includes(st.state);
}

function settingsLink(app) {
  const url = app.extra && app.extra.custom_app_url && appURL(app.extra.custom_app_url);
  if (!url) return null;
  return el("a", { className: "settings", href: url, target: "_blank", rel: "noopener", title: "Open the app's web UI", text: "⚙" });
}

async function refreshApps() {
  installed = await api("GET", "/api/apps/list");
  renderApps();
}

let renderedApps = "";

function renderApps() {
  // Re-render only on change, so that buttons do not move under the pointer.
  const signature = JSON.stringify([installed, isActive(current) ? current.info.name : null, current && current.state]);
  if (signature === renderedApps) return;
  renderedApps = signature;
  const body = $("apps");
  body.replaceChildren();
  if (installed.length === 0) {
    body.append(el("tr", {}, el("td", { colSpan: 4, className: "muted", text: "No app installed yet." })));
  }
  const running = isActive(current) ? current.info.name : null;
  for (const app of installed) {
    const start = el("button", { type: "button", className: "start", "data-app": app.name, text: "Start", disabled: !!running });
    start.addEventListener("click", () => act(() => api("POST", "/api/apps/start-app/" + encodeURIComponent(app.name))));
    const remove = el("button", { type: "button", className: "remove", "data-app": app.name, text: "Remove", disabled: running === app.name });
    remove.addEventListener("click", () => act(async () => {
      const job = await api("POST", "/api/apps/remove/" + encodeURIComponent(app.name));
      followJob(job.job_id);
    }));
    const name = el("td", {}, el("span", { text: app.name }), running === app.name ? settingsLink(app) : null);
    body.append(el("tr", { "data-app": app.name }, name,
      el("td", { text: app.extra.version || "" }), el("td", { text: app.description || "" }), el("td", {}, start, remove)));
  }
  const select = $("startup-app");
  const chosen = select.dataset.value || "";
  select.replaceChildren(el("option", { value: "", text: "none" }));
  for (const app of installed) select.append(el("option", { value: app.name, text: app.name }));
  select.value = chosen;
}

async function refreshCurrent() {
  current = await api("GET", "/api/apps/current-app-status");
  const name = $("current-name"), state = $("current-state"), errorBox = $("current-error"), link = $("current-settings");
  name.textContent = current ? current.info.name : "none";
  state.textContent = current ? current.state : "";
  state.className = "state-badge" + (current ? " state-" + current.state : "");
  errorBox.textContent = current && current.error ? current.error : "";
  errorBox.hidden = !(current && current.error);
  const url = current && current.state === "running" && current.info.extra.custom_app_url && appURL(current.info.extra.custom_app_url);
  link.hidden = !url;
  if (url) link.href = url;
  $("stop-btn").disabled = !isActive(current);
  $("restart-btn").disabled = !isActive(current);
}

async function refreshStartup() {
  const s = await api("GET", "/api/apps/startup-app");
  const select = $("startup-app");
  select.dataset.value = s.startup_app || "";
  select.value = select.dataset.value;
}

let jobStream = null;

function followJob(id) {
  if (jobStream) jobStream.close();
  const log = $("job-log"), status = $("job-status");
  log.textContent = "";
  log.hidden = false;
  status.textContent = "Job " + id + ": running";
  jobStream = new EventSource(streamURL("/api/apps/job-log/" + encodeURIComponent(id)));
  jobStream.addEventListener("log", (e) => {
    log.textContent += e.data + "\n";
    log.scrollTop = log.scrollHeight;
  });
  jobStream.addEventListener("status", (e) => {
    const info = JSON.parse(e.data);
    status.textContent = "Job " + id + ": " + info.status + (info.error ? ": " + info.error : "") +
      (info.apps && info.apps.length ? " (" + info.apps.join(", ") + ")" : "");
    status.className = info.status === "failed" ? "error" : "muted";
    jobStream.close();
    jobStream = null;
    refreshApps().catch(showError);
  });
  jobStream.onerror = () => {
    if (jobStream && jobStream.readyState === EventSource.CLOSED) status.textContent += " (log stream closed)";
  };
}

function fmt(x) {
  return (x >= 0 ? " " : "") + x.toFixed(3);
}

function followState() {
  const stream = new EventSource(streamURL("/api/state/stream?frequency=5"));
  stream.onmessage = (e) => {
    const s = JSON.parse(e.data);
    $("robot-state").textContent = (s.awake ? "awake" : "asleep") + ", motors " + s.control_mode +
      (s.move ? ", moving (" + s.move.kind + ")" : "") + " — " + s.backend;
    $("robot-state").className = "";
    const h = s.head_pose;
    $("robot-head").textContent = [h.yaw, h.pitch, h.roll].map(fmt).join(" ");
    $("robot-antennas").textContent = s.antennas_position.map(fmt).join(" ");
    $("robot-body").textContent = fmt(s.body_yaw);
  };
  stream.onerror = () => {
    $("robot-state").textContent = "state stream interrupted; retrying…";
    $("robot-state").className = "muted";
  };
}

async function refreshDaemon() {
  const d = await api("GET", "/api/daemon/status");
  $("daemon-info").textContent = "version " + d.version + " · SDK " + d.sdk_version + " · " + d.backend;
}

document.addEventListener("DOMContentLoaded", () => {
  $("install-form").addEventListener("submit", (e) => {
    e.preventDefault();
    act(async () => {
      const job = await api("POST", "/api/apps/install", { url: $("install-url").value.trim() });
      followJob(job.job_id);
    });
  });
  $("stop-btn").addEventListener("click", () => act(() => api("POST", "/api/apps/stop-current-app")));
  $("restart-btn").addEventListener("click", () => act(() => api("POST", "/api/apps/restart-current-app")));
  $("wake-btn").addEventListener("click", () => act(() => api("POST", "/api/move/play/wake_up")));
  $("sleep-btn").addEventListener("click", () => act(() => api("POST", "/api/move/play/goto_sleep")));
  $("startup-app").addEventListener("change", (e) => act(async () => {
    const name = e.target.value || null;
    await api("PUT", "/api/apps/startup-app", { startup_app: name });
    e.target.dataset.value = name || "";
  }));
  refreshDaemon().catch(showError);
  refreshStartup().catch(showError);
  refreshCurrent().then(refreshApps).catch(showError);
  followState();
  setInterval(() => refreshCurrent().then(renderApps).catch(() => {}), 1000);
  setInterval(() => refreshApps().catch(() => {}), 5000);
});
