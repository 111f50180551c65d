package apps

import "testing"

func TestRedaction(t *testing.T) {
	// Whole: user and password (net/url's Redacted keeps the user, which may be the token).
	for in, want := range map[string]string{
		"https://alice:hunter2@idx.example/simple": "https://xxxxx@idx.example/simple",
		"https://tok123@idx.example/simple":        "https://xxxxx@idx.example/simple",
		"https://alice:p@ss@idx.example/simple":    "https://xxxxx@idx.example/simple",
		"https://alice:@idx.example/simple?x=1":    "https://xxxxx@idx.example/simple?x=1",
		"https://idx.example/simple":               "https://idx.example/simple",
		"ssh://git:tok@host:22/u/app.git":          "ssh://xxxxx@host:22/u/app.git",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"fatal: unable to access 'https://alice:hunter2@h/x/': refused": "fatal: unable to access 'https://xxxxx@h/x/': refused",
		"from https://tok@h/simple and git+https://u:p@ss@h2/x.git":     "from https://xxxxx@h/simple and git+https://xxxxx@h2/x.git",
		"mail alice@example.com about https://h/x":                      "mail alice@example.com about https://h/x",
	} {
		if got := RedactText(in); got != want {
			t.Errorf("RedactText(%s) = %s, want %s", in, got, want)
		}
	}
	if got := requirementName(`dep-x.y>=1.1; python_version >= "3"`); got != "dep-x.y" {
		t.Errorf("requirementName: %q", got)
	}
}
