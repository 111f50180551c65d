package hub

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("hf_from_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		name                 string
		env                  map[string]string
		endpointFlag, tokFlg string
		endpoint, token, src string
	}{
		{"defaults", map[string]string{"HOME": "/nonexistent"}, "", "", DefaultEndpoint, "", ""},
		{"env", map[string]string{"HF_ENDPOINT": "http://127.0.0.1:7861", "HF_TOKEN": "hf_env", "HF_HOME": dir}, "", "", "http://127.0.0.1:7861", "hf_env", "HF_TOKEN"},
		{"flags win", map[string]string{"HF_ENDPOINT": "http://a", "HF_TOKEN": "hf_env"}, "http://b", "hf_flag", "http://b", "hf_flag", "--token"},
		{"token file under HF_HOME", map[string]string{"HF_HOME": dir}, "", "", DefaultEndpoint, "hf_from_file", filepath.Join(dir, "token")},
		{"HF_TOKEN_PATH", map[string]string{"HF_TOKEN_PATH": filepath.Join(dir, "token"), "HF_HOME": "/nonexistent"}, "", "", DefaultEndpoint, "hf_from_file", filepath.Join(dir, "token")},
		{"home cache", map[string]string{"HOME": filepath.Dir(dir)}, "", "", DefaultEndpoint, "", ""},
	} {
		got, err := ConfigFromEnv(env(c.env), c.endpointFlag, c.tokFlg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Endpoint != c.endpoint || got.Token != c.token || got.TokenSource != c.src {
			t.Errorf("%s: %+v, want %s %s %s", c.name, got, c.endpoint, c.token, c.src)
		}
	}
}

// A newcomer's HF_ENDPOINT=127.0.0.1:7861 (no scheme) reads as what it is: the variable, its value,
// and the URL that was meant.
func TestConfigFromEnvNamesABadEndpoint(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		name, flag, envValue, want string
	}{
		{"no scheme, loopback", "", "127.0.0.1:7861", `HF_ENDPOINT: "127.0.0.1:7861" is not an http(s) URL: it has no scheme; write http://127.0.0.1:7861`},
		{"no scheme, localhost", "", "localhost:7861", `HF_ENDPOINT: "localhost:7861" is not an http(s) URL: it has no scheme; write http://localhost:7861`},
		{"no scheme, a hub's name", "", "huggingface.co", `HF_ENDPOINT: "huggingface.co" is not an http(s) URL: it has no scheme; write https://huggingface.co`},
		{"another scheme, by flag", "ftp://hub", "", `--endpoint: "ftp://hub" is not an http(s) URL such as https://huggingface.co`},
		{"credentials hidden", "", "alice:hf_secret@127.0.0.1:7861", `HF_ENDPOINT: "xxxxx@127.0.0.1:7861" is not an http(s) URL: it has no scheme; write http://xxxxx@127.0.0.1:7861`},
	} {
		_, err := ConfigFromEnv(env(map[string]string{"HF_ENDPOINT": c.envValue}), c.flag, "")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}
}
