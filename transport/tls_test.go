package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/testing/testca"
)

// TestTLS dials a wss:// server whose certificate comes from a throwaway CA, with the
// tls.Config a caller builds (internal/config builds it from files).
func TestTLS(t *testing.T) {
	ca := testca.New(t, "devicectl-test")
	other := testca.New(t, "someone-else")
	serverCert, _, _ := ca.Issue(t, "server", x509.ExtKeyUsageServerAuth, "127.0.0.1", "agent.test")
	clientCert, _, _ := ca.Issue(t, "device", x509.ExtKeyUsageClientAuth)
	strangerCert, _, _ := other.Issue(t, "stranger", x509.ExtKeyUsageClientAuth)
	roots := func(ca *testca.CA) *x509.CertPool {
		pool := x509.NewCertPool()
		pool.AddCert(ca.Cert)
		return pool
	}

	tests := []struct {
		name    string
		mTLS    bool // the server demands a client certificate from ca
		cfg     *tls.Config
		wantErr func(error) bool // nil: the dial must work
	}{
		{name: "configured CA", cfg: &tls.Config{RootCAs: roots(ca)}},
		{name: "server name", cfg: &tls.Config{RootCAs: roots(ca), ServerName: "agent.test"}},
		{name: "unknown CA", cfg: &tls.Config{RootCAs: roots(other)}, wantErr: isErr[x509.UnknownAuthorityError]},
		{name: "system roots", cfg: nil, wantErr: isErr[x509.UnknownAuthorityError]},
		{name: "hostname mismatch", cfg: &tls.Config{RootCAs: roots(ca), ServerName: "elsewhere.test"}, wantErr: isErr[x509.HostnameError]},
		{name: "mutual TLS", mTLS: true, cfg: &tls.Config{RootCAs: roots(ca), Certificates: []tls.Certificate{clientCert}}},
		{name: "mutual TLS without a client certificate", mTLS: true, cfg: &tls.Config{RootCAs: roots(ca)}, wantErr: isTLSAlert},
		{name: "mutual TLS with a stranger's certificate", mTLS: true,
			cfg: &tls.Config{RootCAs: roots(ca), Certificates: []tls.Certificate{strangerCert}}, wantErr: isTLSAlert},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			peers := make(chan string, 1)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if len(r.TLS.PeerCertificates) > 0 {
					peers <- r.TLS.PeerCertificates[0].Subject.CommonName
				}
				c, err := websocket.Accept(w, r, nil)
				if err != nil {
					return
				}
				c.Close(websocket.StatusNormalClosure, "")
			}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}}
			if tc.mTLS {
				srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
				srv.TLS.ClientCAs = x509.NewCertPool()
				srv.TLS.ClientCAs.AddCert(ca.Cert)
			}
			srv.Config.ErrorLog = quietLog() // refused handshakes are the point here
			srv.StartTLS()
			defer srv.Close()

			s, err := Dial(t.Context(), "wss"+strings.TrimPrefix(srv.URL, "https")+"/", &DialOptions{TLSConfig: tc.cfg})
			if tc.wantErr != nil {
				if err == nil {
					s.Close()
					t.Fatal("Dial succeeded")
				}
				t.Logf("Dial: %v", err)
				if !tc.wantErr(err) {
					t.Errorf("Dial: unexpected error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if tc.mTLS {
				if cn := <-peers; cn != "device" {
					t.Errorf("server saw client certificate %q, want device", cn)
				}
			}
		})
	}
}

func isErr[E error](err error) bool {
	var e E
	return errors.As(err, &e)
}

// isTLSAlert reports a handshake the server refused (with TLS 1.3 the client
// learns it from an alert when it reads the response).
func isTLSAlert(err error) bool {
	var alert tls.AlertError
	var remote *net.OpError
	return errors.As(err, &alert) || errors.As(err, &remote) && strings.Contains(err.Error(), "remote error: tls")
}

// TestInsecureSkipVerifyWarnsEveryDial checks that turning verification off
// connects to an unknown CA's server and warns on every connect.
func TestInsecureSkipVerifyWarnsEveryDial(t *testing.T) {
	leakCheck(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	cfg := &tls.Config{InsecureSkipVerify: true}
	logger, logs := newTestLogger()
	for range 2 {
		s, err := Dial(t.Context(), "wss"+strings.TrimPrefix(srv.URL, "https")+"/", &DialOptions{TLSConfig: cfg, Logger: logger})
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		s.Close()
	}
	if n := logs.Count("level=WARN", "verification is disabled"); n != 2 {
		t.Errorf("%d warnings for 2 dials; log:\n%s", n, logs)
	}
}

// quietLog discards the http.Server's own log of refused handshakes.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
