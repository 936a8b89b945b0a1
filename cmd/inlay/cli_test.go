package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// execute runs the inlay command line with args, writing its standard
// output to stdout and its error output to stderr.
func execute(args []string, stdout, stderr io.Writer) error {
	root := newRootCmd()
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	return root.Execute()
}

// runInlay runs the command line with args and returns its standard and
// error output together, and the command's error.
func runInlay(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := execute(args, &out, &out)
	return out.String(), err
}

// runInlaySplit runs the command line with args and returns its standard
// output and its error output apart, and the command's error.
func runInlaySplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = execute(args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// runInlayStdout runs the command line with args and returns its standard
// output alone, and the command's error.
func runInlayStdout(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runInlaySplit(t, args...)
	return out, err
}

// wantOutput runs the command line with args and fails the test when it
// fails or when its output lacks any of want.
func wantOutput(t *testing.T, args []string, want ...string) {
	t.Helper()
	out, err := runInlay(t, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%v: output lacks %q:\n%s", args, w, out)
		}
	}
}
