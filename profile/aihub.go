package profile

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/zoo"
)

// PredictedRuntime is the runtime the fitted presets predict: QNN driving
// the HTP directly (AI Hub's qnn_dlc), the one runtime measured on every
// device and network with no layer on the CPU. TFLite with the QNN
// delegate and ONNX Runtime with the QNN execution provider lower the
// same network differently (up to 1.4× apart, more where they fall back);
// their rows are the published spread printed beside a prediction.
const PredictedRuntime = "qnn_dlc"

// AIHubDevice ties an AI Hub device to the preset fitted to its rows.
type AIHubDevice struct {
	Device, Preset string
}

// AIHubDevices are the devices with a preset, in preset order.
var AIHubDevices = []AIHubDevice{
	{"Samsung Galaxy S23", "galaxy-s23"},
	{"Samsung Galaxy S24", "galaxy-s24"},
	{"Samsung Galaxy S25", "galaxy-s25"},
	{"Snapdragon X Elite CRD", "snapdragon-x-elite"},
}

// AIHubNetwork is the zoo network standing for an AI Hub model (or one
// component of a multi-part model) at the input AI Hub measures.
type AIHubNetwork struct {
	// Name is AI Hub's model name, a component in brackets.
	Name string
	Zoo  string
	// Input is AI Hub's input shape (shared/measurements/README.md).
	Input graph.Shape
}

// AIHubNetworks are the networks of aihub-published.csv the zoo builds.
// A network the zoo does not (yet) build is reported as not covered.
var AIHubNetworks = []AIHubNetwork{
	{"MobileNetV2", "mobilenet_v2", graph.Shape{1, 3, 224, 224}},
	{"EfficientNet-B0", "efficientnet_b0", graph.Shape{1, 3, 224, 224}},
	{"ResNet-18", "resnet18", graph.Shape{1, 3, 224, 224}},
	{"ResNet-50", "resnet50", graph.Shape{1, 3, 224, 224}},
	{"Inception-v3", "inception_v3", graph.Shape{1, 3, 224, 224}},
	{"DenseNet-121", "densenet121", graph.Shape{1, 3, 224, 224}},
	{"YOLOv8n", "yolov8n", graph.Shape{1, 3, 640, 640}},
	{"YOLO11n", "yolo11n", graph.Shape{1, 3, 640, 640}},
	{"DeepLabV3+ MobileNetV2", "deeplabv3_plus_mobilenet", graph.Shape{1, 3, 513, 513}},
	{"MobileBERT", "mobilebert_384", graph.Shape{1, 384}},
	{"Whisper-Tiny [encoder]", "whisper_tiny_encoder", graph.Shape{1, 80, 3000}},
	{"Whisper-Tiny [decoder]", "whisper_tiny_decoder", graph.Shape{1, 1}},
	{"Whisper-Tiny-En [encoder]", "whisper_tiny_encoder", graph.Shape{1, 80, 3000}},
	{"Whisper-Tiny-En [decoder]", "whisper_tiny_decoder", graph.Shape{1, 1}},
	{"FFNet-40S", "ffnet_40s", graph.Shape{1, 3, 1024, 2048}},
	{"FFNet-54S", "ffnet_54s", graph.Shape{1, 3, 1024, 2048}},
	{"FFNet-78S", "ffnet_78s", graph.Shape{1, 3, 1024, 2048}},
	{"FFNet-78S-LowRes", "ffnet_78s_lowres", graph.Shape{1, 3, 512, 1024}},
	{"FFNet-122NS-LowRes", "ffnet_122ns_lowres", graph.Shape{1, 3, 512, 1024}},
	{"MediaPipe face [FaceDetector]", "mediapipe_face_detector", graph.Shape{1, 3, 256, 256}},
	{"MediaPipe face [FaceLandmarkDetector]", "mediapipe_face_landmark", graph.Shape{1, 3, 192, 192}},
	{"EasyOCR [text detector]", "easyocr_detector", graph.Shape{1, 3, 608, 800}},
	{"EasyOCR [text recognizer]", "easyocr_recognizer", graph.Shape{1, 1, 64, 800}},
}

// aihubColumns are aihub-published.csv's columns; the first six are
// required.
var aihubColumns = []string{"model", "aihub_dir", "precision", "device", "runtime", "inference_ms",
	"primary_compute_unit", "layers_total", "layers_npu", "layers_gpu", "layers_cpu", "peak_mem_max_mb"}

// IsAIHub reports whether a published file has aihub-published.csv's
// layout (its header names aihub_dir).
func IsAIHub(data []byte) bool {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	return bytes.Contains(line, []byte("aihub_dir"))
}

