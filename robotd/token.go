package robotd

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tokenFileName is the token the daemon made for itself, in its data dir.
const tokenFileName = "api-token"

// loadOrCreateToken reads the token file in dataDir, or writes a new random token into it (mode
// 0600) when there is none. created says which.
func loadOrCreateToken(dataDir string) (token, path string, created bool, err error) {
	path = filepath.Join(dataDir, tokenFileName)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		token = strings.TrimSpace(string(data))
		if token == "" {
			return "", path, false, fmt.Errorf("token file %s is empty: remove it and a new token is made", path)
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
	tmp, err := os.CreateTemp(dataDir, ".api-token-*")
	if err != nil {
		return "", path, false, fmt.Errorf("writing the token file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(token + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o600) // CreateTemp makes 0600 already; said again for clarity
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		return "", path, false, fmt.Errorf("writing the token file %s: %w", path, werr)
	}
	return token, path, true, nil
}
