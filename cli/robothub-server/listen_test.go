package main

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/cli/hubconn"
	"github.com/robothub/robothub/core/hub"
)

// A port that is taken (a second make run, or hub serve beside it on 7861) is a failure to run, not
// a usage error, and the message names the flag that picks another port.
func TestPortInUseNamesTheFlag(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	_, port, _ := net.SplitHostPort(taken)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hub", "serve", "--db", ":memory:", "--addr", taken},
			"hub serve: the local hub cannot listen on " + taken + ": the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with --addr 127.0.0.1:PORT"},
		{[]string{"serve", "--route", "seen=log", "--addr", taken},
			"serve: the receiver cannot listen on " + taken + ": the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with --addr 127.0.0.1:PORT"},
		{[]string{"dev", "--data-dir", filepath.Join(dir, "a"), "--hub-addr", taken},
			"dev: the local hub cannot listen on " + taken + ": the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with --hub-addr 127.0.0.1:PORT"},
		{[]string{"dev", "--data-dir", filepath.Join(dir, "b"), "--hub-addr", "127.0.0.1:0", "--receiver-addr", "127.0.0.1:0", "--daemon-port", port},
			"dev: the robot daemon cannot listen on " + taken + ": the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with --daemon-port PORT"},
	} {
		code, _, stderr := runCLI(t, map[string]string{"HOME": dir}, "", c.args...)
		if code != exitError || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q\nwant exit %d with %q", c.args, code, stderr, exitError, c.want)
		}
	}
}

// make run passes its ports to robothub dev as flags: a busy one is named by make's variable, the
// way the user gave it (make run HUB_PORT=...).
func TestMakeRunPortInUseNamesTheMakeVariable(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	_, port, _ := net.SplitHostPort(taken)
	dir := t.TempDir()
	free := []string{"--hub-addr", "127.0.0.1:0", "--receiver-addr", "127.0.0.1:0", "--broker-addr", "127.0.0.1:0", "--daemon-port", "0"}
	with := func(flag, value string) []string {
		args := []string{"dev", "--data-dir", filepath.Join(dir, flag)}
		for i := 0; i < len(free); i += 2 {
			v := free[i+1]
			if free[i] == flag {
				v = value
			}
			args = append(args, free[i], v)
		}
		return args
	}
	for flag, variable := range map[string]string{"--hub-addr": "HUB_PORT", "--receiver-addr": "RECEIVER_PORT", "--broker-addr": "BROKER_PORT", "--daemon-port": "DAEMON_PORT"} {
		value := taken
		if flag == "--daemon-port" {
			value = port
		}
		want := "the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with make run " + variable + "=PORT"
		code, _, stderr := runCLI(t, map[string]string{"HOME": dir, "ROBOTHUB_DEV_MAKE": "1"}, "", with(flag, value)...)
		if code != exitError || !strings.Contains(stderr, "cannot listen on "+taken) || !strings.Contains(stderr, want) || strings.Contains(stderr, flag) {
			t.Errorf("%s taken: exit %d, stderr %q\nwant exit %d naming %s, not %s", flag, code, stderr, exitError, variable, flag)
		}
	}
}

// Commands that need a server that is not running say so at once and name what to start: the
// fleet's broker (robothub dev runs it), the local hub, and the public hub that an unset
// HF_ENDPOINT means.
func TestUnreachableServersNameWhatToStart(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"fleet", "ls", "--broker", "mqtt://" + closed},
			"cannot reach the broker at mqtt://" + closed + " (dial tcp " + closed + ": connect: connection refused): is robothub dev (or make run) running?"},
		{nil, []string{"fleet", "wait", "--broker", "mqtt://" + closed, "--space", "local/my_app", "--revision", "0123456789abcdef0123456789abcdef01234567"},
			"is robothub dev (or make run) running? It runs the fleet's broker on 127.0.0.1:1883"},
		{map[string]string{"HF_ENDPOINT": "http://" + closed, "HF_TOKEN": "hf_x"}, []string{"webhooks", "ls"},
			"cannot reach the hub at http://" + closed + ": is robothub hub serve (or robothub dev, make run) running there?"},
	} {
		env := map[string]string{"HOME": dir}
		for k, v := range c.env {
			env[k] = v
		}
		code, _, stderr := runCLI(t, env, "", c.args...)
		if code != exitError || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q\nwant exit %d with %q", c.args, code, stderr, exitError, c.want)
		}
	}
	// The public hub, which an unset HF_ENDPOINT means (tests reach only loopback: the error is
	// the one a failed connection gives).
	cl, err := hub.New(hub.DefaultEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	msg := hubconn.UserError(cl, &hub.TransportError{Method: "GET", Path: hub.WebhooksPath, Err: errors.New("dial tcp: lookup huggingface.co: no such host")}).Error()
	if want := "(the public hub: HF_ENDPOINT and --endpoint are not set; for the local hub, export HF_ENDPOINT=http://127.0.0.1:7861 as robothub dev prints)"; !strings.Contains(msg, want) {
		t.Errorf("a public hub that cannot be reached: %q, want %q", msg, want)
	}
}
