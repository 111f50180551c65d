package spaces_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

func openHub(t *testing.T) (*localhub.Emulator, hubemu.Principal, *hubemu.Space) {
	t.Helper()
	ctx := context.Background()
	hub := hubtest.Start(t, localhub.Config{})
	emu := hub.Emulator
	token, _ := hub.Token(t, "alice", hubemu.RoleWrite)
	alice, _ := emu.Authenticate(ctx, token)
	sp, err := emu.CreateSpace(ctx, alice, spaces.CreateRepoInput{Name: "wave", Type: "space"})
	if err != nil {
		t.Fatal(err)
	}
	return emu, alice, sp
}

// A commit of more operations than a repo may hold is refused while its body is read, before it
// waits for the space, naming the limit.
func TestCommitOfTooManyOperationsIsRefused(t *testing.T) {
	emu, alice, _ := openHub(t)
	var body bytes.Buffer
	body.WriteString(`{"key":"header","value":{"summary":"too many"}}` + "\n")
	for i := range spaces.MaxCommitOperations + 1 {
		fmt.Fprintf(&body, `{"key":"deletedFile","value":{"path":"f%d"}}`+"\n", i)
	}
	_, err := emu.Commit(context.Background(), alice, "alice/wave", "main", &body)
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "more than 100000 operations") {
		t.Fatalf("err %v, want a 400 naming the limit", err)
	}
}

// A commit that waits for its space (a push holds it) stops waiting when its client goes away,
// and makes nothing.
func TestCommitStopsWhenItsClientGoesAway(t *testing.T) {
	emu, alice, sp := openHub(t)
	held, release := make(chan struct{}), make(chan struct{})
	pushed := make(chan error, 1)
	go func() { pushed <- emu.Push(context.Background(), alice, sp, func() { close(held); <-release }) }()
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := emu.Commit(ctx, alice, "alice/wave", "main", strings.NewReader(`{"key":"header","value":{"summary":"m"}}`+"\n"+
			`{"key":"file","value":{"path":"a.txt","content":"aGk=","encoding":"base64"}}`+"\n"))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the commit of a client that went away: %v", err)
	}
	close(release)
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	if refs, _ := emu.Git().Refs(context.Background(), "alice/wave"); len(refs) != 0 {
		t.Fatalf("the cancelled commit made refs %v", refs)
	}
}
