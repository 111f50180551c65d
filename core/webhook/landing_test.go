package webhook

import (
	"bytes"
	"html/template"
	"os"
	"testing"
)

// TestLandingMatchesTemplate holds the hand-written landing page (landing.go) to the html/template
// it replaced, testdata/landing.html.tmpl, byte for byte: the same page for every branch, and the
// same escaping of hostile values (markup, quotes, &, +, NUL, invalid UTF-8) in route names and
// addresses.
func TestLandingMatchesTemplate(t *testing.T) {
	text, err := os.ReadFile("testdata/landing.html.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template.Must(template.New("landing").Parse(string(text)))
	hostile := `<script>alert('x')</script> & "q" +1 ` + "\x00 \xff é"
	cases := map[string]landingData{
		"empty, open, public": {Base: "https://hooks.example.com", Example: "https://hooks.example.com/webhooks/<name>"},
		"routes, secret, local": {
			Routes:    []Route{{Name: "say-hello", Path: "/webhooks/say-hello"}, {Name: "team/retrain", Path: "/webhooks/team/retrain"}},
			SecretSet: true, Base: "http://127.0.0.1:8080", Local: true, Example: "http://127.0.0.1:8080/webhooks/say-hello",
		},
		"hostile values": {
			Routes:    []Route{{Name: hostile, Path: "/webhooks/" + hostile}},
			SecretSet: true, Base: "http://" + hostile, Local: true, Example: "http://" + hostile + "/webhooks/" + hostile,
		},
	}
	for name, d := range cases {
		var want, got bytes.Buffer
		if err := tmpl.Execute(&want, d); err != nil {
			t.Fatal(err)
		}
		d.render(&got)
		if got.String() != want.String() {
			t.Errorf("%s: the page differs from html/template's:\n--- got\n%s\n--- want\n%s", name, got.String(), want.String())
		}
	}
}