// ParseAIHub reads aihub-published.csv (shared/measurements/README.md):
// a header naming aihubColumns (model, aihub_dir, precision, device,
// runtime and inference_ms required; any order), then one measurement a
// row. Each row becomes a Published with its Device and Network; Model
// and Input are the zoo network standing for it (AIHubNetworks; Model
// empty where the zoo builds none), Precision float16 for AI Hub's
// "float" and int8 for "w8a8" (Undefined for the others: w8a16, mixed
// int16 and the old toolchain's entries), Processor the primary compute
// unit in lower case. Every error is one line naming the file, the line
// and the column.
func ParseAIHub(data []byte, file string) ([]Published, error) {
	byName := map[string]AIHubNetwork{}
	for _, n := range AIHubNetworks {
		if _, err := zoo.Lookup(n.Zoo); err == nil {
			byName[n.Name] = n
		}
	}
	return readCSV(data, file, aihubColumns, 6, func(row csvRow) (Published, error) {
		if err := row.need("model", "device", "runtime", "precision"); err != nil {
			return Published{}, err
		}
		p := Published{Line: row.line, Network: row.at("model"), Device: row.at("device"), Runtime: row.at("runtime"), Processor: "npu"}
		if n, ok := byName[p.Network]; ok {
			p.Model, p.Input = n.Zoo, n.Input.Clone()
		}
		switch row.at("precision") {
		case "float":
			p.Precision = graph.Float16
		case "w8a8":
			p.Precision = graph.Int8
		}
		if u := row.at("primary_compute_unit"); u != "" {
			p.Processor = strings.ToLower(u)
		}
		err := row.measures(&p, "inference_ms", "peak_mem_max_mb")
		return p, err
	})
}

// DeviceFit is one device's fit (FitDevices).
type DeviceFit struct {
	Device, Preset string
	Fit            *PublishedFit
	// Fitted counts the rows fitted; NotCovered the device's rows of the
	// precisions fitted whose network the zoo does not build, by AI Hub
	// name; Outliers the rows left out as not the NPU's speed.
	Fitted     int
	NotCovered []string
	Outliers   []Published
}

// DevicesOptions tune FitDevices.
type DevicesOptions struct {
	// MaxEvals bounds each fit's objective evaluations (0: 3000).
	MaxEvals int
	// Source names the file in the fitted figures.
	Source string
	// Devices limits the fit to these presets (nil: every AIHubDevices
	// preset with rows).
	Devices []string
	// Prior is PublishedOptions.Prior (negative: none; 0: the default).
	Prior float64
	// Progress is called after each fit of each device.
	Progress func(preset string, done, total int)
}

// outlierLatency: a row slower than this is no NPU speed but a broken
// export (AI Hub's w8a8 DeepLabV3 ResNet-50 rows take 273 s and 352 s,
// its float rows tens of milliseconds); every other row is under 0.2 s.
const outlierLatency = 10 * time.Second

// FitDevices fits each device's preset to its rows of aihub-published.csv
// at once (FitPublished on the NPU, runtime PredictedRuntime, float16 then
// int8 from it, DeviceParams and DeviceParamsOther), building each network
// once for every device. Rows of other precisions, of networks the zoo
// does not build, on other units than the NPU, and outliers (over outlierLatency) are left out.
func FitDevices(rows []Published, opt DevicesOptions) ([]DeviceFit, error) {
	nets := NewNetworks()
	var out []DeviceFit
	for _, dev := range AIHubDevices {
		if opt.Devices != nil && !slices.Contains(opt.Devices, dev.Preset) {
			continue
		}
		df := DeviceFit{Device: dev.Device, Preset: dev.Preset}
		var use []Published
		seen := map[string]bool{}
		for _, r := range rows {
			if r.Device != dev.Device || r.Processor != "npu" || (r.Precision != graph.Float16 && r.Precision != graph.Int8) {
				continue
			}
			if r.Model == "" {
				if !seen[r.Network] {
					seen[r.Network] = true
					df.NotCovered = append(df.NotCovered, r.Network)
				}
				continue
			}
			use = append(use, r)
		}
		if len(use) == 0 {
			continue
		}
		use, df.Outliers = dropOutliers(use)
		pl, err := hw.Preset(dev.Preset)
		if err != nil {
			return nil, err
		}
		src := opt.Source
		if src == "" {
			src = "published measurements"
		}
		src = fmt.Sprintf("%s (%s, %s)", src, dev.Device, PredictedRuntime)
		po := PublishedOptions{MaxEvals: opt.MaxEvals, Prior: opt.Prior, Source: src, Runtime: PredictedRuntime, Params: DeviceParams,
			OtherParams: DeviceParamsOther, Networks: nets}
		if opt.Progress != nil {
			preset := dev.Preset
			po.Progress = func(done, total int) { opt.Progress(preset, done, total) }
		}
		res, err := FitPublished(pl, use, po)
		if err != nil {
			return nil, fmt.Errorf("profile: %s: %w", dev.Preset, err)
		}
		for _, pf := range res.Fits {
			df.Fitted += len(pf.Rows)
		}
		df.Fit = res
		out = append(out, df)
	}
	if len(out) == 0 {
		return nil, errors.New("profile: no rows of a device with a preset (" + presetList() + ")")
	}
	return out, nil
}

func presetList() string {
	var s []string
	for _, d := range AIHubDevices {
		s = append(s, d.Device+" → "+d.Preset)
	}
	return strings.Join(s, ", ")
}

// dropOutliers splits rows into those kept and those over outlierLatency.
func dropOutliers(rows []Published) (keep, out []Published) {
	for _, r := range rows {
		if r.Latency > outlierLatency {
			out = append(out, r)
		} else {
			keep = append(keep, r)
		}
	}
	return keep, out
}
