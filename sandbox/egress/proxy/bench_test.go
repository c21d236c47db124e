package proxy

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"sandboxlab/sandbox/egress"

	"gotest.tools/v3/assert"
)

// The figures of the closing note come from these, direct and proxied
// side by side in one run:
//
//	go test -run '^$' -bench . -benchtime 10x ./sandbox/egress

// benchBytes is what one transfer moves.
const benchBytes = 50 << 20

// startSink starts a server on a loopback address of its own that reads
// everything a connection sends and answers with the count (8 bytes), or
// with echo, sends back each byte it gets. It is stopped after b.
func startSink(b *testing.B, echo bool) string {
	b.Helper()
	var ln net.Listener
	var err error
	for range 20 {
		n, _ := rand.Int(rand.Reader, big.NewInt(250))
		if ln, err = net.Listen("tcp4", fmt.Sprintf("127.0.0.%d:0", n.Int64()+2)); err == nil {
			break
		}
	}
	assert.NilError(b, err)
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if echo {
					io.Copy(c, c)
					return
				}
				n, _ := io.Copy(io.Discard, c)
				binary.Write(c, binary.BigEndian, n)
			}()
		}
	}()
	return ln.Addr().String()
}

// tunnel opens a CONNECT tunnel to dest through the proxy at proxy.
func tunnel(b *testing.B, proxy, dest string) net.Conn {
	c, err := net.Dial("tcp", proxy)
	assert.NilError(b, err)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest)
	// The proxy sends nothing after its answer until the sink does, so
	// a bufio.Reader takes no byte of the tunnel's with the head.
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	assert.NilError(b, err)
	assert.Assert(b, resp.StatusCode == http.StatusOK, "CONNECT %s: %s", dest, resp.Status)
	return c
}

// send writes benchBytes on c, half-closes it, and waits for the sink's
// count.
func send(b *testing.B, c net.Conn, buf []byte) time.Duration {
	start := time.Now()
	for sent := 0; sent < benchBytes; sent += len(buf) {
		_, err := c.Write(buf)
		assert.NilError(b, err)
	}
	assert.NilError(b, c.(*net.TCPConn).CloseWrite())
	var n int64
	assert.NilError(b, binary.Read(c, binary.BigEndian, &n))
	assert.Assert(b, n == benchBytes, "the sink got %d bytes", n)
	c.Close()
	return time.Since(start)
}

// BenchmarkConnect50MB moves 50 MB to a loopback sink, straight and then
// through a CONNECT tunnel, in turn, and reports both throughputs and
// the proxied one as a share of the direct one.
func BenchmarkConnect50MB(b *testing.B) {
	sink := startSink(b, false)
	p, proxy := startProxy(b, egress.Config{Allow: []string{sink}})
	buf := make([]byte, 256<<10)
	var direct, proxied time.Duration
	for b.Loop() {
		c, err := net.Dial("tcp", sink)
		assert.NilError(b, err)
		direct += send(b, c, buf)
		proxied += send(b, tunnel(b, proxy, sink), buf)
	}
	mbps := func(d time.Duration) float64 { return float64(b.N) * benchBytes / (1 << 20) / d.Seconds() }
	b.ReportMetric(mbps(direct), "direct-MiB/s")
	b.ReportMetric(mbps(proxied), "proxied-MiB/s")
	b.ReportMetric(direct.Seconds()/proxied.Seconds(), "ratio")
	b.ReportMetric(0, "ns/op") // the loop holds two transfers; the metrics above say what each costs
	p.Close()
	for _, r := range p.Requests() {
		assert.Check(b, r.Allowed && r.Sent == benchBytes, "%s", r)
	}
}

// BenchmarkConnectLatency opens a connection and makes one round trip
// of one byte, straight to an echo server and then through a new CONNECT
// tunnel, in turn, and reports both times and the proxy's addition.
func BenchmarkConnectLatency(b *testing.B) {
	sink := startSink(b, true)
	_, proxy := startProxy(b, egress.Config{Allow: []string{sink}})
	one := func(c net.Conn) {
		_, err := c.Write([]byte{1})
		assert.NilError(b, err)
		_, err = io.ReadFull(c, make([]byte, 1))
		assert.NilError(b, err)
		c.Close()
	}
	var direct, proxied time.Duration
	for b.Loop() {
		start := time.Now()
		c, err := net.Dial("tcp", sink)
		assert.NilError(b, err)
		one(c)
		direct += time.Since(start)
		start = time.Now()
		one(tunnel(b, proxy, sink))
		proxied += time.Since(start)
	}
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(us(direct), "direct-µs")
	b.ReportMetric(us(proxied), "proxied-µs")
	b.ReportMetric(us(proxied)-us(direct), "added-µs")
	b.ReportMetric(0, "ns/op")
}
