package zoo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
)

// Spec describes one zoo network.
type Spec struct {
	Name string
	// Input is the shape of the network's (first) input: the size its
	// published figures are measured at, and the default.
	Input graph.Shape
	// Description says what the network is and which published variant the
	// build follows.
	Description string
	// Fixed marks a network that takes only Input (learned position
	// embeddings, a fixed sequence); others take any NCHW size their
	// strides divide (BuildWith).
	Fixed bool
	build func(in graph.Shape) *graph.Model
}

// specs lists the networks in their fixed order.
func specs() []Spec {
	return []Spec{
		{"mobilenet_v2", graph.Shape{1, 3, 224, 224}, "MobileNetV2 1.0 (Sandler et al. 2018; torchvision layout)", false, mobileNetV2},
		{"mobilenet_v3_large", graph.Shape{1, 3, 224, 224}, "MobileNetV3-Large 1.0 (Howard et al. 2019; torchvision layout)", false, mobileNetV3Large},
		{"efficientnet_b0", graph.Shape{1, 3, 224, 224}, "EfficientNet-B0 (Tan & Le 2019; torchvision layout)", false, efficientNetB0},
		{"resnet50", graph.Shape{1, 3, 224, 224}, "ResNet-50 v1.5 (He et al. 2016; torchvision layout)", false, resNet50},
		{"inception_v3", graph.Shape{1, 3, 299, 299}, "Inception-v3 (Szegedy et al. 2016; torchvision, inference graph without the auxiliary head)", false, inceptionV3},
		{"deeplabv3_mobilenet_v3_large", graph.Shape{1, 3, 520, 520}, "DeepLabV3 with dilated MobileNetV3-Large backbone, 21 classes, with FCN aux head (torchvision)", false, deepLabV3MobileNetV3},
		{"yolov5s", graph.Shape{1, 3, 640, 640}, "YOLOv5s v6+ (ultralytics, SPPF), 80 classes, with exported box decoding", false, yoloV5s},
		{"resnet18", graph.Shape{1, 3, 224, 224}, "ResNet-18 (He et al. 2016; torchvision layout)", false, resNet18},
		{"resnet101", graph.Shape{1, 3, 224, 224}, "ResNet-101 v1.5 (torchvision layout)", false, resNet101},
		{"densenet121", graph.Shape{1, 3, 224, 224}, "DenseNet-121 (Huang et al. 2017; torchvision layout)", false, denseNet121},
		{"squeezenet1_1", graph.Shape{1, 3, 224, 224}, "SqueezeNet 1.1 (Iandola et al. 2016; torchvision layout)", false, squeezeNet11},
		{"shufflenet_v2_x1_0", graph.Shape{1, 3, 224, 224}, "ShuffleNetV2 1.0x (Ma et al. 2018; torchvision layout)", false, shuffleNetV2},
		{"mobilenet_v3_small", graph.Shape{1, 3, 224, 224}, "MobileNetV3-Small 1.0 (Howard et al. 2019; torchvision layout)", false, mobileNetV3Small},
		{"efficientnet_b4", graph.Shape{1, 3, 380, 380}, "EfficientNet-B4 (Tan & Le 2019; torchvision layout, 380x380)", false, efficientNetB4},
		{"yolov5m", graph.Shape{1, 3, 640, 640}, "YOLOv5m v6+ (ultralytics, SPPF), 80 classes, with exported box decoding", false, yoloV5m},
		{"yolov8n", graph.Shape{1, 3, 640, 640}, "YOLOv8n (ultralytics), 80 classes, anchor-free head with exported DFL decoding", false, yoloV8n},
		{"vit_b_16", graph.Shape{1, 3, 224, 224}, "ViT-B/16 (Dosovitskiy et al. 2021; torchvision vit_b_16)", true, vitB16},
		{"deit_tiny", graph.Shape{1, 3, 224, 224}, "DeiT-Tiny / ViT-Ti/16 (Touvron et al. 2021; timm deit_tiny_patch16_224)", true, deitTiny},
		{"mobilebert", graph.Shape{1, 128}, "MobileBERT encoder, sequence 128, token ids in (Sun et al. 2020; HF google/mobilebert-uncased)", true, mobileBERT},
		{"yolo11n", graph.Shape{1, 3, 640, 640}, "YOLO11n (ultralytics), 80 classes, C3k2/C2PSA, anchor-free head with exported DFL decoding", false, yolo11n},
		{"deeplabv3_plus_mobilenet", graph.Shape{1, 3, 513, 513}, "DeepLabV3+ with MobileNetV2 backbone, output stride 16, 21 classes (jfzhang95/pytorch-deeplab-xception; AI Hub)", false, deepLabV3PlusMobileNet},
		{"mobilebert_384", graph.Shape{1, 384}, "MobileBERT encoder at sequence 384 (AI Hub's mobile_bert_uncased_google)", true, mobileBERT384},
		{"whisper_tiny_encoder", graph.Shape{1, 80, 3000}, "Whisper tiny audio encoder on 30 s of log-mel frames (openai/whisper-tiny; AI Hub)", true, whisperTinyEncoder},
		{"whisper_tiny_decoder", graph.Shape{1, 1}, "Whisper tiny text decoder, one step with 199 cached tokens and cross-attention caches (AI Hub's HfWhisperDecoder)", true, whisperTinyDecoder},
		{"ffnet_40s", graph.Shape{1, 3, 1024, 2048}, "FFNet-40S dBBB mobile, Cityscapes 19 classes (Qualcomm FFNet; AI Hub)", false, ffnet40S},
		{"ffnet_54s", graph.Shape{1, 3, 1024, 2048}, "FFNet-54S dBBB mobile, Cityscapes 19 classes (Qualcomm FFNet; AI Hub)", false, ffnet54S},
		{"ffnet_78s", graph.Shape{1, 3, 1024, 2048}, "FFNet-78S dBBB mobile, Cityscapes 19 classes (Qualcomm FFNet; AI Hub)", false, ffnet78S},
		{"ffnet_78s_lowres", graph.Shape{1, 3, 512, 1024}, "FFNet-78S low-resolution (input halved first), Cityscapes 19 classes (Qualcomm FFNet; AI Hub)", false, ffnet78SLowRes},
		{"ffnet_122ns_lowres", graph.Shape{1, 3, 512, 1024}, "FFNet-122NS low-resolution (narrow 3-stage backbone, head C), Cityscapes 19 classes (Qualcomm FFNet; AI Hub)", false, ffnet122NSLowRes},
		{"mediapipe_face_detector", graph.Shape{1, 3, 256, 256}, "MediaPipe BlazeFace full-range face detector, 896 anchors (AI Hub's FaceDetector)", false, mediaPipeFaceDetector},
		{"mediapipe_face_landmark", graph.Shape{1, 3, 192, 192}, "MediaPipe face-mesh landmarks, 468 points (AI Hub's FaceLandmarkDetector)", false, mediaPipeFaceLandmark},
		{"easyocr_detector", graph.Shape{1, 3, 608, 800}, "EasyOCR CRAFT text detector, VGG16-BN U-net (AI Hub's EasyOCRDetector)", false, easyOCRDetector},
	}
}

