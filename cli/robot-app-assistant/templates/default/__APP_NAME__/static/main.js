// The settings page: reads and changes the app's settings through its JSON routes.
const waving = document.getElementById("waving");
const amplitude = document.getElementById("amplitude");
const amplitudeValue = document.getElementById("amplitude-value");
const statusLine = document.getElementById("status");

function show(settings) {
  waving.checked = settings.waving;
  amplitude.value = settings.amplitude_deg;
  amplitudeValue.textContent = Math.round(settings.amplitude_deg);
}

async function call(method, body) {
  const response = await fetch("/api/settings", {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.detail || response.statusText);
  return data;
}

async function save() {
  try {
    show(await call("POST", { waving: waving.checked, amplitude_deg: Number(amplitude.value) }));
    statusLine.textContent = "Saved.";
  } catch (err) {
    statusLine.textContent = "Could not save: " + err.message;
  }
}

waving.addEventListener("change", save);
amplitude.addEventListener("input", () => (amplitudeValue.textContent = amplitude.value));
amplitude.addEventListener("change", save);
call("GET").then(show).catch((err) => (statusLine.textContent = "The app does not answer: " + err.message));
