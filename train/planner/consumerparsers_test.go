package planner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsumerParsers runs the consumers' own parsers on inlay's exports
// (scripts/check-exports.sh: Megatron-LM's parse_args and validate_args,
// DeepSpeed's DeepSpeedConfig, torchtitan's ConfigManager and
// ParallelDims, Sailor's plan reader and simulator) when their checkouts
// are given; it needs Python with torch (Debian's python3-torch) and takes
// about two minutes.
func TestConsumerParsers(t *testing.T) {
	given := false
	for _, v := range []string{"MEGATRON_DIR", "DEEPSPEED_DIR", "TORCHTITAN_DIR", "SAILOR_DIR"} {
		given = given || os.Getenv(v) != ""
	}
	if !given {
		t.Skip("consumer parsers: set MEGATRON_DIR, DEEPSPEED_DIR, TORCHTITAN_DIR and/or SAILOR_DIR to checkouts at the commits in scripts/check-exports.sh (PYTHON, TORCH_SITE as it says) to run them on the exports")
	}
	if testing.Short() {
		t.Skip("consumer parsers: not with -short")
	}
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "check-exports.sh"))
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Split(line, "\t"); len(f) >= 3 && (f[2] == "fail" || f[2] == "error") {
			t.Errorf("%s", line)
		} else {
			t.Log(line)
		}
	}
	if err != nil {
		t.Fatalf("check-exports.sh: %v", err)
	}
}
