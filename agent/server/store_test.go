//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
)

// Two servers on one database (agent.db, or agent.store's PostgreSQL: the serve nodes of a
// cluster) share what it keeps: a memory told to one is recalled by the other, a reminder set on
// one is listed by the other, a MAC bound on one is refused to a squatter on the other. A restart
// keeps all three.
func TestSharedStore(t *testing.T) {
	storetest.Each(t, sharedStore)
}

func sharedStore(t *testing.T, where string) {
	c := testConfig(t)
	if store.IsPostgres(where) {
		c.Agent.Store = where
	} else {
		c.Agent.StateDir = filepath.Dir(where)
	}
	a, addrA := startServer(t, c)
	b, addrB := startServer(t, c)
	if a.DBPath != where {
		t.Errorf("DBPath %q; want %s", a.DBPath, where)
	}

	_, leave := runDevice(t, a, "ws://"+addrA+"/", "real-device", "")
	final(t, turn(t, a, agent.Request{Text: "记住我喜欢科技"}))
	final(t, turn(t, a, agent.Request{Text: "10分钟后提醒我喝水"}))
	leave()

	check := func(srv *Server, addr, when string) {
		t.Helper()
		if got := final(t, turn(t, srv, agent.Request{Text: "我喜欢什么"})); !strings.Contains(got, "科技") {
			t.Errorf("%s: 我喜欢什么 → %q; want the memory of 科技", when, got)
		}
		if got := final(t, turn(t, srv, agent.Request{Text: "我有哪些提醒"})); !strings.Contains(got, "喝水") {
			t.Errorf("%s: 我有哪些提醒 → %q; want the reminder of 喝水", when, got)
		}
		if _, details := squat(t, addr, "squatter"); !strings.Contains(details, "bound to another client") {
			t.Errorf("%s: the squatter's registration: %q; want the binding kept", when, details)
		}
	}
	check(b, addrB, "the other server")

	a.Close()
	b.Close()
	c2, addrC := startServer(t, c)
	check(c2, addrC, "after a restart")
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
}

// A password in agent.store works, is never shown (DBPath masks it), and is warned of; a server
// that cannot be reached is an error at start naming agent.store, without the password.
func TestStorePassword(t *testing.T) {
	where := storetest.Where(t, store.Postgres)
	u, err := url.Parse(where)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret") // the test server trusts its socket
	var logs logbuf.Buffer
	c := testConfig(t)
	c.Agent.Store = u.String()
	srv, err := New(&Options{Config: c, Version: "test", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if strings.Contains(srv.DBPath, "s3cret") || !strings.Contains(srv.DBPath, "xxxxx") {
		t.Errorf("DBPath %q; want the password masked", srv.DBPath)
	}
	if !strings.Contains(logs.String(), "agent.store holds a password") || strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log %q; want the warning, without the password", logs.String())
	}

	u.Host = "127.0.0.1:1" // nothing listens there
	q := u.Query()
	q.Del("host") // the test server's socket
	q.Del("port")
	u.RawQuery = q.Encode()
	c.Agent.Store = u.String()
	other, err := New(&Options{Config: c, Version: "test"})
	if err == nil {
		other.Close()
	}
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "agent.store" || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an unreachable server: %v; want a *config.Error on agent.store, without the password", err)
	}
}
