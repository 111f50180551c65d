package access

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/renameio/v2"
)

// TokenFileName is the token the daemon made for itself, in its data dir.
const TokenFileName = "api-token"

// LoadOrCreateToken reads the token file in dataDir, or writes a new random token into it (mode
// 0600) when there is none. created says which.
func LoadOrCreateToken(dataDir string) (token, path string, created bool, err error) {
	path = filepath.Join(dataDir, TokenFileName)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		token = strings.TrimSpace(string(data))
		if token == "" {
			return "", path, false, fmt.Errorf("token file %s is empty: remove it and a new token is made", path)
		}
		if err := CheckTokenStrength(token, "the token file "+path); err != nil {
			return "", path, false, fmt.Errorf("%w; or remove the file and a new token is made", err)
		}
		// A token others can read is no secret: take it back to 0600.
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(path, 0o600); err != nil {
				return "", path, false, fmt.Errorf("token file %s is readable by others (%v) and cannot be made private: %w", path, fi.Mode().Perm(), err)
			}
		}
		return token, path, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", path, false, fmt.Errorf("reading the token file: %w", err)
	}
	token = rand.Text()
	if werr := renameio.WriteFile(path, []byte(token+"\n"), 0o600, renameio.WithStaticPermissions(0o600)); werr != nil {
		return "", path, false, fmt.Errorf("writing the token file %s: %w", path, werr)
	}
	return token, path, true, nil
}

// minTokenBits is the least a token must carry: a guess of 2^128 is out of anyone's reach.
const minTokenBits = 128

// tokenAlphabets are the alphabets tokens are written in, smallest first: a token's strength is
// taken as its length times the bits of a character of the smallest alphabet that holds all of
// its characters (what an attacker who saw the alphabet would have to guess).
var tokenAlphabets = []struct {
	name  string
	chars string
}{
	{"decimal digits", "0123456789"},
	{"hex digits", "0123456789abcdef"},
	{"hex digits", "0123456789ABCDEF"},
	{"base32", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"},
	{"lowercase letters and digits", "abcdefghijklmnopqrstuvwxyz0123456789"},
	{"uppercase letters and digits", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
	{"letters and digits", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"},
	{"base64", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"},
}

// CheckTokenStrength refuses a token of fewer than minTokenBits, naming where it came from and
// what it is made of, never the token itself.
func CheckTokenStrength(token, source string) error {
	name, size := "printable characters", 95.0
	for _, a := range tokenAlphabets {
		if strings.Trim(token, a.chars) == "" {
			name, size = a.name, float64(len(a.chars))
			break
		}
	}
	bits := float64(utf8.RuneCountInString(token)) * math.Log2(size)
	if bits >= minTokenBits {
		return nil
	}
	return fmt.Errorf("%s: the API token is too weak: %d characters of %s carry about %.0f bits, and a token needs at least %d; make one with: openssl rand -hex 16 (or leave it out: the daemon makes one in <data-dir>/%s)",
		source, utf8.RuneCountInString(token), name, bits, minTokenBits, TokenFileName)
}
