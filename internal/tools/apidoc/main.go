// Command apidoc writes the route tables of docs/robot-api.md from docs/robot-api.openapi.json, so
// that the page and the OpenAPI document (which the daemon's tests validate every answer against)
// cannot drift: the page's prose is written by hand, its tables are generated.
//
// A table is the lines between
//
//	<!-- routes tagged apps, robot: generated from robot-api.openapi.json by `go run ./internal/tools/apidoc`; do not edit -->
//	<!-- end of generated routes -->
//
// and lists the operations whose first tag is one of those, in the document's order. A row is the
// method, the path (x-doc-path when the page shows it with its query), the body (x-doc-body, else
// the request body's shape) and the answer (the description, else the 200 answer and the summary).
//
//	go run ./internal/tools/apidoc            # rewrite docs/robot-api.md
//	go run ./internal/tools/apidoc -check     # exit 1 when it is stale
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	docPath := flag.String("openapi", "docs/robot-api.openapi.json", "the OpenAPI document")
	pagePath := flag.String("page", "docs/robot-api.md", "the page whose route tables are generated")
	check := flag.Bool("check", false, "do not write: exit 1 when the page is not what the document gives")
	flag.Parse()
	if err := run(*docPath, *pagePath, *check, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apidoc:", err)
		os.Exit(1)
	}
}

func run(docPath, pagePath string, check bool, out io.Writer) error {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	page, err := os.ReadFile(pagePath)
	if err != nil {
		return err
	}
	got, err := Render(doc, page)
	if err != nil {
		return fmt.Errorf("%s: %w", docPath, err)
	}
	if bytes.Equal(got, page) {
		return nil
	}
	if check {
		return fmt.Errorf("%s is stale: run `go run ./internal/tools/apidoc` to write its route tables from %s", pagePath, docPath)
	}
	if err := os.WriteFile(pagePath, got, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote the route tables of %s\n", pagePath)
	return nil
}

const (
	beginPrefix = "<!-- routes tagged "
	endMarker   = "<!-- end of generated routes -->"
)

// methods are the operations of a path item, in the order a table lists them.
var methods = []string{"get", "put", "post", "patch", "delete"}

type operation struct {
	method, path string
	Summary      string   `json:"summary"`
	Description  string   `json:"description"`
	Tags         []string `json:"tags"`
	DocPath      string   `json:"x-doc-path"`
	DocBody      string   `json:"x-doc-body"`
	RequestBody  *struct {
		Content map[string]struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// Render returns page with its route tables written from the OpenAPI document doc.
func Render(doc, page []byte) ([]byte, error) {
	var top struct {
		Paths json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, err
	}
	paths, err := orderedObject(top.Paths)
	if err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	var ops []*operation
	for _, p := range paths {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(p.value, &item); err != nil {
			return nil, fmt.Errorf("paths %s: %w", p.key, err)
		}
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			op := &operation{method: strings.ToUpper(m), path: p.key}
			if err := json.Unmarshal(raw, op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", op.method, p.key, err)
			}
			if len(op.Tags) == 0 {
				return nil, fmt.Errorf("%s %s has no tag: the tag says which table of the page lists it", op.method, p.key)
			}
			ops = append(ops, op)
		}
	}

	var out bytes.Buffer
	listed := map[string]bool{}
	lines := strings.SplitAfter(string(page), "\n")
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, beginPrefix) {
			continue
		}
		spec, _, ok := strings.Cut(strings.TrimPrefix(line, beginPrefix), ":")
		if !ok {
			return nil, fmt.Errorf("page line %d: %q does not name its tags (routes tagged a, b: ...)", i+1, line)
		}
		tags := strings.Split(spec, ", ")
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != endMarker {
			if strings.HasPrefix(strings.TrimSpace(lines[end]), beginPrefix) {
				break
			}
			end++
		}
		if end == len(lines) || strings.TrimSpace(lines[end]) != endMarker {
			return nil, fmt.Errorf("page line %d: the table has no %s", i+1, endMarker)
		}
		out.WriteString("| Method | Path | Body | Response |\n|---|---|---|---|\n")
		for _, op := range ops {
			if slices.Contains(tags, op.Tags[0]) {
				fmt.Fprintf(&out, "| %s | `%s` | %s | %s |\n", op.method, op.pagePath(), cell(op.body()), cell(op.answer()))
				listed[op.Tags[0]] = true
			}
		}
		out.WriteString(lines[end])
		i = end
	}
	for _, op := range ops {
		if !listed[op.Tags[0]] {
			return nil, fmt.Errorf("%s %s is tagged %s, which no table of the page lists (add %s%s: ...)", op.method, op.path, op.Tags[0], beginPrefix, op.Tags[0])
		}
	}
	return out.Bytes(), nil
}

func (op *operation) pagePath() string {
	if op.DocPath != "" {
		return op.DocPath
	}
	return op.path
}

func (op *operation) body() string {
	if op.DocBody != "" {
		return op.DocBody
	}
	if op.RequestBody == nil {
		return "–"
	}
	for _, ct := range sortedKeys(op.RequestBody.Content) {
		return shape(op.RequestBody.Content[ct].Schema, ct)
	}
	return "–"
}

func (op *operation) answer() string {
	if op.Description != "" {
		return op.Description
	}
	ok, found := op.Responses["200"]
	if !found {
		return op.Summary
	}
	what := ""
	for _, ct := range sortedKeys(ok.Content) {
		what = " " + shape(ok.Content[ct].Schema, ct)
		break
	}
	return "200" + what + ": " + lowerFirst(op.Summary)
}

// lowerFirst lowers a summary's capital, unless it starts an acronym (URDF).
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && !(s[1] >= 'A' && s[1] <= 'Z') {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// shape is a schema in a few characters: its name, an object's fields ({"a", "b"?}), or the type.
func shape(schema json.RawMessage, contentType string) string {
	var s struct {
		Ref        string          `json:"$ref"`
		Type       string          `json:"type"`
		Required   []string        `json:"required"`
		Properties json.RawMessage `json:"properties"`
		Items      json.RawMessage `json:"items"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return contentType
	}
	switch {
	case s.Ref != "":
		return s.Ref[strings.LastIndex(s.Ref, "/")+1:]
	case s.Type == "object" && len(s.Properties) > 0:
		props, err := orderedObject(s.Properties)
		if err != nil {
			return "object"
		}
		fields := make([]string, len(props))
		for i, p := range props {
			fields[i] = `"` + p.key + `"`
			if !slices.Contains(s.Required, p.key) {
				fields[i] += "?"
			}
		}
		return "`{" + strings.Join(fields, ", ") + "}`"
	case s.Type == "array" && len(s.Items) > 0:
		return "[" + shape(s.Items, contentType) + "]"
	case s.Type != "" && contentType == "application/json":
		return s.Type
	}
	return contentType
}

// cell makes text one table cell: on one line, its pipes escaped.
func cell(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] == '|' && (i == 0 || text[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(text[i])
	}
	return b.String()
}

type member struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object's members in the order they are written (a map would lose
// it, and the page lists the routes in the document's order).
func orderedObject(data json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: t.(string), value: v})
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
