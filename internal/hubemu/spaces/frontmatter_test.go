package spaces

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestParseFrontMatter(t *testing.T) {
	for _, c := range []struct {
		name   string
		readme string
		tags   []string
		card   string // the card as JSON; "" skips the check
	}{
		{"flow list", "---\ntags: [robot, robot_python_app]\n---\n# App\n", []string{"robot", "robot_python_app"}, `{"tags":["robot","robot_python_app"]}`},
		{"block list, indented", "---\ntitle: Wave\ntags:\n  - robot\n  - robot_python_app\nsdk: static\n---\n", []string{"robot", "robot_python_app"},
			`{"sdk":"static","tags":["robot","robot_python_app"],"title":"Wave"}`},
		{"block list, not indented", "---\ntags:\n- a\n- b\nlicense: mit\n---\n", []string{"a", "b"}, `{"license":"mit","tags":["a","b"]}`},
		// A flow list may span lines and hold comments in YAML; the hand-written reader refused it.
		{"quoted items and comments", "---\n# a comment\ntags: ['it''s', \"x#y\", z # trailing\n  ]\n---\n", []string{"it's", "x#y", "z"}, ""},
		{"quoted flow items", "---\ntags: ['it''s', \"x#y\", z] # trailing\n---\n", []string{"it's", "x#y", "z"}, ""},
		{"scalars", "---\nshort_description: \"Waves: a lot\"\npinned: false\ncolorFrom: red\nemoji: 🤖\nversion: 3\nratio: 0.5\nnothing: ~\n---\n", []string{},
			`{"colorFrom":"red","emoji":"🤖","nothing":null,"pinned":false,"ratio":0.5,"short_description":"Waves: a lot","version":3}`},
		{"duplicates and numbers", "---\ntags: [a, a, 3, true, '']\n---\n", []string{"a", "3", "true"}, ""},
		{"nested mappings", "---\nmodel-index:\n  - name: x\n    results: []\nextra:\n  key: value\ntags: [a]\n---\n", []string{"a"},
			`{"extra":{"key":"value"},"model-index":[{"name":"x","results":[]}],"tags":["a"]}`},
		{"block scalar", "---\ndescription: |\n  line one\n  line two\ntags:\n  - a\n---\n", []string{"a"}, `{"description":"line one\nline two\n","tags":["a"]}`},
		{"invalid YAML gives an empty card", "---\ntags: [a\ntitle: x\n---\n", []string{}, `{}`},
		{"CRLF and BOM", "\ufeff---\r\ntags: [a]\r\n---\r\n", []string{"a"}, ""},
		{"no front matter", "# App\ntags: [a]\n", []string{}, `{}`},
		{"not closed", "---\ntags: [a]\n# App\n", []string{}, `{}`},
		{"closed by dots", "---\ntags: [a]\n...\n", []string{"a"}, ""},
		{"empty tags", "---\ntags:\n---\n", []string{}, `{"tags":null}`},
		{"tags not a list", "---\ntags: robot\n---\n", []string{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			card := parseFrontMatter([]byte(c.readme))
			if got := card.tags(); !slices.Equal(got, c.tags) {
				t.Errorf("tags %q, want %q", got, c.tags)
			}
			if c.card != "" {
				got, err := json.Marshal(card)
				if err != nil {
					t.Fatal(err)
				}
				var want, have any
				_ = json.Unmarshal([]byte(c.card), &want)
				_ = json.Unmarshal(got, &have)
				if !reflect.DeepEqual(have, want) {
					t.Errorf("card %s, want %s", got, c.card)
				}
			}
		})
	}
}

// FuzzParseFrontMatter feeds arbitrary READMEs (pushed by anyone with a write token): the parser
// never panics, and what it reads always encodes as the JSON of cardData, with string tags.
func FuzzParseFrontMatter(f *testing.F) {
	for _, seed := range []string{
		"---\ntags: [robot, robot_python_app]\n---\n",
		"---\ntags:\n  - a\n  - 'b'\nsdk: static\n---\n",
		"---\nx: [\n---\n", "---\n'k': \"v\\u00e9\"\n---\n", "---\n- a\n:\n---\n", "---\n\"unterminated: x\n---\n",
		"---\na:\n  b:\n    - c\n- d\n---\n", "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, readme []byte) {
		card := parseFrontMatter(readme)
		if _, err := json.Marshal(card); err != nil {
			t.Fatalf("the card of %q does not encode: %v", readme, err)
		}
		for _, tag := range card.tags() {
			if tag == "" {
				t.Fatalf("an empty tag from %q", readme)
			}
			if utf8.ValidString(string(readme)) && !utf8.ValidString(tag) {
				t.Fatalf("tag %q is not UTF-8", tag)
			}
		}
	})
}
