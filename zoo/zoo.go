package zoo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
)

// Spec describes one zoo network.
type Spec struct {
	Name string
	// Input is the shape of the network's (first) input.
	Input graph.Shape
	// Description says what the network is and which published variant the
	// build follows.
	Description string
	build       func() *graph.Model
}

// specs lists the networks in their fixed order.
func specs() []Spec {
	return []Spec{
		{"mobilenet_v2", graph.Shape{1, 3, 224, 224}, "MobileNetV2 1.0 (Sandler et al. 2018; torchvision layout)", mobileNetV2},
		{"mobilenet_v3_large", graph.Shape{1, 3, 224, 224}, "MobileNetV3-Large 1.0 (Howard et al. 2019; torchvision layout)", func() *graph.Model { return mobileNetV3Large() }},
		{"efficientnet_b0", graph.Shape{1, 3, 224, 224}, "EfficientNet-B0 (Tan & Le 2019; torchvision layout)", efficientNetB0},
		{"resnet50", graph.Shape{1, 3, 224, 224}, "ResNet-50 v1.5 (He et al. 2016; torchvision layout)", resNet50},
		{"inception_v3", graph.Shape{1, 3, 299, 299}, "Inception-v3 (Szegedy et al. 2016; torchvision, inference graph without the auxiliary head)", inceptionV3},
		{"deeplabv3_mobilenet_v3_large", graph.Shape{1, 3, 520, 520}, "DeepLabV3 with dilated MobileNetV3-Large backbone, 21 classes, with FCN aux head (torchvision)", deepLabV3MobileNetV3},
		{"yolov5s", graph.Shape{1, 3, 640, 640}, "YOLOv5s v6+ (ultralytics, SPPF), 80 classes, with exported box decoding", yoloV5s},
		{"deit_tiny", graph.Shape{1, 3, 224, 224}, "DeiT-Tiny / ViT-Ti/16 (Touvron et al. 2021; timm deit_tiny_patch16_224)", deitTiny},
		{"mobilebert", graph.Shape{1, 128}, "MobileBERT encoder, sequence 128, token ids in (Sun et al. 2020; HF google/mobilebert-uncased)", mobileBERT},
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

// Build returns the named network with shapes, folded constants and work
// inferred (infer.Run), and Model.Hash set to the content hash of the built
// graph (see Hash).
func Build(name string) (*graph.Model, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	m := s.build()
	m.Name = s.Name
	if err := infer.Run(m, infer.Options{}); err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", name, err)
	}
	m.Hash = Hash(m)
	return m, nil
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
