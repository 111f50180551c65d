package hub

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Config is where the client's endpoint and token come from.
type Config struct {
	Endpoint string
	Token    string
	// EndpointSource names where Endpoint came from: "--endpoint", "HF_ENDPOINT", or "" for the default.
	EndpointSource string
	TokenSource    string // "--token", "HF_TOKEN", the token file's path, or "" when there is none
}

// ConfigFromEnv resolves the endpoint (flag, then HF_ENDPOINT, then DefaultEndpoint) and the token
// (flag, then HF_TOKEN, then the token file: HF_TOKEN_PATH, else $HF_HOME/token, else
// ~/.cache/huggingface/token), the variables the public hub's tools read. A missing token file is
// not an error: the hub will answer 401. An endpoint that is not an http(s) URL is a
// *ValidationError whose field names where it came from (--endpoint or HF_ENDPOINT).
func ConfigFromEnv(getenv func(string) string, endpointFlag, tokenFlag string) (Config, error) {
	c := Config{Endpoint: DefaultEndpoint}
	switch {
	case endpointFlag != "":
		c.Endpoint, c.EndpointSource = endpointFlag, "--endpoint"
	case getenv("HF_ENDPOINT") != "":
		c.Endpoint, c.EndpointSource = getenv("HF_ENDPOINT"), "HF_ENDPOINT"
	}
	if _, err := parseEndpoint(c.Endpoint); err != nil {
		err.Field = cmp.Or(c.EndpointSource, err.Field)
		return c, err
	}
	switch {
	case tokenFlag != "":
		c.Token, c.TokenSource = strings.TrimSpace(tokenFlag), "--token"
		return c, nil
	case getenv("HF_TOKEN") != "":
		c.Token, c.TokenSource = strings.TrimSpace(getenv("HF_TOKEN")), "HF_TOKEN"
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
	if p := getenv("HF_TOKEN_PATH"); p != "" {
		return p
	}
	if h := getenv("HF_HOME"); h != "" {
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
