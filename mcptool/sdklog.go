package mcptool

import (
	"context"
	"log/slog"
)

// warnOnly passes the SDK's own log records at Warn and above, so its
// per-session Info lines do not drown the proxy's one line per call.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnOnly{w.Handler.WithAttrs(attrs)}
}
func (w warnOnly) WithGroup(name string) slog.Handler { return warnOnly{w.Handler.WithGroup(name)} }

// sdkLogger returns l filtered for the SDK (nil stays nil).
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(warnOnly{l.Handler()})
}
