//go:build cgo

package ort

import (
	"errors"
	"fmt"
	"strings"

	onnxruntime "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
)

// level maps an Optimization other than OptimizeDefault to ONNX Runtime's.
func (o Optimization) level() (onnxruntime.GraphOptimizationLevel, bool) {
	switch o {
	case OptimizeNone:
		return onnxruntime.GraphOptimizationLevelDisableAll, true
	case OptimizeBasic:
		return onnxruntime.GraphOptimizationLevelEnableBasic, true
	case OptimizeExtended:
		return onnxruntime.GraphOptimizationLevelEnableExtended, true
	case OptimizeAll:
		return onnxruntime.GraphOptimizationLevelEnableAll, true
	}
	return 0, false
}

// Session is one loaded model, ready to run.
type Session struct {
	sess    *onnxruntime.DynamicAdvancedSession
	inputs  []string
	outputs []outputSpec
}

// outputSpec says how an output is fetched: left to ONNX Runtime to allocate
// (prealloc false), or written into a tensor that Run allocates from the
// model's declared type and static shape (scalars, float16, bfloat16).
type outputSpec struct {
	name     string
	prealloc bool
	dtype    graph.DType
	shape    graph.Shape
}

// NewSession creates a session from model bytes. Run takes its inputs in
// the order of inputNames and returns its outputs in the order of
// outputNames; every output must be a graph output of the model.
func (r *Runtime) NewSession(model []byte, inputNames, outputNames []string, opt SessionOptions) (*Session, error) {
	if len(inputNames) == 0 {
		return nil, errors.New("ort: new session: no inputs given (the onnxruntime_go binding cannot run a model without inputs)")
	}
	if len(outputNames) == 0 {
		return nil, errors.New("ort: new session: no outputs requested")
	}
	if opt.IntraOpThreads < 0 || opt.InterOpThreads < 0 {
		return nil, fmt.Errorf("ort: new session: negative thread count (intra-op %d, inter-op %d)", opt.IntraOpThreads, opt.InterOpThreads)
	}
	level, ok := opt.Optimization.level()
	if !ok && opt.Optimization != OptimizeDefault {
		return nil, fmt.Errorf("ort: new session: unknown optimization level %d", opt.Optimization)
	}
	specs, err := checkModel(model, inputNames, outputNames)
	if err != nil {
		return nil, err
	}
	so, err := onnxruntime.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("ort: new session: %w", err)
	}
	defer so.Destroy()
	if opt.IntraOpThreads > 0 {
		if err := so.SetIntraOpNumThreads(opt.IntraOpThreads); err != nil {
			return nil, fmt.Errorf("ort: new session: intra-op threads: %w", err)
		}
	}
	if opt.InterOpThreads > 0 {
		if err := so.SetInterOpNumThreads(opt.InterOpThreads); err != nil {
			return nil, fmt.Errorf("ort: new session: inter-op threads: %w", err)
		}
	}
	if ok {
		if err := so.SetGraphOptimizationLevel(level); err != nil {
			return nil, fmt.Errorf("ort: new session: optimization level: %w", err)
		}
	}
	sess, err := onnxruntime.NewDynamicAdvancedSessionWithONNXData(model, inputNames, outputNames, so)
	if err != nil {
		return nil, fmt.Errorf("ort: new session: %s", oneLine(err))
	}
	return &Session{sess: sess, inputs: append([]string(nil), inputNames...), outputs: specs}, nil
}

