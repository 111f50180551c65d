// Package readmetest holds the README's shell blocks as a newcomer pastes them: which blocks there
// are, where, and what their info strings say (run in the background until ports answer, or skip
// because they need the internet, an account, a cloud or a robot), and its layout section. Its tests
// run the blocks, in order, and check that the layout names every package.
package readmetest

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Block is one fenced shell block of a Markdown document.
type Block struct {
	Line    int               // the line of its first command (1-based)
	Section string            // the heading (level 1 to 3) it is under: its background blocks end with it
	Tags    []string          // the info string's words after the language: background, internet, ...
	Attrs   map[string]string // the info string's key=value words: wait=7861,8000
	Text    string            // the commands, as written
}

// Has reports whether the block's info string has tag.
func (b Block) Has(tag string) bool {
	for _, t := range b.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// shells are the info-string languages of blocks that are shell commands.
var shells = map[string]bool{"sh": true, "bash": true, "shell": true, "console": false}

// ShellBlocks returns the fenced blocks of md whose language is sh, bash or shell, in order.
// The Markdown is read by goldmark (CommonMark), so that fences inside lists, longer fences and
// tildes are what a Markdown viewer shows.
func ShellBlocks(md []byte) []Block {
	doc := goldmark.New().Parser().Parse(text.NewReader(md))
	var out []Block
	section := ""
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			switch n := n.(type) {
			case *ast.Heading:
				if n.Level <= 3 {
					section = headingText(n, md)
				}
			case *ast.FencedCodeBlock:
				if n.Info == nil {
					return ast.WalkSkipChildren, nil
				}
				words := strings.Fields(string(n.Info.Segment.Value(md)))
				if len(words) == 0 || !shells[words[0]] {
					return ast.WalkSkipChildren, nil
				}
				b := Block{Section: section, Attrs: map[string]string{}}
				for _, w := range words[1:] {
					if k, v, ok := strings.Cut(w, "="); ok {
						b.Attrs[k] = v
					} else {
						b.Tags = append(b.Tags, w)
					}
				}
				var sb strings.Builder
				lines := n.Lines()
				for i := 0; i < lines.Len(); i++ {
					seg := lines.At(i)
					if i == 0 {
						b.Line = 1 + strings.Count(string(md[:seg.Start]), "\n")
					}
					sb.Write(seg.Value(md))
				}
				b.Text = sb.String()
				out = append(out, b)
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		})
	}
	return out
}

func headingText(h *ast.Heading, md []byte) string {
	var sb strings.Builder
	lines := h.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		sb.Write(seg.Value(md))
	}
	return strings.TrimSpace(sb.String())
}

// Layout reads the README's layout: the first fenced block without a language under the heading
// "Layout", a tree of directories with what each holds. It returns each listed directory (its path
// from the repository's root, with a trailing slash) and its description. An entry is a line
// indented less than its descriptions that starts with one or more names ending in "/"; an entry
// indented by two spaces is inside the last one that was not; deeper lines continue a description.
func Layout(md []byte) map[string]string {
	doc := goldmark.New().Parser().Parse(text.NewReader(md))
	var block *ast.FencedCodeBlock
	section := ""
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || block != nil {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			section = headingText(n, md)
		case *ast.FencedCodeBlock:
			if section == "Layout" && n.Info == nil {
				block = n
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	out := map[string]string{}
	if block == nil {
		return out
	}
	var parent string
	var current []string
	lines := block.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(md)), "\n")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		if indent < 8 && strings.HasSuffix(words[0], "/") {
			current = current[:0]
			var desc []string
			for j, w := range words {
				if !strings.HasSuffix(w, "/") {
					desc = words[j:]
					break
				}
				path := w
				if indent > 0 {
					path = parent + w
				}
				current = append(current, path)
			}
			if indent == 0 {
				parent = current[0]
			}
			for _, p := range current {
				out[p] = strings.Join(desc, " ")
			}
			continue
		}
		for _, p := range current {
			out[p] += " " + strings.Join(words, " ")
		}
	}
	return out
}
