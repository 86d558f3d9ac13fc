package builtin

import (
	"testing"
	"time"
)

func TestHumanUptime(t *testing.T) {
	tests := []struct {
		d      time.Duration
		zh, en string
	}{
		{0, "0秒", "0s"},
		{42 * time.Second, "42秒", "42s"},
		{time.Hour + 5*time.Second, "1小时0分5秒", "1h 0m 5s"},
		{59*time.Minute + 59*time.Second, "59分59秒", "59m 59s"},
		{3*24*time.Hour + 2*time.Minute, "3天0小时2分0秒", "3d 0h 2m 0s"},
		{400 * 24 * time.Hour, "400天0小时0分0秒", "400d 0h 0m 0s"},
	}
	for _, tt := range tests {
		if got := humanUptime(tt.d, &zh); got != tt.zh {
			t.Errorf("humanUptime(%v, zh) = %q, want %q", tt.d, got, tt.zh)
		}
		if got := humanUptime(tt.d, &en); got != tt.en {
			t.Errorf("humanUptime(%v, en) = %q, want %q", tt.d, got, tt.en)
		}
	}
}