// checkModel checks that the inputs named are exactly the model's graph
// inputs (initializers aside) and that the outputs are graph outputs; it
// reads the declared types of the outputs and decides which ones Run must
// allocate itself.
func checkModel(model []byte, inputNames, names []string) ([]outputSpec, error) {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(model, &mp); err != nil {
		return nil, fmt.Errorf("ort: new session: decode model: %w", err)
	}
	given := map[string]bool{}
	for _, name := range inputNames {
		if given[name] {
			return nil, fmt.Errorf("ort: new session: input %q given twice", name)
		}
		given[name] = true
	}
	inits := map[string]bool{}
	for _, t := range mp.GetGraph().GetInitializer() {
		inits[t.GetName()] = true
	}
	modelInputs := map[string]bool{}
	for _, vi := range mp.GetGraph().GetInput() {
		modelInputs[vi.GetName()] = true
		if !given[vi.GetName()] && !inits[vi.GetName()] {
			return nil, fmt.Errorf("ort: new session: model input %q is not among the inputs given", vi.GetName())
		}
	}
	for _, name := range inputNames {
		if !modelInputs[name] {
			return nil, fmt.Errorf("ort: new session: %q is not a graph input of the model", name)
		}
	}
	declared := map[string]*onnxpb.ValueInfoProto{}
	for _, vi := range mp.GetGraph().GetOutput() {
		declared[vi.GetName()] = vi
	}
	specs := make([]outputSpec, len(names))
	for i, name := range names {
		specs[i].name = name
		vi := declared[name]
		if vi == nil {
			return nil, fmt.Errorf("ort: new session: %q is not a graph output of the model", name)
		}
		tt := vi.GetType().GetTensorType()
		if tt == nil {
			continue // not a tensor; ONNX Runtime reports it when run
		}
		dt := graph.DType(tt.GetElemType())
		sp := tt.GetShape()
		scalar := sp != nil && len(sp.GetDim()) == 0
		if !scalar && !rawOnly(dt) {
			continue
		}
		if !supported(dt) {
			return nil, fmt.Errorf("ort: new session: output %q: element type %s is not supported", name, dt)
		}
		if scalar && rawOnly(dt) {
			return nil, fmt.Errorf("ort: new session: output %q: %s scalars are not supported by the onnxruntime_go binding", name, dt)
		}
		if sp == nil {
			return nil, fmt.Errorf("ort: new session: output %q: %s outputs need a static shape in the model (the onnxruntime_go binding cannot copy ones ONNX Runtime allocates)", name, dt)
		}
		shape := graph.Shape{}
		for _, d := range sp.GetDim() {
			if _, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); !ok || d.GetDimValue() < 0 {
				return nil, fmt.Errorf("ort: new session: output %q: %s outputs need a static shape in the model (the onnxruntime_go binding cannot copy ones ONNX Runtime allocates)", name, dt)
			}
			shape = append(shape, d.GetDimValue())
		}
		if n, _ := shape.Elements(); n == 0 && !scalar {
			return nil, fmt.Errorf("ort: new session: output %q: empty %s outputs are not supported by the onnxruntime_go binding", name, dt)
		}
		specs[i] = outputSpec{name: name, prealloc: true, dtype: dt, shape: shape}
	}
	return specs, nil
}

// Run feeds inputs (in the order of the session's input names) and returns
// the outputs (in the order of its output names). Each input's DType must
// be the model's and its Raw must hold exactly the elements of its Dims.
func (s *Session) Run(inputs []*graph.Data) ([]*graph.Data, error) {
	if s.sess == nil {
		return nil, errors.New("ort: run: the session is closed")
	}
	if len(inputs) != len(s.inputs) {
		return nil, fmt.Errorf("ort: run: got %d inputs, the session takes %d (%v)", len(inputs), len(s.inputs), s.inputs)
	}
	var values []onnxruntime.Value
	defer func() {
		for _, v := range values {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	in := make([]onnxruntime.Value, len(inputs))
	for i, d := range inputs {
		v, err := toValue(d)
		if err != nil {
			return nil, fmt.Errorf("ort: run: input %q: %w", s.inputs[i], err)
		}
		values = append(values, v)
		in[i] = v
	}
	out := make([]onnxruntime.Value, len(s.outputs))
	for i, spec := range s.outputs {
		if !spec.prealloc {
			continue
		}
		v, err := newOutputValue(spec.dtype, spec.shape)
		if err != nil {
			return nil, fmt.Errorf("ort: run: output %q: %w", spec.name, err)
		}
		values = append(values, v)
		out[i] = v
	}
	err := s.sess.Run(in, out)
	// Outputs that ONNX Runtime allocated were converted into Go values even
	// when a later conversion failed; destroy them either way.
	for i, v := range out {
		if v != nil && !s.outputs[i].prealloc {
			values = append(values, v)
		}
	}
	if err != nil {
		if strings.Contains(err.Error(), "shape has no dimensions") {
			return nil, fmt.Errorf("ort: run: an output came back as a scalar, which the onnxruntime_go binding returns only when the model declares that output with a rank-0 shape: %w", err)
		}
		return nil, fmt.Errorf("ort: run: %s", oneLine(err))
	}
	res := make([]*graph.Data, len(out))
	for i, v := range out {
		d, err := fromValue(v)
		if err != nil {
			return nil, fmt.Errorf("ort: run: output %q: %w", s.outputs[i].name, err)
		}
		if s.outputs[i].prealloc {
			d.DType = s.outputs[i].dtype
		}
		res[i] = d
	}
	return res, nil
}

// Close releases the session. The session must not be used afterwards.
func (s *Session) Close() error {
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	if err != nil {
		return fmt.Errorf("ort: close: %w", err)
	}
	return nil
}

// oneLine joins the lines of an ONNX Runtime message, so that a user sees
// one line.
func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
