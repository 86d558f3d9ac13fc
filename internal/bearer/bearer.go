// Package bearer is the bearer token of an HTTP Authorization header, both ways: checking the
// one a request carries, and sending one to a single host only.
package bearer

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
)

// Matches reports whether r carries token as "Authorization: Bearer TOKEN". The two are compared
// as SHA-256 sums in constant time, so neither the token's contents nor its length show in the
// timing.
func Matches(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// Transport sends "Authorization: Bearer Token" with every request to Host (host:port), and
// with no other: a redirect elsewhere does not take the token along.
type Transport struct {
	Token string
	Host  string
	Next  http.RoundTripper // nil: http.DefaultTransport
}

// For returns a Transport that sends token to the host of endpoint, a URL.
func For(endpoint, token string, next http.RoundTripper) *Transport {
	host := ""
	if u, err := url.Parse(endpoint); err == nil {
		host = u.Host
	}
	return &Transport{Token: token, Host: host, Next: next}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	if r.URL.Host != t.Host {
		return next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.Token)
	return next.RoundTrip(r)
}
