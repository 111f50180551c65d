package spaces

import (
	"context"
	"sort"
	"sync"
)

// spaceLocks serialise what changes one space's repository: its creation and deletion, each push
// and each commit, so that the refs read before and after a push are that push's alone. A waiter
// gives up when its context ends (the client went away).
type spaceLocks struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// lock takes the lock of a space and returns its release, or ctx's error.
func (l *spaceLocks) lock(ctx context.Context, space string) (func(), error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]chan struct{}{}
	}
	ch := l.locks[space]
	if ch == nil {
		ch = make(chan struct{}, 1)
		l.locks[space] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refChange is one ref a push moved: Old is "" for a new ref, New is "" for a deleted one.
type refChange struct{ Ref, Old, New string }

// diffRefs lists the refs that differ between two snapshots, by name.
func diffRefs(before, after map[string]string) []refChange {
	var out []refChange
	for ref, old := range before {
		if now := after[ref]; now != old {
			out = append(out, refChange{Ref: ref, Old: old, New: now})
		}
	}
	for ref, now := range after {
		if _, had := before[ref]; !had {
			out = append(out, refChange{Ref: ref, New: now})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}
