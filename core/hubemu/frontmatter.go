package hubemu

import (
	"bytes"
	"strconv"
	"strings"
)

// maxReadmeBytes caps how much of a README is read for its front matter.
const maxReadmeBytes = 512 << 10

// cardData is a README's YAML front matter, as the hub shows it in a repo's cardData.
type cardData map[string]any

// tags returns the card's tags list: every item as a string, without duplicates, in order.
func (c cardData) tags() []string {
	list, _ := c["tags"].([]any)
	seen := map[string]bool{}
	out := []string{}
	for _, v := range list {
		s, ok := scalarString(v)
		if !ok || s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// parseFrontMatter reads the YAML front matter at the head of a README: the lines between a first
// line "---" and the next "---" (or "..."). It understands the subset that model and space cards
// use: top-level "key: value" scalars (plain, 'single' or "double" quoted), flow lists
// ("tags: [a, b]") and block lists ("tags:" then "- a" lines, indented or not). Nested mappings and
// multi-line scalars are skipped: their key is left out. A README without front matter, or with one
// that is not closed, has an empty card.
func parseFrontMatter(readme []byte) cardData {
	card := cardData{}
	readme = bytes.TrimPrefix(readme, []byte("\xef\xbb\xbf"))
	lines := strings.Split(strings.ReplaceAll(string(readme), "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		return card
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return card
	}
	body := lines[1:end]
	for i := 0; i < len(body); i++ {
		line := body[i]
		if isBlankOrComment(line) || line[0] == ' ' || line[0] == '\t' || line[0] == '-' {
			continue // not a top-level key (items and nested lines are read with their key)
		}
		key, rest, ok := cutKey(line)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(stripComment(rest))
		switch {
		case rest == "":
			// A block list, a nested mapping, or null: look at the lines that belong to this key.
			var items []any
			nested := false
			j := i + 1
			for ; j < len(body); j++ {
				l := body[j]
				if isBlankOrComment(l) {
					continue
				}
				t := strings.TrimLeft(l, " \t")
				if t == l && !strings.HasPrefix(t, "- ") && t != "-" {
					break // the next top-level key
				}
				if t == "-" || strings.HasPrefix(t, "- ") {
					item := strings.TrimSpace(stripComment(strings.TrimPrefix(t, "-")))
					if _, _, isMap := cutKey(item + " "); (t == l || !nested) && !isMap {
						items = append(items, scalar(item))
						continue
					}
				}
				nested = true
			}
			i = j - 1
			switch {
			case nested:
			case items != nil:
				card[key] = items
			default:
				card[key] = nil
			}
		case rest[0] == '[':
			if items, ok := flowList(rest); ok {
				card[key] = items
			}
		case rest[0] == '{', rest[0] == '|', rest[0] == '>', rest[0] == '&', rest[0] == '*', rest[0] == '!':
			// flow mappings, multi-line scalars, anchors, aliases and tags: not read
		default:
			card[key] = scalar(rest)
		}
	}
	return card
}

func isBlankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || t[0] == '#'
}

// cutKey splits "key: rest" (the key plain or quoted).
func cutKey(line string) (key, rest string, ok bool) {
	if line[0] == '"' || line[0] == '\'' {
		q := line[0]
		end := strings.IndexByte(line[1:], q)
		if end < 0 {
			return "", "", false
		}
		key, rest = line[1:1+end], line[2+end:]
		rest, ok = strings.CutPrefix(rest, ":")
		return key, rest, ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
	}
	for i := 0; i < len(line); i++ {
		if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
			return strings.TrimSpace(line[:i]), line[i+1:], i > 0
		}
	}
	return "", "", false
}

// stripComment removes a " # comment" from an unquoted value; quoted text keeps its '#'.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// flowList reads "[a, 'b', "c"]" on one line.
func flowList(s string) ([]any, bool) {
	if !strings.HasSuffix(s, "]") {
		return nil, false
	}
	inner := s[1 : len(s)-1]
	items := []any{}
	var cur strings.Builder
	var quote byte
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			items = append(items, scalar(t))
		}
		cur.Reset()
	}
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			return nil, false // nested collections are not read
		case c == ',':
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	if quote != 0 {
		return nil, false
	}
	flush()
	return items, true
}

// scalar reads one YAML scalar: quoted text, null, a boolean, a number, or plain text.
func scalar(s string) any {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s[1 : len(s)-1]
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	switch strings.ToLower(s) {
	case "", "~", "null":
		return nil
	case "true":
		return true
	case "false":
		return false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, "0123456789") && !strings.ContainsAny(s, "xXpP_") {
		return f
	}
	return s
}
