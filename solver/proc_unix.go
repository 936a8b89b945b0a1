//go:build unix

package solver

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup keeps a terminal's Ctrl-C from reaching CBC directly:
// Solve forwards it through the context, once, and waits for the incumbent.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// interrupt asks CBC to stop and report its incumbent, as Ctrl-C does.
func interrupt(cmd *exec.Cmd) { cmd.Process.Signal(syscall.SIGINT) }

// killAll kills CBC and whatever it runs in its process group (stdbuf execs
// it, so that is CBC alone).
func killAll(cmd *exec.Cmd) {
	if syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) != nil {
		cmd.Process.Kill()
	}
}

// signaled reports whether CBC died of a signal.
func signaled(e *exec.ExitError) bool {
	ws, ok := e.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}
