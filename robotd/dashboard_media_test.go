package robotd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The dashboard in headless Chromium shows the camera live over WebRTC (two frames of the test
// source differ), a live microphone level, and plays a sound.
func TestDashboardShowsTheCameraAndTheMicrophones(t *testing.T) {
	parallel(t)
	needGst(t)
	d := startDaemon(t, daemonOptions{args: []string{"--camera", "test", "--microphone", "test", "--speaker", "test"}})
	// Loopback candidates only: the daemon offers 127.0.0.1, and Chromium may use it.
	ctx := browser(t, chromedp.Flag("allow-loopback-in-peer-connection", true),
		chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns"), chromedp.Flag("autoplay-policy", "no-user-gesture-required"))
	step, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	fail := func(err error) {
		t.Helper()
		t.Fatalf("%v (the page shows %q)", err, textOf(ctx, "#media-state"))
	}
	err := chromedp.Do(step, chromedp.Navigate(d.loginURL()),
		waitText("#media-state", "Live"),
		waitJS("the camera's picture", `(() => { const v = document.querySelector("#camera"); return v.videoWidth === 640 && v.readyState >= 2 && v.currentTime > 0.2; })()`))
	if err != nil {
		fail(err)
	}
	first, err := chromedp.Run(step, chromedp.Screenshot("#camera"))
	if err != nil {
		fail(err)
	}
	// The test source's ball moves: within a few seconds of video the picture is another. A loaded
	// machine may drop frames while the video's clock runs on, so the test looks again, half a
	// second of video at a time, rather than judging liveness from one pair of pictures.
	var second []byte
	for try := 0; try < 20 && (second == nil || bytes.Equal(first, second)); try++ {
		err = chromedp.Do(step, chromedp.Evaluate[chromedp.Void](`window.shotAt = document.querySelector("#camera").currentTime`),
			waitJS("half a second more of video", `document.querySelector("#camera").currentTime > window.shotAt + 0.5`))
		if err != nil {
			fail(err)
		}
		if second, err = chromedp.Run(step, chromedp.Screenshot("#camera")); err != nil {
			fail(err)
		}
	}
	if err := chromedp.Do(step, waitJS("a live microphone level", `document.querySelector("#mic-level").value > 0.01`)); err != nil {
		fail(err)
	}
	level, err := chromedp.Run(step, chromedp.Evaluate[float64](`document.querySelector("#mic-level").value`))
	if err != nil {
		fail(err)
	}
	if bytes.Equal(first, second) {
		t.Fatal("ten seconds of the camera's video show the same picture: the picture is not live")
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(screenshotDir, "camera-1.png"), first, 0o644)
		_ = os.WriteFile(filepath.Join(screenshotDir, "camera-2.png"), second, 0o644)
	}
	// Play a sound from the page: the daemon queues it on the speaker.
	err = chromedp.Do(step, chromedp.SetValue("#sound-select", "wake_up.wav"),
		clickEnabled("#play-sound"), waitText("#media-state", "Playing wake_up.wav"))
	if err != nil {
		t.Fatalf("playing a sound: %v (the page shows %q)", err, textOf(ctx, "#action-error"))
	}
	t.Logf("microphone level shown: %.3f", level)
}
