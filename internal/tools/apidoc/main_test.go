package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/robot-api.md's route tables are what docs/robot-api.openapi.json gives: a route added to,
// or changed in, the document and not written to the page fails here.
func TestRobotAPIPageIsCurrent(t *testing.T) {
	docs := filepath.Join("..", "..", "..", "docs")
	err := run(filepath.Join(docs, "robot-api.openapi.json"), filepath.Join(docs, "robot-api.md"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
}

const tinyDoc = `{"openapi": "3.0.3", "paths": {
 "/b": {"post": {"summary": "Make a b", "tags": ["x"], "requestBody": {"content": {"application/json": {"schema":
   {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}}}},
   "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/B"}}}}}},
  "get": {"summary": "URDF of b", "tags": ["x"], "responses": {"200": {"content": {"model/stl": {}}}}}},
 "/a": {"get": {"summary": "A", "description": "200 ` + "`a | b`" + `", "x-doc-path": "/a?n=1", "tags": ["y"], "responses": {}}}
}}`

func TestRenderWritesEachTaggedOperationInTheDocumentsOrder(t *testing.T) {
	page := "# API\n\n<!-- routes tagged x, y: generated -->\n| old | table |\n<!-- end of generated routes -->\n\nprose stays\n"
	got, err := Render([]byte(tinyDoc), []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := "# API\n\n<!-- routes tagged x, y: generated -->\n| Method | Path | Body | Response |\n|---|---|---|---|\n" +
		"| GET | `/b` | – | 200 model/stl: URDF of b |\n" +
		"| POST | `/b` | `{\"name\", \"size\"?}` | 200 B: make a b |\n" +
		"| GET | `/a?n=1` | – | 200 `a \\| b` |\n" +
		"<!-- end of generated routes -->\n\nprose stays\n"
	if string(got) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	again, _ := Render([]byte(tinyDoc), got)
	if string(again) != want {
		t.Fatalf("rendering twice changed the page:\n%s", again)
	}

	if _, err := Render([]byte(tinyDoc), []byte("<!-- routes tagged x: generated -->\n<!-- end of generated routes -->\n")); err == nil || !strings.Contains(err.Error(), "tagged y, which no table") {
		t.Fatalf("an operation in no table: %v", err)
	}
	if _, err := Render([]byte(tinyDoc), []byte("<!-- routes tagged x, y: generated -->\n")); err == nil || !strings.Contains(err.Error(), "has no <!-- end") {
		t.Fatalf("an unterminated table: %v", err)
	}
	untagged := strings.Replace(tinyDoc, `"tags": ["y"], `, "", 1)
	if _, err := Render([]byte(untagged), []byte(page)); err == nil || !strings.Contains(err.Error(), "GET /a has no tag") {
		t.Fatalf("an untagged operation: %v", err)
	}
}

// -check fails on a stale page and leaves it as it was; without -check the page is rewritten.
func TestCheckRefusesAStalePage(t *testing.T) {
	dir := t.TempDir()
	doc, page := filepath.Join(dir, "api.json"), filepath.Join(dir, "api.md")
	stale := "<!-- routes tagged x, y: generated -->\n<!-- end of generated routes -->\n"
	if err := os.WriteFile(doc, []byte(tinyDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(doc, page, true, nil); err == nil || !strings.Contains(err.Error(), "is stale: run `go run ./internal/tools/apidoc`") {
		t.Fatalf("check of a stale page: %v", err)
	}
	if data, _ := os.ReadFile(page); string(data) != stale {
		t.Fatal("-check wrote the page")
	}
	if err := run(doc, page, false, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	if err := run(doc, page, true, nil); err != nil {
		t.Fatalf("after writing: %v", err)
	}
}
