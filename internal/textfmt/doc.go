// Package textfmt formats numbers and tables for inlay's text output:
// SI-prefixed quantities ("4.19 GMAC", "13.8 MB") and tables whose columns
// line up, numbers right-aligned. It holds no state and does no I/O beyond
// the io.Writer it is given.
package textfmt
