package cliapp

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"syscall"
)

// ListenError says why a server cannot listen on addr; when the port is taken (a second make run,
// robothub dev or hub serve on the default ports), it names the flag that picks another.
func ListenError(what, addr, flag string, err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Sprintf("%s cannot listen on %s: the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with %s 127.0.0.1:PORT", what, addr, flag)
	}
	return fmt.Sprintf("%s cannot listen on %s (%s): %v", what, addr, flag, err)
}

// NewLogger is the log of a robothub server command: --log-format text or json, --log-level.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, Usagef("--log-level %q: use debug, info, warn or error", level)
	}
	hopts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	default:
		return nil, Usagef("--log-format %q: use text or json", format)
	}
}
