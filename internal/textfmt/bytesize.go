package textfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a size flag: a number of bytes with an optional unit (B, KB,
// MB, GB in powers of 1000; KiB, MiB, GiB in powers of 1024; K, M, G are
// taken as the binary units).
type ByteSize int64

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	{"B", 1},
}

// ParseByteSize reads a size such as 64MiB, 512KiB or 1000000.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	factor := int64(1)
	for _, u := range sizeUnits {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, factor = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/factor {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, e.g. 64MiB", s)
	}
	return ByteSize(n * factor), nil
}

// Set sets the size from its text (flag.Value).
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type names the flag's type.
func (b *ByteSize) Type() string { return "size" }

// String writes the size in the largest binary unit that divides it.
func (b *ByteSize) String() string {
	v := int64(*b)
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.factor && v%u.factor == 0 {
			return fmt.Sprintf("%d%s", v/u.factor, u.suffix)
		}
	}
	return strconv.FormatInt(v, 10)
}
