package release

import (
	"crypto/rand"
	_ "embed"
	"fmt"
	"os"
	"strings"

	"aead.dev/minisign"

	"github.com/robothub/robothub/core/fault"
)

// The signature format is minisign's (Ed25519; jedisct1/minisign and signify-compatible tools
// verify it: `minisign -Vm SHA256SUMS -p release.pub`), through aead.dev/minisign.

// releasePub is the project's release key, compiled into robot-daemon. CompiledKey overrides it at
// link time (-ldflags -X github.com/robothub/robothub/core/release.CompiledKey=<key line>), as
// `make release` does with the key it signs with, so that its daemons take its releases.
//
//go:embed release.pub
var releasePub string

// CompiledKey, when set at link time, is the release key (the public key's base64 line) instead of
// release.pub.
var CompiledKey string

// Key is a release key: the public half verifies releases.
type Key struct{ pub minisign.PublicKey }

// DefaultKey is the release key compiled into this binary.
func DefaultKey() (Key, error) {
	text := releasePub
	if CompiledKey != "" {
		text = CompiledKey
	}
	k, err := ParseKey([]byte(text))
	if err != nil {
		return Key{}, fmt.Errorf("the compiled-in release key: %w", err)
	}
	return k, nil
}

// ParseKey reads a minisign public key: the .pub file (an untrusted comment line, then the key) or
// the key's line alone.
func ParseKey(text []byte) (Key, error) {
	var k minisign.PublicKey
	if err := k.UnmarshalText([]byte(strings.TrimSpace(string(text)))); err != nil {
		return Key{}, fault.Invalidf("not a minisign public key: %v", err)
	}
	return Key{pub: k}, nil
}

// LoadKey reads a minisign public key file (--release-key).
func LoadKey(path string) (Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Key{}, err
	}
	k, err := ParseKey(data)
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ID is the key's id, as minisign prints it.
func (k Key) ID() string { return fmt.Sprintf("%016X", k.pub.ID()) }

// String is the key's line, as in a .pub file.
func (k Key) String() string { return k.pub.String() }

// TrustedComment is the signed comment of version's SHA256SUMS: it binds the signature to the
// version, so that a release's signed checksums cannot be served as another version's.
func TrustedComment(v Version) string { return "robothub release " + v.String() }

// Verify checks sig, the minisign signature of sums, against the key and the version it must
// name. Each failure says which check failed.
func (k Key) Verify(v Version, sums, sig []byte) error {
	var s minisign.Signature
	if err := s.UnmarshalText(sig); err != nil {
		return fault.Invalidf("SHA256SUMS.minisig of %s is not a minisign signature: %v", v, err)
	}
	if s.KeyID != k.pub.ID() {
		return fault.Invalidf("release %s is signed by key %016X, not by the release key %s (robot-daemon --release-key names another): refused", v, s.KeyID, k.ID())
	}
	if !minisign.Verify(k.pub, sums, sig) {
		return fault.Invalidf("release %s: the signature of SHA256SUMS does not match it: the checksums were altered after signing, or the signature was: refused", v)
	}
	if s.TrustedComment != TrustedComment(v) {
		return fault.Invalidf("release %s: its signature was made for %q, not %q: refused", v, clip(s.TrustedComment), TrustedComment(v))
	}
	return nil
}

// SigningKey is the secret half of a release key, which signs releases (`make release`).
type SigningKey struct{ priv minisign.PrivateKey }

// GenerateKey makes a release key pair: the public key file's text and the secret key file's
// text (unencrypted: keep it where only the publisher reads it).
func GenerateKey() (pub, secret []byte, err error) {
	p, s, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	pubText, err := p.MarshalText()
	if err != nil {
		return nil, nil, err
	}
	secretText, err := s.MarshalText()
	if err != nil {
		return nil, nil, err
	}
	return append(pubText, '\n'), secretText, nil
}

// ParseSigningKey reads a minisign secret key file's text; password decrypts an encrypted one.
func ParseSigningKey(text []byte, password string) (SigningKey, error) {
	if minisign.IsEncrypted(text) {
		k, err := minisign.DecryptKey(password, text)
		if err != nil {
			return SigningKey{}, fault.Invalidf("the release signing key: %v", err)
		}
		return SigningKey{priv: k}, nil
	}
	var k minisign.PrivateKey
	if err := k.UnmarshalText(text); err != nil {
		return SigningKey{}, fault.Invalidf("the release signing key: %v", err)
	}
	return SigningKey{priv: k}, nil
}

// Public is the key that verifies what s signs.
func (s SigningKey) Public() Key {
	return Key{pub: s.priv.Public().(minisign.PublicKey)}
}

// Sign signs version's SHA256SUMS.
func (s SigningKey) Sign(v Version, sums []byte) []byte {
	return minisign.SignWithComments(s.priv, sums, TrustedComment(v), "signature of robothub release "+v.String())
}
