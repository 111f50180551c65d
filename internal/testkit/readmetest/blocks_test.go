package readmetest_test

import (
	"reflect"
	"testing"

	"github.com/robothub/robothub/internal/testkit/readmetest"
)

func TestShellBlocks(t *testing.T) {
	md := "# t\n\n```sh overview\nmake run\n```\n\n## Quick start\n\n- a list\n\n  ```bash background wait=7861,8000\n  make run\n  ```\n\n" +
		"```go\npackage main\n```\n\n````sh\necho '```'\n````\n\n```\nplain\n```\n\n## Other\n\n~~~shell internet\ncurl https://example.com\n~~~\n"
	got := readmetest.ShellBlocks([]byte(md))
	want := []readmetest.Block{
		{Line: 4, Section: "t", Tags: []string{"overview"}, Attrs: map[string]string{}, Text: "make run\n"},
		{Line: 12, Section: "Quick start", Tags: []string{"background"}, Attrs: map[string]string{"wait": "7861,8000"}, Text: "make run\n"},
		{Line: 20, Section: "Quick start", Attrs: map[string]string{}, Text: "echo '```'\n"},
		{Line: 30, Section: "Other", Tags: []string{"internet"}, Attrs: map[string]string{}, Text: "curl https://example.com\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if !got[1].Has("background") || got[1].Has("internet") {
		t.Error("Has")
	}
}
