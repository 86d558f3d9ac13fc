// Package natstest runs a NATS server with JetStream inside the test process, from the
// nats-server Go module, for the tests of a cluster of serve nodes (agent/cluster). Only tests
// import it: the server module never reaches a devicectl binary.
package natstest

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a NATS server started by Start.
type Server struct {
	s    *server.Server
	opts server.Options
}

// Start runs a NATS server with JetStream on a free loopback port, its storage in a temporary
// directory, until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	o := server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
	srv := &Server{opts: o}
	srv.start(t)
	t.Cleanup(srv.Shutdown)
	return srv
}

func (srv *Server) start(t testing.TB) {
	t.Helper()
	o := srv.opts // NewServer keeps and changes the options it is given
	s, err := server.NewServer(&o)
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("nats-server: not ready for connections within 10s")
	}
	srv.s = s
	// A restart listens on the same port, so that clients reconnect to it.
	srv.opts.Port = s.Addr().(*net.TCPAddr).Port
}

// URL is the server's nats:// URL.
func (srv *Server) URL() string { return srv.s.ClientURL() }

// Shutdown stops the server and waits for it; clients see their connection drop.
func (srv *Server) Shutdown() {
	if srv.s == nil {
		return
	}
	srv.s.Shutdown()
	srv.s.WaitForShutdown()
}

// Restart starts the server again on the same port and storage after Shutdown.
func (srv *Server) Restart(t testing.TB) {
	t.Helper()
	srv.start(t)
}
