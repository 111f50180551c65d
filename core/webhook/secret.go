package webhook

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/robothub/robothub/core/fault"
)

// SecretHeader is the header in which the hub sends a webhook's secret, verbatim.
const SecretHeader = "X-Webhook-Secret"

// SecretQueryParam is the query parameter that carries the secret when it is written into the
// webhook's URL instead (https://example.com/webhooks/x?secret=...).
const SecretQueryParam = "secret"

// SecretEnv is the environment variable a receiver reads its secret from when none is configured.
const SecretEnv = "WEBHOOK_SECRET"

// The texts are the hub's own (ARCHITECTURE.md): clients and tests match on them, so they keep the
// capital and the full stop that Go error strings usually do without.
var (
	// ErrSecretMissing: a secret is configured and the request carries none (401).
	ErrSecretMissing error = &fault.Error{Kind: fault.Unauthenticated, Msg: "x-webhook-secret header not set."}
	// ErrSecretInvalid: the request carries a secret that is not the configured one (403).
	ErrSecretInvalid error = &fault.Error{Kind: fault.Forbidden, Msg: "Invalid webhook secret."}
)

// Secret is a receiver's expected secret. The zero value accepts every request. It never prints
// its value.
type Secret struct {
	set  bool
	hash [sha256.Size]byte
}

// NewSecret returns a Secret expecting s; an empty s accepts every request.
func NewSecret(s string) Secret {
	if s == "" {
		return Secret{}
	}
	return Secret{set: true, hash: sha256.Sum256([]byte(s))}
}

// IsSet reports whether requests must carry the secret.
func (s Secret) IsSet() bool { return s.set }

// String hides the value, so a Secret is safe to log.
func (s Secret) String() string {
	if s.set {
		return "[set]"
	}
	return "[none]"
}

// Check verifies the secret a request carries, in the X-Webhook-Secret header or, when the header
// is absent, in the "secret" query parameter of rawQuery. It takes header values and the raw query
// rather than a request so that every transport can call it. The comparison takes the same time
// whatever the candidate is (both sides are hashed first, so not even the length leaks).
func (s Secret) Check(h http.Header, rawQuery string) error {
	if !s.set {
		return nil
	}
	got, ok := h[SecretHeader] // the canonical form, as net/http stores it
	if !ok {
		// A header map built by hand (a serverless event) may keep the sender's spelling.
		for k, v := range h {
			if strings.EqualFold(k, SecretHeader) {
				got, ok = v, true
				break
			}
		}
	}
	var candidate string
	if ok && len(got) > 0 {
		candidate = got[0]
	} else {
		q, _ := url.ParseQuery(rawQuery) // the pairs that parse, whatever the rest
		if !q.Has(SecretQueryParam) {
			return ErrSecretMissing
		}
		candidate = q.Get(SecretQueryParam)
	}
	sum := sha256.Sum256([]byte(candidate))
	if subtle.ConstantTimeCompare(sum[:], s.hash[:]) != 1 {
		return ErrSecretInvalid
	}
	return nil
}
