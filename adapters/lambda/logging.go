package lambda

import (
	"io"
	"log/slog"
	"strings"
)

// LogLevelEnv is set by Lambda's advanced logging controls to the application log level.
const LogLevelEnv = "AWS_LAMBDA_LOG_LEVEL"

// NewLogger returns a logger writing one JSON object per line to w (stderr, which Lambda sends to
// CloudWatch Logs), with the "level" field Lambda's log-level filtering reads. Its level is
// AWS_LAMBDA_LOG_LEVEL (TRACE, DEBUG, INFO, WARN, ERROR or FATAL), INFO when unset or unknown.
func NewLogger(w io.Writer, getenv func(string) string) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: logLevel(getenv(LogLevelEnv))}))
}

func logLevel(s string) slog.Level {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "TRACE", "DEBUG":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERROR":
		return slog.LevelError
	case "FATAL":
		return slog.LevelError + 4
	default:
		return slog.LevelInfo
	}
}
