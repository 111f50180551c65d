package mqtt_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/testkit/mosquittotest"
)

// fleetACL is deploy/mosquitto/robothub.acl, as shipped, with blocks for three robots: robot-a and
// robot-b have local/my_app; robot-c has another app.
func fleetACL(t *testing.T) string {
	return mosquittotest.FleetACL(t, map[string][]string{
		"robot-a": {"local/my_app"}, "robot-b": {"local/my_app"}, "robot-c": {"local/other_app"},
	})
}

var users = map[string]string{"receiver": "receiver-pw", "robot-a": "a-pw", "robot-b": "b-pw", "robot-c": "c-pw"}

type inbox struct {
	mu  sync.Mutex
	got map[string][]byte
	ch  chan string
}

func newInbox() *inbox { return &inbox{got: map[string][]byte{}, ch: make(chan string, 100)} }

func (i *inbox) take(topic string, payload []byte) {
	i.mu.Lock()
	i.got[topic] = payload
	i.mu.Unlock()
	i.ch <- topic
}

func (i *inbox) wait(t *testing.T, topic string) []byte {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		i.mu.Lock()
		p, ok := i.got[topic]
		i.mu.Unlock()
		if ok {
			return p
		}
		select {
		case <-i.ch:
		case <-timeout:
			t.Fatalf("no message on %s", topic)
		}
	}
}

func connect(t *testing.T, b *mosquittotest.Broker, user, pass string, in *inbox) *mqtt.Client {
	t.Helper()
	cfg := mqtt.Config{URL: b.URL, ClientID: user, Username: user, Password: pass, TLS: b.TLSConfig(),
		SessionExpiry: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if in != nil {
		cfg.OnMessage = in.take
	}
	c, err := mqtt.Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.AwaitConnection(ctx); err != nil {
		t.Fatalf("%s: %v\n%s", user, err, b.Log())
	}
	return c
}

func TestMosquittoACLs(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: users, ACL: fleetACL(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := "robothub/v1/spaces/local/my_app/wave/0"

	recv := connect(t, b, "receiver", users["receiver"], nil)
	if err := recv.Publish(ctx, topic, []byte("announce-1"), true); err != nil {
		t.Fatalf("the receiver publishes an update: %v", err)
	}

	// A robot that connects later gets the retained message when it subscribes.
	inA := newInbox()
	a := connect(t, b, "robot-a", users["robot-a"], inA)
	if err := a.Subscribe(ctx, "robothub/v1/spaces/local/my_app/wave/+"); err != nil {
		t.Fatal(err)
	}
	if got := inA.wait(t, topic); string(got) != "announce-1" {
		t.Fatalf("robot-a got %q", got)
	}

	// A robot's credentials cannot announce an update: the broker refuses, and says so.
	err := a.Publish(ctx, topic, []byte("forged"), true)
	if !errors.Is(err, fault.ErrForbidden) || !strings.Contains(err.Error(), "not authorized") || !strings.Contains(err.Error(), topic) {
		t.Fatalf("a forged announcement from robot-a: err = %v", err)
	}
	// ... nor write another robot's status, while its own goes through.
	if err := a.Publish(ctx, "robothub/v1/robots/robot-b/status", []byte("{}"), true); !errors.Is(err, fault.ErrForbidden) {
		t.Fatalf("robot-a writing robot-b's status: err = %v", err)
	}
	if err := a.Publish(ctx, "robothub/v1/robots/robot-a/status", []byte("{}"), true); err != nil {
		t.Fatalf("robot-a writing its own status: %v", err)
	}
	// ... nor read another app's topic: Mosquitto grants the subscription but delivers nothing
	// (AWS IoT Core refuses it); either way robot-c hears nothing of my_app. Messages reach a
	// client in order, so once it has the other app's announcement, my_app's retained one
	// (sent at its subscription, before) would have come first.
	inC := newInbox()
	c := connect(t, b, "robot-c", users["robot-c"], inC)
	if err := c.Subscribe(ctx, "robothub/v1/spaces/local/my_app/wave/+"); err != nil && !errors.Is(err, fault.ErrForbidden) {
		t.Fatalf("robot-c subscribing to my_app: err = %v", err)
	}
	if err := c.Subscribe(ctx, "robothub/v1/spaces/local/other_app/wave/+"); err != nil {
		t.Fatal(err)
	}
	if err := recv.Publish(ctx, "robothub/v1/spaces/local/other_app/wave/0", []byte("other"), true); err != nil {
		t.Fatal(err)
	}
	inC.wait(t, "robothub/v1/spaces/local/other_app/wave/0")
	inC.mu.Lock()
	if _, heard := inC.got[topic]; heard {
		t.Fatal("robot-c, which has no my_app, heard its announcement")
	}
	inC.mu.Unlock()
	// The retained message is still the receiver's.
	inB := newInbox()
	bb := connect(t, b, "robot-b", users["robot-b"], inB)
	if err := bb.Subscribe(ctx, "robothub/v1/spaces/local/my_app/wave/+"); err != nil {
		t.Fatal(err)
	}
	if got := inB.wait(t, topic); string(got) != "announce-1" {
		t.Fatalf("robot-b got %q after the forgery", got)
	}
}

func TestMosquittoRefusesBadCredentialsWithoutShowingThem(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: users, ACL: fleetACL(t)})
	var logs strings.Builder
	var mu sync.Mutex
	c, err := mqtt.Connect(context.Background(), mqtt.Config{URL: b.URL, ClientID: "robot-a", Username: "robot-a", Password: "wrong-secret-pw",
		TLS: b.TLSConfig(), Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = c.AwaitConnection(ctx)
	if err == nil || !strings.Contains(err.Error(), "the broker refused the connection") {
		t.Fatalf("err = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(err.Error()+logs.String(), "wrong-secret-pw") {
		t.Fatal("the password appears in the error or the log")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestMosquittoClientCertificates(t *testing.T) {
	// AWS IoT Core's way: the robot is who its certificate says; no password.
	b := mosquittotest.Start(t, mosquittotest.Options{ClientCerts: []string{"robot-a", "receiver"}, ACL: fleetACL(t)})
	cert, key := b.ClientCert("robot-a")
	tlsCfg, err := mqtt.TLSFiles(b.CAFile, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	in := newInbox()
	c, err := mqtt.Connect(context.Background(), mqtt.Config{URL: b.URL, ClientID: "robot-a", TLS: tlsCfg, OnMessage: in.take,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Subscribe(ctx, "robothub/v1/spaces/local/my_app/wave/+"); err != nil {
		t.Fatalf("%v\n%s", err, b.Log())
	}
	if err := c.Publish(ctx, "robothub/v1/spaces/local/my_app/wave/0", []byte("x"), true); !errors.Is(err, fault.ErrForbidden) {
		t.Fatalf("a robot's certificate announcing an update: err = %v", err)
	}
	// Without a certificate the TLS handshake fails.
	noCert, _ := mqtt.TLSFiles(b.CAFile, "", "")
	c2, err := mqtt.Connect(context.Background(), mqtt.Config{URL: b.URL, ClientID: "robot-x", TLS: noCert, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(context.Background())
	short, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if err := c2.AwaitConnection(short); err == nil {
		t.Fatal("a client without a certificate connected")
	}
}
