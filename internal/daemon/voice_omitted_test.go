//go:build devicectl_omit_stt && devicectl_omit_wake

package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// The board build refuses what it leaves out, naming the key and the tag.
func TestVoiceOmittedRefused(t *testing.T) {
	srv := standin.Start(t, nil)
	for _, tc := range []struct{ extra, want string }{
		{"voice:\n  listen: vad\n  stt: command\n  stt_command: [whisper-cli]\n", "voice.stt: this devicectl is built without on-device speech to text (the devicectl_omit_stt build tag)"},
		{"voice:\n  listen: wake\n  wake_word: hello robot\n", "voice.listen: this devicectl is built without the wake word (the devicectl_omit_wake build tag)"},
	} {
		c := config.Defaults()
		if err := config.Parse([]byte(standin.BaseConfig(t, srv.URL())+tc.extra), c); err != nil {
			t.Fatal(err)
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		err := New(c, nil).Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run = %v; want %q", err, tc.want)
		}
	}
}
