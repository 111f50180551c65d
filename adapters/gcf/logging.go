package gcf

import (
	"io"
	"log/slog"
)

// NewLogger returns a logger writing one JSON object per line to w (stderr or stdout, which Cloud
// Functions send to Cloud Logging), with the fields Cloud Logging reads: "severity" (DEBUG, INFO,
// WARNING, ERROR, CRITICAL), "message" and "time". Records below level are dropped.
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: cloudLoggingFields}))
}

func cloudLoggingFields(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.MessageKey:
		a.Key = "message"
	case slog.LevelKey:
		a.Key = "severity"
		a.Value = slog.StringValue(severity(a.Value.Any().(slog.Level)))
	}
	return a
}

// severity is Cloud Logging's name for a slog level.
func severity(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "DEBUG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARNING"
	case l == slog.LevelError:
		return "ERROR"
	default:
		return "CRITICAL"
	}
}
