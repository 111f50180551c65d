// Package readmetest holds the README's shell blocks as a newcomer pastes them: which blocks there
// are, where, and what their info strings say (run in the background until ports answer, or skip
// because they need the internet, an account, a cloud or a robot). Its test runs them, in order.
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
