package doctor

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

func TestPrint(t *testing.T) {
	var b bytes.Buffer
	results := []Result{
		{Name: "mac", Detail: "AA-BB-CC-DD-EE-FF"},
		{Name: "token", Warn: "readable by others", Remedy: "chmod 600 f"},
		{Name: "websocket", Err: errors.New("refused"), Remedy: "check the path"},
		{Name: "face", Err: errors.New("no display")},
	}
	if err := Print(&b, results); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"mac        OK    AA-BB-CC-DD-EE-FF\n" +
		"token      WARN  readable by others\n" +
		"                 -> chmod 600 f\n" +
		"websocket  FAIL  refused\n" +
		"                 -> check the path\n" +
		"face       FAIL  no display\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	if !Failed(results) || Failed(results[:2]) {
		t.Error("Failed: want true with a FAIL row and false with a WARN only")
	}
}

// names returns each row as "name OK|WARN|FAIL".
func names(results []Result) string {
	var s []string
	for _, r := range results {
		state := "OK"
		if r.Err != nil {
			state = "FAIL"
		} else if r.Warn != "" {
			state = "WARN"
		}
		s = append(s, r.Name+" "+state)
	}
	return strings.Join(s, ", ")
}

func TestCheckServer(t *testing.T) {
	leakcheck.Check(t)
	t.Setenv("HTTP_PROXY", "") // the direct way: a proxy in the environment would be checked instead
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := &Server{URL: srv.URL(), MAC: "AA-BB-CC-DD-EE-FF", UserAgent: "devicectl/test", HandshakeTimeout: 5 * time.Second}
	if got := names(CheckServer(t.Context(), s)); got != "tcp OK, websocket OK" {
		t.Errorf("a live server: %s", got)
	}

	// A port nobody listens on: the tcp step fails and the handshake is not tried.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	res := CheckServer(t.Context(), &Server{URL: "ws://" + addr + "/", HandshakeTimeout: 5 * time.Second})
	if got := names(res); got != "tcp FAIL" || !strings.Contains(res[0].Remedy, "listening on "+addr) {
		t.Errorf("no server: %s, remedy %q", got, res[0].Remedy)
	}

	if got := names(CheckServer(t.Context(), &Server{})); got != "server FAIL" {
		t.Errorf("no URL: %s", got)
	}
}

// The certificate step: an unknown CA fails with a remedy; trusting it passes; a server that
// refuses the token names the token in its remedy.
func TestCheckServerTLSAndToken(t *testing.T) {
	leakcheck.Check(t)
	t.Setenv("HTTPS_PROXY", "")
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer ts.Close()
	url := "wss" + strings.TrimPrefix(ts.URL, "https")
	res := CheckServer(t.Context(), &Server{URL: url, HandshakeTimeout: 5 * time.Second})
	if got := names(res); got != "tcp OK, tls FAIL" || !strings.Contains(res[1].Remedy, "server.ca_file") {
		t.Errorf("an unknown CA: %s, %+v", got, res)
	}
	conf := &tls.Config{RootCAs: ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	res = CheckServer(t.Context(), &Server{URL: url, TLS: conf, Token: "t", HandshakeTimeout: 5 * time.Second, TokenRemedy: "check the token file"})
	if got := names(res); got != "tcp OK, tls OK, websocket FAIL" || res[2].Remedy != "the server refused the token: check the token file" {
		t.Errorf("a refused token: %s, %+v", got, res)
	}
	if !strings.HasPrefix(res[1].Detail, "verified: ") {
		t.Errorf("tls detail %q", res[1].Detail)
	}
	res = CheckServer(t.Context(), &Server{URL: url, TLS: conf, HandshakeTimeout: 5 * time.Second, TokenRemedy: "check the token file"})
	if got := names(res); got != "tcp OK, tls OK, websocket FAIL" || !strings.Contains(res[2].Remedy, "none is configured: set server.token_file") {
		t.Errorf("no token, refused: %s, %+v", got, res)
	}
}

// wss:// to a server that speaks plain HTTP is the scheme's fault, not the certificate's.
func TestCheckServerWSSToPlain(t *testing.T) {
	leakcheck.Check(t)
	t.Setenv("HTTPS_PROXY", "")
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	url := "wss" + strings.TrimPrefix(ts.URL, "http")
	res := CheckServer(t.Context(), &Server{URL: url, HandshakeTimeout: 5 * time.Second})
	if got := names(res); got != "tcp OK, tls FAIL" || !strings.Contains(res[1].Remedy, "use ws:// in server.url") || strings.Contains(res[1].Remedy, "certificate") {
		t.Errorf("wss to plain HTTP: %s, %+v", got, res)
	}
}

func TestParts(t *testing.T) {
	ctx := context.Background()
	spk := sim.NewSpeaker(&sim.SpeakerOptions{Volume: 35})
	r := Speaker(ctx, Part[hal.Speaker]{Remedy: "check the card", Open: func(context.Context) (hal.Speaker, error) { return spk, nil }})
	if r.Err != nil || !strings.HasSuffix(r.Detail, ", volume 35%") {
		t.Errorf("speaker: %+v", r)
	}
	boom := errors.New("no such card")
	r = Speaker(ctx, Part[hal.Speaker]{Remedy: "check the card", Open: func(context.Context) (hal.Speaker, error) { return nil, boom }})
	if !errors.Is(r.Err, boom) || r.Remedy != "check the card" {
		t.Errorf("a speaker that does not open: %+v", r)
	}
	r = Face(ctx, Part[hal.Face]{Remedy: "check the wiring", Optional: true, Open: func(context.Context) (hal.Face, error) { return nil, boom }})
	if r.Err != nil || r.Warn != "no such card (optional: run starts without set_virtual_human_expression)" || r.Remedy != "check the wiring" {
		t.Errorf("an optional face that does not open: %+v", r)
	}
	r = Face(ctx, Part[hal.Face]{Open: func(context.Context) (hal.Face, error) { return sim.NewFace(nil), nil }})
	if r.Err != nil || !strings.HasSuffix(r.Detail, "showing idle") {
		t.Errorf("face: %+v", r)
	}
	if r := CheckSpeech(nil); r.Err != nil || !strings.HasPrefix(r.Detail, "off") {
		t.Errorf("speech off: %+v", r)
	}
	if r := CheckSpeech(func() (Speech, error) { return nil, boom }); !errors.Is(r.Err, boom) || !strings.Contains(r.Remedy, "espeak-ng") {
		t.Errorf("speech that does not open: %+v", r)
	}
}
