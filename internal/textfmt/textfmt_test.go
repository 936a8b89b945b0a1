package textfmt

import (
	"math"
	"testing"
)

func TestSI(t *testing.T) {
	tests := []struct {
		x    float64
		unit string
		want string
	}{
		{0, "MAC", "0 MAC"},
		{512, "B", "512 B"},
		{0.5, "s", "0.50 s"},
		{999, "", "999"},
		{999.6, "B", "1.00 kB"},
		{1234, "", "1.23 k"},
		{4.19e9, "MAC", "4.19 GMAC"},
		{13.8e6, "B", "13.8 MB"},
		{123.4e6, "FLOP", "123 MFLOP"},
		{-2.5e3, "B", "-2.50 kB"},
		{5e21, "B", "5000 EB"},
		{math.Inf(1), "B", "+Inf B"},
	}
	for _, tt := range tests {
		if got := SI(tt.x, tt.unit); got != tt.want {
			t.Errorf("SI(%g, %q) = %q, want %q", tt.x, tt.unit, got, tt.want)
		}
	}
	if got := Count(3_504_872); got != "3.50 M" {
		t.Errorf("Count = %q", got)
	}
	if got := Bytes(14_019_488); got != "14.0 MB" {
		t.Errorf("Bytes = %q", got)
	}
}

func TestTable(t *testing.T) {
	tests := []struct {
		name  string
		table Table
		want  string
	}{
		{"numbers right, text left", Table{
			Header: []string{"OP", "COUNT", "MACS"},
			Rows:   [][]string{{"Conv", "52", "300 M"}, {"Add", "10", "0"}, {"GlobalAveragePool", "1", "-"}},
		}, "OP                 COUNT   MACS\n" +
			"Conv                  52  300 M\n" +
			"Add                   10      0\n" +
			"GlobalAveragePool      1      -\n"},
		{"explicit alignment, short rows, indent", Table{
			Header: []string{"A", "B"},
			Rows:   [][]string{{"1"}, {"22", "x"}},
			Align:  []Align{Left, Right},
			Indent: "  ",
		}, "  A   B\n  1\n  22  x\n"},
		{"no header", Table{Rows: [][]string{{"a", "1"}, {"bb", "10"}}}, "a    1\nbb  10\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.table.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestSig3(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0, "0.00"}, {1.234, "1.23"}, {9.994, "9.99"}, {9.995, "10.0"}, {12.34, "12.3"},
		{99.94, "99.9"}, {99.95, "100"}, {850, "850"}, {1500, "1500"},
	} {
		if got := Sig3(tc.x); got != tc.want {
			t.Errorf("Sig3(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}
