package git

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// WriteCommit writes a commit with git fast-import, which updates c.Ref only as a fast-forward of
// c.Parent (the hub holds the space's lock meanwhile, so no push moves it). fast-import builds the
// trees and writes one pack however many files the commit has; cancelling ctx kills it, and a
// commit it did not finish leaves the ref where it was.
func (g *Repos) WriteCommit(ctx context.Context, space string, c spaces.CommitWrite) error {
	before, err := g.Refs(ctx, space)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, g.git, "fast-import", "--quiet", "--done", "--date-format=raw")
	cmd.Dir, cmd.Env = g.Dir(space), g.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting git fast-import: %w", err)
	}
	writeErr := writeFastImport(bufio.NewWriterSize(stdin, 64<<10), c)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return gitFailed("fast-import into "+space, err, stderr.String())
	}
	if writeErr != nil {
		return writeErr
	}
	// fast-import leaves a ref that would not fast-forward where it is, with a warning and status 0.
	refs, err := g.Refs(ctx, space)
	if err != nil {
		return err
	}
	if refs[c.Ref] == before[c.Ref] {
		return &fault.Error{Kind: fault.Refused, Msg: fmt.Sprintf("%s moved while the commit was written: fetch it and commit again", strings.TrimPrefix(c.Ref, "refs/heads/"))}
	}
	return nil
}

func writeFastImport(w *bufio.Writer, c spaces.CommitWrite) error {
	message := c.Message
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	stamp := fmt.Sprintf("%s %d +0000", c.Author, c.When.Unix())
	fmt.Fprintf(w, "commit %s\nauthor %s\ncommitter %s\ndata %d\n%s", c.Ref, stamp, stamp, len(message), message)
	if c.Parent != "" {
		fmt.Fprintf(w, "from %s\n", c.Parent)
	}
	for _, ch := range c.Changes {
		if ch.Delete {
			fmt.Fprintf(w, "D %s\n", quotePath(ch.Path))
			continue
		}
		fmt.Fprintf(w, "M %s inline %s\ndata %d\n", ch.Mode, quotePath(ch.Path), ch.Content.Size())
		if _, err := io.Copy(w, io.NewSectionReader(ch.Content, 0, ch.Content.Size())); err != nil {
			return err
		}
		w.WriteByte('\n')
	}
	w.WriteString("\ndone\n")
	return w.Flush()
}

// quotePath quotes a path the way git's C-style quoting reads it, so that any name (with spaces,
// quotes or non-ASCII letters) reaches fast-import intact.
func quotePath(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
