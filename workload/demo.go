package workload

import (
	"fmt"
	"os"

	"github.com/inlay-dev/inlay/internal/assets"
)

// DemoYAML is the text of inlay demo's workload on a platform: a camera
// app with the OCR pipeline beside an always-on voice pipeline, with the
// real models of shared/REAL_MODELS.md (named by CachePrefix paths) when
// every one of them has been fetched and forceZoo is false, else with zoo
// networks standing in. real reports which.
func DemoYAML(platform string, forceZoo bool) (text string, real bool) {
	real = !forceZoo
	for _, m := range assets.RealModels() {
		if _, err := os.Stat(assets.ModelPath(m.File)); err != nil {
			real = false
		}
	}
	if real {
		return fmt.Sprintf(`# inlay demo: a camera app with the OCR pipeline, and an always-on voice pipeline.
platform: %s
# float models; the demo lets the planner run them in int8 too (as Puzzle's
# experiment does); without this line they run in float32 or float16 only
precision: [float32, float16, int8]
models:
  - {name: face, onnx: cache:face_detection_front_128x128_barracuda.onnx}
  - {name: det,  onnx: cache:ch_PP-OCRv4_det_infer.onnx, inputs: {x: [1, 3, 640, 640]}}
  - {name: cls,  onnx: cache:ch_ppocr_mobile_v2.0_cls_infer.onnx, inputs: {x: [1, 3, 48, 192]}}
  - {name: rec,  onnx: cache:ch_PP-OCRv4_rec_infer.onnx, inputs: {x: [1, 3, 48, 320]}}
  - {name: mel,  onnx: cache:melspectrogram.onnx, inputs: {input: [1, 1280]}}
  - {name: embed, onnx: cache:embedding_model.onnx, inputs: {input_1: [1, 76, 32, 1]}}
  - {name: wake, onnx: cache:hey_jarvis_v0.1.onnx}
  - {name: vad,  onnx: cache:silero_vad_legacy.onnx, inputs: {input: [1, 512], h: [2, 1, 64], c: [2, 1, 64]}}
groups:
  - name: camera
    models: [face, det, cls, rec]
    after: {cls: [det], rec: [cls]}
    rate_hz: 15
  - name: voice
    models: [vad, mel, embed, wake]
    after: {embed: [mel], wake: [embed]}
    period_ms: 80
`, platform), true
	}
	return fmt.Sprintf(`# inlay demo (zoo stand-ins until make fetch brings the real models): the
# same shape as the real scenario, a camera pipeline (a small face network,
# a detector, then a classifier on what it found, a segmenter beside them)
# and a language model on the voice chunks.
platform: %s
# float models; the demo lets the planner run them in int8 too (as Puzzle's
# experiment does); without this line they run in float32 or float16 only
precision: [float32, float16, int8]
models:
  - {name: face, zoo: mobilenet_v3_small}
  - {name: det,  zoo: yolov8n}
  - {name: cls,  zoo: squeezenet1_1}
  - {name: seg,  zoo: deeplabv3_mobilenet_v3_large}
  - {name: text, zoo: mobilebert}
groups:
  - name: camera
    models: [face, det, cls, seg]
    after: {cls: [det]}
    rate_hz: 15
  - name: voice
    models: [text]
    period_ms: 80
`, platform), false
}
