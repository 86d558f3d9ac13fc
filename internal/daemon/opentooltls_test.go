//go:build !devicectl_omit_opentooltls

package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// selfSigned writes a certificate for 127.0.0.1 and its key in dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "devicectl test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// With opentool.cert_file and key_file the server speaks HTTPS only.
func TestOpenToolServerTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	o := config.OpenToolConfig{CertFile: certFile, KeyFile: keyFile}
	cert, err := loadOpenToolCert(o)
	if err != nil {
		t.Fatal(err)
	}
	s := serveOpenTool(t, o, cert, versionHandler(t))

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}
	resp, err := (&http.Client{Transport: tr}).Get("https://" + s.addr() + "/opentool/version")
	if err != nil {
		t.Fatalf("HTTPS: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"version"`) {
		t.Errorf("HTTPS: %d %s, want the version", resp.StatusCode, b)
	}

	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err = plain.Get("http://" + s.addr() + "/opentool/version")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(b), `"version"`) {
			t.Errorf("plain HTTP to the TLS port: %d %s, want it refused", resp.StatusCode, b)
		}
	}

	// A pair that does not load names the key at fault.
	if err := os.WriteFile(keyFile, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOpenToolCert(o); err == nil || !strings.HasPrefix(err.Error(), "opentool.cert_file: "+certFile) {
		t.Errorf("a bad key file: %v, want an error naming opentool.cert_file and the files", err)
	}
}

// A reload turns TLS on with a new listener, and takes a certificate renewed in place on the
// same one.
func TestOpenToolServerReloadTLS(t *testing.T) {
	srv := standin.Start(t, nil)
	base := standin.BaseConfig(t, srv.URL()) + "opentool:\n  listen: 127.0.0.1:0\n"
	d := startDaemon(t, base, nil)
	standin.NextRegistration(t, srv)
	openToolAddr(t, d, 1)
	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(hc *http.Client, url string) (int, error) {
		t.Helper()
		req, err := http.NewRequestWithContext(standin.WaitCtx(t), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	withTLS := base + fmt.Sprintf("  cert_file: %s\n  key_file: %s\n", certFile, keyFile)
	d.reload(t, withTLS, "configuration reloaded")
	addr := openToolAddr(t, d, 2)
	secure := func(pool *x509.CertPool) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	}
	if status, err := get(secure(pool), "https://"+addr+"/opentool/version"); status != http.StatusOK {
		t.Errorf("HTTPS after the reload: %d, %v", status, err)
	}
	if status, err := get(plain, "http://"+addr+"/opentool/version"); err == nil && status != http.StatusBadRequest {
		t.Errorf("plain HTTP after the reload: %d, want it refused", status)
	}

	// Renewed in place: the same files, a new certificate, the same listener.
	_, _, renewed := selfSigned(t, dir)
	d.reload(t, withTLS, "configuration reloaded")
	if status, err := get(secure(renewed), "https://"+addr+"/opentool/version"); status != http.StatusOK {
		t.Errorf("HTTPS with the renewed certificate: %d, %v", status, err)
	}
	if _, err := get(secure(pool), "https://"+addr+"/opentool/version"); err == nil {
		t.Errorf("the old certificate is still served after the reload")
	}
	if n := strings.Count(d.stderr.String(), "serving the device's tools over OpenTool"); n != 2 {
		t.Errorf("%d listeners opened, want 2 (the renewal keeps the listener)", n)
	}
}
