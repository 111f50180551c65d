package media

import (
	"sync"
	"time"
)

// Frame is one camera image as captured: rows of BGR pixels (OpenCV's order, what apps get as a
// (height, width, 3) uint8 array), never changed once published.
type Frame struct {
	Width, Height int
	BGR           []byte
	Captured      time.Time // when the daemon had the whole frame
	Seq           uint64    // 1 for the first frame of a capture, then one more per frame
}

// Chunk is a piece of microphone audio: interleaved stereo float32 samples at SampleRate.
type Chunk struct {
	Samples  []float32
	Captured time.Time // when the daemon had the chunk's last sample
}

// feed fans values out to subscribers. A subscriber that falls behind misses values (a camera
// frame) or, for audio, gets them up to its channel's capacity and then misses the newest;
// nobody ever blocks the capture.
type feed[T any] struct {
	mu     sync.Mutex
	latest T
	have   bool
	subs   map[chan T]struct{}
	cap    int
	keepUp bool // video: a full subscriber's stale value is replaced by the newest
}

func newFeed[T any](capacity int, keepUp bool) *feed[T] {
	return &feed[T]{subs: map[chan T]struct{}{}, cap: capacity, keepUp: keepUp}
}

func (f *feed[T]) publish(v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latest, f.have = v, true
	for ch := range f.subs {
		select {
		case ch <- v:
			continue
		default:
		}
		if f.keepUp {
			select { // drop the stale value, send the new one
			case <-ch:
			default:
			}
			select {
			case ch <- v:
			default:
			}
		}
	}
}

// subscribe returns a channel of the values published from now on and a function that ends the
// subscription (and closes the channel).
func (f *feed[T]) subscribe() (<-chan T, func()) {
	ch := make(chan T, f.cap)
	f.mu.Lock()
	f.subs[ch] = struct{}{}
	f.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.subs, ch)
			close(ch)
			f.mu.Unlock()
		})
	}
}

// last returns the latest value, if any was published since reset.
func (f *feed[T]) last() (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.latest, f.have
}

// reset forgets the latest value (a capture stopped: its last frame is not the present).
func (f *feed[T]) reset() {
	f.mu.Lock()
	var zero T
	f.latest, f.have = zero, false
	f.mu.Unlock()
}
