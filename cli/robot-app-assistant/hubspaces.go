package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/robothub/robothub/core/version"
)

// defaultHubEndpoint is the public hub.
const defaultHubEndpoint = "https://huggingface.co"

// hubConfig is where the hub is and which token to use, resolved as the hub's own tools do:
// the endpoint from HF_ENDPOINT; the token from --token, then HF_TOKEN, then the token file
// (HF_TOKEN_PATH, else $HF_HOME/token, else $XDG_CACHE_HOME/huggingface/token, else
// ~/.cache/huggingface/token).
type hubConfig struct {
	endpoint    string
	token       string
	tokenSource string // "--token", "HF_TOKEN" or the token file's path; "" without a token
	tokenFile   string // where a token would be read from
}

func resolveHubConfig(getenv func(string) string, tokenFlag string) (hubConfig, error) {
	c := hubConfig{endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/")}
	if c.endpoint == "" {
		c.endpoint = defaultHubEndpoint
	}
	u, err := url.Parse(c.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return c, fmt.Errorf("HF_ENDPOINT: %q is not an http(s) URL without credentials, such as %s", u.Redacted(), defaultHubEndpoint)
	}
	switch {
	case getenv("HF_TOKEN_PATH") != "":
		c.tokenFile = getenv("HF_TOKEN_PATH")
	case getenv("HF_HOME") != "":
		c.tokenFile = filepath.Join(getenv("HF_HOME"), "token")
	case getenv("XDG_CACHE_HOME") != "":
		c.tokenFile = filepath.Join(getenv("XDG_CACHE_HOME"), "huggingface", "token")
	case getenv("HOME") != "":
		c.tokenFile = filepath.Join(getenv("HOME"), ".cache", "huggingface", "token")
	}
	switch {
	case strings.TrimSpace(tokenFlag) != "":
		c.token, c.tokenSource = strings.TrimSpace(tokenFlag), "--token"
	case strings.TrimSpace(getenv("HF_TOKEN")) != "":
		c.token, c.tokenSource = strings.TrimSpace(getenv("HF_TOKEN")), "HF_TOKEN"
	case c.tokenFile != "":
		data, err := os.ReadFile(c.tokenFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return c, fmt.Errorf("reading the token file %s: %w", c.tokenFile, err)
		}
		if t := strings.TrimSpace(string(data)); t != "" {
			c.token, c.tokenSource = t, c.tokenFile
		}
	}
	return c, nil
}

// hubClient makes the few hub API calls publish needs: who the token belongs to, and creating a
// space. Shapes follow the public hub (GET /api/whoami-v2, POST /api/repos/create).
type hubClient struct {
	endpoint string
	token    string
	http     *http.Client
}

// hubError is an answer of the hub with an error status.
type hubError struct {
	method, path string
	status       int
	message      string
}

func (e *hubError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.method, e.path, e.status, http.StatusText(e.status), e.message)
}

// whoami is the part of GET /api/whoami-v2 that publish uses.
type whoami struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Auth struct {
		Type        string `json:"type"`
		AccessToken struct {
			DisplayName string `json:"displayName"`
			Role        string `json:"role"`
			FineGrained *struct {
				Global []string `json:"global"`
				Scoped []struct {
					Entity struct {
						Type string `json:"type"`
						Name string `json:"name"`
					} `json:"entity"`
					Permissions []string `json:"permissions"`
				} `json:"scoped"`
			} `json:"fineGrained"`
		} `json:"accessToken"`
	} `json:"auth"`
}

// canWriteSpaces reports whether the token may create and push to the user's own spaces.
func (w *whoami) canWriteSpaces() bool {
	at := w.Auth.AccessToken
	switch at.Role {
	case "write", "admin":
		return true
	case "fineGrained":
		if at.FineGrained == nil {
			return false
		}
		for _, s := range at.FineGrained.Scoped {
			if s.Entity.Name == w.Name && containsAll(s.Permissions, "repo.write") {
				return true
			}
		}
	}
	return false
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, v := range list {
			found = found || v == w
		}
		if !found {
			return false
		}
	}
	return true
}

func newHubClient(cfg hubConfig) *hubClient {
	return &hubClient{endpoint: cfg.endpoint, token: cfg.token, http: &http.Client{Timeout: 30 * time.Second}}
}

// call sends a JSON request and decodes a JSON answer into out.
func (c *hubClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "robot-app-assistant/"+version.String())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s%s: %w", method, c.endpoint, path, redactErr(err, c.token))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s %s%s: reading the answer: %w", method, c.endpoint, path, err)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error  string `json:"error"`
			Detail string `json:"detail"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && (e.Error != "" || e.Detail != "") {
			msg = e.Error + e.Detail
		}
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return &hubError{method: method, path: path, status: resp.StatusCode, message: strings.ReplaceAll(msg, c.token, "<token>")}
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s%s: the answer is not the expected JSON: %w", method, c.endpoint, path, err)
		}
	}
	return nil
}

// whoami returns the token's user and permissions.
func (c *hubClient) whoami(ctx context.Context) (*whoami, error) {
	var w whoami
	if err := c.call(ctx, http.MethodGet, "/api/whoami-v2", nil, &w); err != nil {
		return nil, err
	}
	if w.Name == "" {
		return nil, fmt.Errorf("GET %s/api/whoami-v2: the answer names no user", c.endpoint)
	}
	return &w, nil
}

// createSpace creates the space <owner>/<name> with the static SDK. It reports false when the
// space already exists (409), as create_repo(exist_ok=True) does.
func (c *hubClient) createSpace(ctx context.Context, owner, name string, private bool) (bool, error) {
	body := map[string]any{"name": name, "organization": nil, "private": private, "type": "space", "sdk": "static"}
	var created struct {
		URL string `json:"url"`
	}
	err := c.call(ctx, http.MethodPost, "/api/repos/create", body, &created)
	var he *hubError
	if errors.As(err, &he) && he.status == http.StatusConflict {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// spaceURL is the space's page and git URL on the hub.
func (c *hubClient) spaceURL(owner, name string) string {
	return c.endpoint + "/spaces/" + owner + "/" + name
}

// redactErr hides the token in an error's text (a transport error can quote a request).
func redactErr(err error, token string) error {
	if token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "<token>"))
}
