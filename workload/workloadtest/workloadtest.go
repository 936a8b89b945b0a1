// Package workloadtest holds workload fixtures that tests of several
// packages share: writing a workload text to a file and loading it, and the
// one-model real workload the profile and run tests measure.
package workloadtest

import (
	"fmt"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/testfile"
	"github.com/inlay-dev/inlay/workload"
)

// Load writes text into a temporary folder and loads it as a workload.
func Load(tb testing.TB, text string) *workload.Workload {
	tb.Helper()
	w, err := workload.Load(testfile.Write(tb, tb.TempDir(), "workload.yaml", text))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// MelFile writes dir/mel.yaml, a workload of one real model, the
// melspectrogram of shared/REAL_MODELS.md, alone in a group at 12.5 Hz on
// the host platform, and returns its path. Without the fetched model the
// test stops as assets.Require says.
func MelFile(tb testing.TB, dir string) string {
	tb.Helper()
	model := assets.Require(tb, assets.ModelPath("melspectrogram.onnx"))
	text := fmt.Sprintf("platform: host\nmodels:\n  - {name: mel, onnx: %q, inputs: {input: [1, 1280]}}\ngroups:\n  - {name: voice, models: [mel], period_ms: 80}\n", model)
	return testfile.Write(tb, dir, "mel.yaml", text)
}

// VoiceModels are the lines of a workload's models list that declare the
// voice pipeline of the real models: melspec (the mel front-end),
// speech_embed (its embedding), wakeword (the wake-word head) and vad, each
// with its input shapes.
const VoiceModels = `  - {name: melspec, onnx: cache:melspectrogram.onnx, inputs: {input: [1, 1280]}}
  - {name: speech_embed, onnx: cache:embedding_model.onnx, inputs: {input_1: [1, 76, 32, 1]}}
  - {name: wakeword, onnx: cache:hey_jarvis_v0.1.onnx}
  - {name: vad, onnx: cache:silero_vad_legacy.onnx, inputs: {input: [1, 512], h: [2, 1, 64], c: [2, 1, 64]}}
`

// RequireVoice stops the test as assets.Require says unless every model of
// VoiceModels is fetched.
func RequireVoice(tb testing.TB) {
	tb.Helper()
	for _, f := range []string{"melspectrogram.onnx", "embedding_model.onnx", "hey_jarvis_v0.1.onnx", "silero_vad_legacy.onnx"} {
		assets.Require(tb, assets.ModelPath(f))
	}
}