// Names returns the names of the zoo networks in a fixed order.
func Names() []string {
	s := specs()
	names := make([]string, len(s))
	for i, sp := range s {
		names[i] = sp.Name
	}
	return names
}

// BenchNetworks are the nine networks the bench's random scenarios draw
// from (the zoo's first nine), kept fixed so that bench figures stay
// comparable as the zoo grows.
func BenchNetworks() []string { return Names()[:9] }

// TestNetworks are the networks the ONNX Runtime checks of make test run:
// BenchNetworks and three small later ones. With INLAY_E2E set (make e2e)
// they are every network.
func TestNetworks() []string {
	if os.Getenv("INLAY_E2E") != "" {
		return Names()
	}
	return append(BenchNetworks(), "squeezenet1_1", "shufflenet_v2_x1_0", "mobilenet_v3_small")
}

// Specs returns the descriptions of the zoo networks, in the order of Names.
func Specs() []Spec { return specs() }

// Lookup returns the named network's description, or an error listing the
// valid names.
func Lookup(name string) (Spec, error) {
	for _, s := range specs() {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("zoo: unknown network %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// Build returns the named network at its default input size (BuildWith).
func Build(name string) (*graph.Model, error) { return BuildWith(name, nil) }

// Layers builds the named network (Build) and its layer graph: a
// workload.Builder.
func Layers(name string) (*graph.Model, *graph.LayerGraph, error) {
	m, err := Build(name)
	if err != nil {
		return nil, nil, err
	}
	lg, err := graph.BuildLayers(m)
	if err != nil {
		return nil, nil, err
	}
	return m, lg, nil
}

// CachedLayers is Layers building each network once (not safe for
// concurrent use).
func CachedLayers() func(name string) (*graph.Model, *graph.LayerGraph, error) {
	type entry struct {
		m  *graph.Model
		lg *graph.LayerGraph
	}
	cache := map[string]entry{}
	return func(name string) (*graph.Model, *graph.LayerGraph, error) {
		if e, ok := cache[name]; ok {
			return e.m, e.lg, nil
		}
		m, lg, err := Layers(name)
		if err != nil {
			return nil, nil, err
		}
		cache[name] = entry{m, lg}
		return m, lg, nil
	}
}

// BuildWith returns the named network for an input shape (nil: the
// network's Input) with shapes, folded constants and work inferred
// (infer.Run), and Model.Hash set to the content hash of the built graph
// (see Hash; the input shape is part of it). A Fixed network takes only
// its Input; others take an NCHW shape of the same rank and channels whose
// spatial sizes its strides divide, else the error says why.
func BuildWith(name string, in graph.Shape) (m *graph.Model, err error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if in == nil {
		in = s.Input
	}
	if err := s.CheckInput(in); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil { // a builder's shape check
			m, err = nil, fmt.Errorf("zoo: %s does not take input %s: %v", name, in, r)
		}
	}()
	m = s.build(in.Clone())
	m.Name = s.Name
	if err := infer.Run(m, infer.Options{}); err != nil {
		return nil, fmt.Errorf("zoo: %s at input %s: %w", name, in, err)
	}
	m.Hash = Hash(m)
	return m, nil
}

// CheckInput rejects an input shape the network cannot take.
func (s Spec) CheckInput(in graph.Shape) error {
	if s.Fixed && !in.Equal(s.Input) {
		return fmt.Errorf("zoo: %s takes only input %s", s.Name, s.Input)
	}
	if len(in) != len(s.Input) || in[0] < 1 || len(in) > 1 && in[1] != s.Input[1] {
		return fmt.Errorf("zoo: %s takes input [N, %d, H, W] (default %s), not %s", s.Name, s.Input[1], s.Input, in)
	}
	for _, d := range in[2:] {
		if d < 32 || d > 4096 {
			return fmt.Errorf("zoo: %s: input size %d is outside 32-4096", s.Name, d)
		}
	}
	return nil
}

// Hash is the hex sha256 of a canonical description of a model: its name,
// opsets, inputs and outputs, every node (operator, name, tensors,
// attributes) in order, and every initializer (name, dtype, shape and, where
// set, value bytes) in name order. Activation shapes are not hashed, so the
// hash does not depend on shape inference. Weights without values hash by
// shape alone.
func Hash(m *graph.Model) string {
	h := sha256.New()
	fmt.Fprintf(h, "model %q ir %d\n", m.Name, m.IRVersion)
	for _, o := range m.Opsets {
		fmt.Fprintf(h, "opset %q %d\n", o.Domain, o.Version)
	}
	for _, in := range m.Inputs {
		t := m.Tensors[in]
		fmt.Fprintf(h, "input %q %v %v\n", in, t.DType, t.Shape)
	}
	for _, out := range m.Outputs {
		fmt.Fprintf(h, "output %q\n", out)
	}
	for _, n := range m.Nodes {
		fmt.Fprintf(h, "node %q %q %q %q %q\n", n.Op, n.Domain, n.Name, n.Inputs, n.Outputs)
		for _, a := range n.Attrs {
			hashAttr(h, a)
		}
	}
	for _, name := range m.SortedTensorNames() {
		t := m.Tensors[name]
		if t.Kind != graph.Initializer || t.Producer >= 0 {
			continue
		}
		fmt.Fprintf(h, "init %q %v %v %d\n", name, t.DType, t.Shape, len(rawOf(t)))
		h.Write(rawOf(t))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func rawOf(t *graph.Tensor) []byte {
	if t.Data == nil {
		return nil
	}
	return t.Data.Raw
}

func hashAttr(h hash.Hash, a graph.Attr) {
	fmt.Fprintf(h, " attr %q %d %d %q %q %v %q", a.Name, a.Kind, a.Int, a.String, a.Strings, a.Ints, a.Graph)
	var buf [4]byte
	binary.LittleEndian.PutUint32(buf[:], math.Float32bits(a.Float))
	h.Write(buf[:])
	for _, f := range a.Floats {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(f))
		h.Write(buf[:])
	}
	if a.Tensor != nil {
		fmt.Fprintf(h, " tensor %v %v %d", a.Tensor.DType, a.Tensor.Dims, len(a.Tensor.Raw))
		h.Write(a.Tensor.Raw)
	}
	io.WriteString(h, "\n")
}
