package simdevice_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

var uuid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// Each Start's device has a random Client-Id of its own: another process on the machine cannot
// present it, so it cannot replace the sim's device on the hub (the old fixed "devicectl-local"
// let any process do that).
func TestRandomClientID(t *testing.T) {
	leakcheck.Check(t)
	h := hub.New(nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var ids []string
	for _, mac := range []string{"02-00-00-00-00-01", "02-00-00-00-00-02"} {
		dev, err := simdevice.Start(ctx, config.Defaults(), url, mac, "test", nil, nil, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		d, _ := h.Device(mac)
		if !uuid.MatchString(d.ClientID) {
			t.Errorf("%s registered with Client-Id %q, want a random UUID", mac, d.ClientID)
		}
		ids = append(ids, d.ClientID)
	}
	if ids[0] == ids[1] {
		t.Errorf("two devices with the Client-Id %s", ids[0])
	}

	other, err := hubtest.Dial(ctx, url, &hubtest.Options{ClientID: "devicectl-local"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Register(ctx, "02-00-00-00-00-01", hubtest.Tools); !errors.Is(err, hubtest.ErrRefused) {
		t.Fatalf("another process with the old fixed Client-Id: %v, want a refusal", err)
	}
	if d, _ := h.Device("02-00-00-00-00-01"); d.ClientID != ids[0] {
		t.Errorf("the sim's device was replaced by %+v", d)
	}
}
