package console

import (
	"bytes"
	"testing"
)

func TestHeard(t *testing.T) {
	var out bytes.Buffer
	c := &Console{Out: NewSyncWriter(&out), Prompt: "serve> "}
	c.Heard("AA-BB-CC-DD-EE-01", "set the volume to thirty", "voice")
	c.Heard("AA-BB-CC-DD-EE-01", "hello", "")
	c.Interactive = true
	c.Heard("AA-BB-CC-DD-EE-02", "smile", "voice")
	want := "AA-BB-CC-DD-EE-01 heard: set the volume to thirty\nAA-BB-CC-DD-EE-01 said: hello\n\rAA-BB-CC-DD-EE-02 heard: smile\nserve> "
	if got := out.String(); got != want {
		t.Errorf("printed %q\nwant    %q", got, want)
	}
}
