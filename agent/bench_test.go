package agent

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
)

// BenchmarkMeasureRoundTrip is the agent's overhead per measurement on
// loopback (HTTP, JSON, base64, validation) with a device that takes no
// time, for a tiny model and for models padded to 1 and 8 MiB.
func BenchmarkMeasureRoundTrip(b *testing.B) {
	dev := &fakeDevice{pl: phonePlatform(b)}
	ts := httptest.NewServer(NewServer(dev, testToken, Options{}))
	defer ts.Close()
	c := NewClient(ts.URL, testToken)
	for _, pad := range []int{0, 1 << 20, 8 << 20} {
		req := tinyRequest(b, "cpu-prime")
		// Unknown trailing bytes in a protobuf are kept as unknown fields:
		// field 15, wire type 2 (length-delimited), holding pad bytes.
		if pad > 0 {
			req.Model = append(append(append([]byte(nil), req.Model...), 15<<3|2), varint(pad)...)
			req.Model = append(req.Model, make([]byte, pad)...)
		}
		b.Run(fmt.Sprintf("model=%dKiB", len(req.Model)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(req.Model)))
			for i := 0; i < b.N; i++ {
				dev.reqs = dev.reqs[:0]
				if _, err := c.Measure(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func varint(n int) []byte {
	var out []byte
	for n >= 0x80 {
		out = append(out, byte(n)|0x80)
		n >>= 7
	}
	return append(out, byte(n))
}
