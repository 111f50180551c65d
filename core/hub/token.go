package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables read by Config, the same as the public hub's tools read.
const (
	EnvEndpoint  = "HF_ENDPOINT"   // the hub's base URL
	EnvToken     = "HF_TOKEN"      // an access token
	EnvTokenPath = "HF_TOKEN_PATH" // the file holding the token
	EnvHome      = "HF_HOME"       // the hub's cache directory, which holds the token file "token"
)

// Config is where the client's endpoint and token come from.
type Config struct {
	Endpoint    string
	Token       string
	TokenSource string // "--token", "HF_TOKEN", the token file's path, or "" when there is none
}

// ConfigFromEnv resolves the endpoint (flag, then HF_ENDPOINT, then DefaultEndpoint) and the token
// (flag, then HF_TOKEN, then the token file: HF_TOKEN_PATH, else $HF_HOME/token, else
// ~/.cache/huggingface/token). A missing token file is not an error: the hub will answer 401.
func ConfigFromEnv(getenv func(string) string, endpointFlag, tokenFlag string) (Config, error) {
	c := Config{Endpoint: endpointFlag}
	if c.Endpoint == "" {
		c.Endpoint = getenv(EnvEndpoint)
	}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	switch {
	case tokenFlag != "":
		c.Token, c.TokenSource = strings.TrimSpace(tokenFlag), "--token"
		return c, nil
	case getenv(EnvToken) != "":
		c.Token, c.TokenSource = strings.TrimSpace(getenv(EnvToken)), EnvToken
		return c, nil
	}
	path := TokenPath(getenv)
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return c, fmt.Errorf("reading the token file: %w", err)
	}
	c.Token, c.TokenSource = strings.TrimSpace(string(data)), path
	return c, nil
}

// TokenPath returns the token file: HF_TOKEN_PATH, else $HF_HOME/token, else
// $XDG_CACHE_HOME/huggingface/token, else ~/.cache/huggingface/token.
func TokenPath(getenv func(string) string) string {
	if p := getenv(EnvTokenPath); p != "" {
		return p
	}
	if h := getenv(EnvHome); h != "" {
		return filepath.Join(h, "token")
	}
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "huggingface", "token")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache", "huggingface", "token")
	}
	return ""
}
