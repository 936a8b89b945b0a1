//go:build !unix

package solver

import "os/exec"

func ownProcessGroup(cmd *exec.Cmd) {}

// interrupt cannot send Ctrl-C here; the process is killed, and Solve
// reports whatever solution file CBC had written.
func interrupt(cmd *exec.Cmd) { cmd.Process.Kill() }

func killAll(cmd *exec.Cmd) { cmd.Process.Kill() }

// signaled: without Unix wait statuses a crash is an ordinary exit.
func signaled(e *exec.ExitError) bool { return false }
