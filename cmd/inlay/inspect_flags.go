package main

import (
	"fmt"
	"strconv"
	"strings"
)

// malformed, and all reports whether every dimension is a size.
func rawInputFlags(flags []string) (out map[string][]string, sizes bool, err error) {
	out = map[string][]string{}
	sizes = true
	for _, f := range flags {
		i := strings.LastIndex(f, "=")
		if i <= 0 {
			return nil, false, fmt.Errorf("--input %q: want name=d0,d1,... (e.g. x=1,3,640,640, or x=1,3,H,W to keep symbols)", f)
		}
		name, v := f[:i], strings.TrimSpace(f[i+1:])
		if _, dup := out[name]; dup {
			return nil, false, fmt.Errorf("--input %s is given twice", name)
		}
		sep := ","
		if !strings.Contains(v, ",") {
			sep = "x"
		}
		var dims []string
		if v != "" && v != "scalar" {
			dims = strings.Split(v, sep)
		}
		for j := range dims {
			dims[j] = strings.TrimSpace(dims[j])
			if n, err := strconv.ParseInt(dims[j], 10, 64); err != nil || n < 0 {
				sizes = false
			}
		}
		out[name] = dims
	}
	return out, sizes, nil
}
