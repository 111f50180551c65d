// The app's page: a chat box and the settings, through the app's JSON routes.
const chat = document.getElementById("chat");
const stateLine = document.getElementById("state");
const settings = document.getElementById("settings");
const savedLine = document.getElementById("saved");

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.detail || response.statusText);
  return data;
}

function addLine(text, kind) {
  const li = document.createElement("li");
  li.className = kind;
  li.textContent = text;
  chat.appendChild(li);
  chat.scrollTop = chat.scrollHeight;
}

function showTurn(turn) {
  for (const tool of turn.tools || []) {
    addLine(`${tool.name}(${tool.arguments}) → ${tool.result.status}`, "tools");
  }
  if (turn.reply) addLine(turn.reply, "robot");
}

document.getElementById("say").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("text");
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  addLine(text, "user");
  try {
    const turn = await call("POST", "/api/say", { text });
    lastTurns = turn.turns;
    showTurn(turn);
  } catch (err) {
    addLine("Error: " + err.message, "tools");
  }
});

function fillSettings(cfg) {
  for (const el of settings.elements) {
    if (!el.name || el.name === "api_key") continue;
    if (el.type === "checkbox") el.checked = Boolean(cfg[el.name]);
    else el.value = cfg[el.name] ?? "";
  }
  settings.elements.api_key.placeholder = cfg.has_api_key ? "saved (leave empty to keep)" : "none";
  document.getElementById("config-path").textContent = cfg.config_path;
}

settings.addEventListener("submit", async (event) => {
  event.preventDefault();
  const values = {};
  for (const el of settings.elements) {
    if (!el.name) continue;
    values[el.name] = el.type === "checkbox" ? el.checked : el.value;
  }
  try {
    fillSettings(await call("POST", "/api/config", values));
    settings.elements.api_key.value = "";
    savedLine.textContent = "Saved.";
  } catch (err) {
    savedLine.textContent = "Not saved: " + err.message;
  }
});

let lastTurns = -1;
async function poll() {
  try {
    const status = await call("GET", "/api/status");
    stateLine.textContent = status.error ? `${status.state} (${status.error})` : status.state;
    if (lastTurns >= 0 && status.turns > lastTurns && status.heard) {
      // A turn that started from the microphone.
      addLine(status.heard, "user");
      showTurn(status);
    }
    lastTurns = status.turns ?? lastTurns;
  } catch (err) {
    stateLine.textContent = "The app does not answer: " + err.message;
  }
}

call("GET", "/api/config").then(fillSettings);
setInterval(poll, 1000);
poll();
