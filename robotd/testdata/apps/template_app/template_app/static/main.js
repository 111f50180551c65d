document.getElementById("antennas").addEventListener("change", (e) => {
  fetch("/antennas", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ enabled: e.target.checked }) });
});
document.getElementById("sound").addEventListener("click", () => fetch("/play_sound", { method: "POST" }));
