package hubemu

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// NewID returns a 24-hex-digit ID like the hub's: 4 bytes of seconds since 1970, then 8 random
// bytes, so IDs sort roughly by creation time.
func NewID(now time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(now.Unix()))
	_, _ = rand.Read(b[4:])
	return hex.EncodeToString(b[:])
}

// newSha returns a random 40-hex-digit commit ID.
func newSha() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newToken returns an access token in the hub's format: "hf_" and 34 letters.
func newToken() string {
	out := make([]byte, 0, 37)
	out = append(out, "hf_"...)
	var b [64]byte
	for len(out) < cap(out) {
		_, _ = rand.Read(b[:])
		for _, c := range b {
			// 208 = 4*52: dropping the bytes above it keeps every letter equally likely.
			if c < 208 && len(out) < cap(out) {
				out = append(out, tokenAlphabet[int(c)%len(tokenAlphabet)])
			}
		}
	}
	return string(out)
}

// tokenHash is what the store keeps of a token: the token itself is shown once and never stored.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
