package console

import (
	"context"
	"strings"
	"testing"
)

// forgetServer is a fakeServer whose hub binds MACs.
type forgetServer struct {
	*fakeServer
	bound map[string]bool
}

func (f forgetServer) Forget(_ context.Context, mac string) (bool, error) {
	was := f.bound[mac]
	delete(f.bound, mac)
	return was, nil
}

// forget MAC frees a MAC the server binds; it says so when there was nothing to free, and needs
// a MAC and a server that binds MACs.
func TestForget(t *testing.T) {
	var out strings.Builder
	srv := forgetServer{newFake(), map[string]bool{"AA-BB-CC-DD-EE-04": true}}
	c := &Console{Server: srv, Out: NewSyncWriter(&out), Prompt: "serve> "}
	ctx := context.Background()
	for _, line := range []string{"forget aa:bb:cc:dd:ee:04", "forget AA-BB-CC-DD-EE-04"} {
		if err := c.Exec(ctx, line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	want := "serve> forget aa:bb:cc:dd:ee:04\nAA-BB-CC-DD-EE-04 is free: the next device to register it is bound to it\n" +
		"serve> forget AA-BB-CC-DD-EE-04\nAA-BB-CC-DD-EE-04 was bound to no client\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if err := c.Exec(ctx, "forget"); err == nil || !strings.Contains(err.Error(), "usage: forget MAC") {
		t.Errorf("forget without a MAC: %v", err)
	}
	c.Server = newFake()
	if err := c.Exec(ctx, "forget AA-BB-CC-DD-EE-04"); err == nil || !strings.Contains(err.Error(), "binds no MAC") {
		t.Errorf("forget on a server without bindings: %v", err)
	}
}
