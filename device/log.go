package device

import "log/slog"

// discardLogger is what a nil *slog.Logger in options stands for: libraries log nothing by default.
var discardLogger = slog.New(slog.DiscardHandler)
