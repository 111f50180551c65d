package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printResult writes what a command has to show in the --format chosen (outputFormat): v as
// indented JSON, the quiet lines (IDs, one a line) for scripts, or what table writes for people.
// Every command that takes --format prints through it, so the three formats mean the same
// everywhere.
func printResult(out io.Writer, format string, v any, quiet []string, table func() error) error {
	switch format {
	case "json":
		return printJSON(out, v)
	case "quiet":
		var b strings.Builder
		for _, l := range quiet {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		_, err := io.WriteString(out, b.String())
		return err
	}
	return table()
}

// idsOf is the quiet output of a list: each item's ID.
func idsOf[T any](items []T, id func(T) string) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = id(it)
	}
	return ids
}

// printDeleted says that what (e.g. "webhook") id was deleted.
func printDeleted(out io.Writer, format, what, id string) error {
	return printResult(out, format, map[string]any{"id": id, "deleted": true}, []string{id}, func() error {
		_, err := fmt.Fprintf(out, "Deleted %s %s.\n", what, id)
		return err
	})
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// newTable is the table of a list: columns aligned, two spaces apart.
func newTable(out io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(out, 0, 0, 2, ' ', 0) }
