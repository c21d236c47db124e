package compat

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"
)

// serverName is the name the network workloads ask the proxy for; the
// proxy resolves it to the suite's loopback servers.
const serverName = "compat.test"

// networkWorkloads reach the suite's servers through the egress proxy.
// Their arguments: the plain and the TLS URL of a path of their own, the
// body the server answers there, and the CA certificate of the TLS
// server's.
var networkWorkloads = []Workload{
	{Name: "py-http-proxy", What: "Python urllib: HTTP through the egress proxy to a loopback server", network: true, Python: `
import sys, urllib.request
body = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
assert body == sys.argv[3], body
print("ok")
`},
	{Name: "py-https-proxy", What: "Python urllib and ssl: HTTPS (a CONNECT tunnel, certificate verified) to a loopback server", network: true, Python: `
import ssl, sys, urllib.request
ctx = ssl.create_default_context(cadata=sys.argv[4])
body = urllib.request.urlopen(sys.argv[2], timeout=5, context=ctx).read().decode()
assert body == sys.argv[3], body
print("ok")
`},
	{Name: "curl-https-proxy", What: "curl: HTTPS through the egress proxy (https_proxy), certificate verified", Needs: "/usr/bin/curl", network: true, Shell: `
printf '%s' "$4" > ca.pem
test "$(curl -sS --max-time 5 --cacert ca.pem "$2")" = "$3"
`},
}

// servers are the loopback HTTP and HTTPS servers of the network
// workloads: each path answers its own token, and counts its hits.
type servers struct {
	plain, tls *http.Server
	plainPort  int
	tlsPort    int
	caPEM      string

	mu     sync.Mutex
	tokens map[string]string
	seen   map[string]int
}

// startServers starts both servers on 127.0.0.1, the TLS one with a
// certificate for serverName from a CA of its own.
func startServers() (*servers, error) {
	s := &servers{tokens: map[string]string{}, seen: map[string]int{}}
	cert, caPEM, err := newCertificate()
	if err != nil {
		return nil, err
	}
	s.caPEM = caPEM
	quiet := log.New(io.Discard, "", 0)
	s.plain = &http.Server{Handler: s, ErrorLog: quiet, ReadHeaderTimeout: 5 * time.Second}
	s.tls = &http.Server{Handler: s, ErrorLog: quiet, ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	for _, srv := range []struct {
		srv  *http.Server
		port *int
		tls  bool
	}{{s.plain, &s.plainPort, false}, {s.tls, &s.tlsPort, true}} {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			s.close()
			return nil, fmt.Errorf("starting the compatibility suite's server: %w", err)
		}
		*srv.port = ln.Addr().(*net.TCPAddr).Port
		if srv.tls {
			go srv.srv.ServeTLS(ln, "", "")
		} else {
			go srv.srv.Serve(ln)
		}
	}
	return s, nil
}

func (s *servers) close() {
	s.plain.Close()
	s.tls.Close()
}

// ServeHTTP answers a path's token and counts the hit.
func (s *servers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	tok, ok := s.tokens[r.URL.Path]
	s.seen[r.URL.Path]++
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	io.WriteString(w, tok)
}

// token returns the body path answers, made on first use.
func (s *servers) token(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[path]; !ok {
		s.tokens[path] = randomHex(12)
	}
	return s.tokens[path]
}

// hits counts the requests for path.
func (s *servers) hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[path]
}

func (s *servers) httpURL(path string) string {
	return fmt.Sprintf("http://%s:%d%s", serverName, s.plainPort, path)
}

func (s *servers) httpsURL(path string) string {
	return fmt.Sprintf("https://%s:%d%s", serverName, s.tlsPort, path)
}

// allow is the policy's allowlist: the two servers, by name.
func (s *servers) allow() []string {
	return []string{fmt.Sprintf("%s:%d", serverName, s.plainPort), fmt.Sprintf("%s:%d", serverName, s.tlsPort)}
}

// resolve points serverName at the servers' address.
func (s *servers) resolve() map[string]string { return map[string]string{serverName: "127.0.0.1"} }

// newCertificate makes a CA and a certificate for serverName that it
// signs, and returns the certificate and the CA's PEM.
func newCertificate() (tls.Certificate, string, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("making the suite's CA key: %w", err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandboxlab compat CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("making the suite's CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("making the server's key: %w", err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: serverName},
		DNSNames: []string{serverName}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("making the server's certificate: %w", err)
	}
	pemCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, string(pemCA), nil
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
