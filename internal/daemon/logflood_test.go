package daemon

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/standin"
)

// The daemon's loggers aggregate repeats: tool calls whose tool_executed events pile up behind a
// stuck hook drop events, one warning each, and the log shows the first few and a summary whose
// count makes up the rest exactly.
func TestLogFloodAggregated(t *testing.T) {
	srv := standin.Start(t, nil)
	cfg := strings.Replace(standin.BaseConfig(t, srv.URL()), "level: debug", "level: info", 1) +
		"hooks:\n  tool_executed: [sleep, \"30\"]\n  timeout: 1s\n"
	d := startDaemon(t, cfg, nil)
	dev := standin.NextRegistration(t, srv)
	const calls = 200
	for range calls {
		if _, err := dev.Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	d.stop(t)

	warning := regexp.MustCompile(`level=WARN msg="hook queue full; dropped the oldest event" .*dropped_total=(\d+)(?: suppressed=(\d+))?`)
	var lines, counted, total int
	for _, m := range warning.FindAllStringSubmatch(d.stderr.String(), -1) {
		lines++
		total, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			n, _ := strconv.Atoi(m[2])
			counted += n
		} else {
			counted++
		}
	}
	// 200 events, one running and 64 queued at most: at least 135 dropped.
	if total < calls-65 || counted != total || lines > 8 {
		t.Errorf("%d warning lines standing for %d drops, the last saying %d; want a handful for all of them\n%s",
			lines, counted, total, d.stderr.String())
	}
}
