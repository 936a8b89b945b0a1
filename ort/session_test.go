//go:build cgo

package ort

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"github.com/inlay-dev/inlay/onnx/onnxtest"
)

func openRuntime(t *testing.T) *Runtime {
	t.Helper()
	lib := assets.Require(t, assets.ORTLibrary())
	r, err := Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// identityTypes are the element types the test model passes through Identity.
var identityTypes = []graph.DType{
	graph.Float32, graph.Float64, graph.Int64, graph.Int32, graph.Int8, graph.Uint8,
	graph.Int16, graph.Uint16, graph.Uint32, graph.Uint64, graph.Bool, graph.Float16,
}

// testModel is a tiny hand-written model:
//
//	sum  = a + b                 float32 2x3
//	half = Cast(sum, float16)    float16 2x3 (static shape declared)
//	total = ReduceSum(sum)       float32 scalar (declared as scalar)
//	shp  = Shape(a)              int64 [2] (no shape declared)
//	y_T  = Identity(x_T)         for every T in identityTypes, 2 elements
//	s_out = Identity(s)          int64 scalar
//	e_out = Identity(e)          float32 0x3
func testModel(t *testing.T) (model []byte, inputs, outputs []string) {
	t.Helper()
	g := &onnxpb.GraphProto{Name: proto.String("ort_test")}
	add := func(n *onnxpb.NodeProto) { g.Node = append(g.Node, n) }
	in := func(vi *onnxpb.ValueInfoProto) { g.Input = append(g.Input, vi); inputs = append(inputs, vi.GetName()) }
	out := func(vi *onnxpb.ValueInfoProto) {
		g.Output = append(g.Output, vi)
		outputs = append(outputs, vi.GetName())
	}

	in(onnxtest.ValueInfo("a", graph.Float32, []int64{2, 3}))
	in(onnxtest.ValueInfo("b", graph.Float32, []int64{2, 3}))
	add(onnxtest.Node("Add", []string{"a", "b"}, []string{"sum"}))
	add(onnxtest.Node("Cast", []string{"sum"}, []string{"half"}, onnxtest.IntAttr("to", int64(graph.Float16))))
	add(onnxtest.Node("ReduceSum", []string{"sum"}, []string{"total"}, onnxtest.IntAttr("keepdims", 0)))
	add(onnxtest.Node("Shape", []string{"a"}, []string{"shp"}))
	out(onnxtest.ValueInfo("sum", graph.Float32, []int64{2, 3}))
	out(onnxtest.ValueInfo("half", graph.Float16, []int64{2, 3}))
	out(onnxtest.ValueInfo("total", graph.Float32, []int64{}))
	out(onnxtest.ValueInfo("shp", graph.Int64, nil))
	for _, dt := range identityTypes {
		x, y := "x_"+dt.String(), "y_"+dt.String()
		in(onnxtest.ValueInfo(x, dt, []int64{2}))
		add(onnxtest.Node("Identity", []string{x}, []string{y}))
		dims := []int64{-1} // symbolic: the binding allocates
		if dt == graph.Float16 {
			dims = []int64{2}
		}
		out(onnxtest.ValueInfo(y, dt, dims))
	}
	in(onnxtest.ValueInfo("s", graph.Int64, []int64{}))
	add(onnxtest.Node("Identity", []string{"s"}, []string{"s_out"}))
	out(onnxtest.ValueInfo("s_out", graph.Int64, []int64{}))
	in(onnxtest.ValueInfo("e", graph.Float32, []int64{0, 3}))
	add(onnxtest.Node("Identity", []string{"e"}, []string{"e_out"}))
	out(onnxtest.ValueInfo("e_out", graph.Float32, []int64{-1, 3}))

	return onnxtest.Model(t, g), inputs, outputs
}

// addModel is sum = a + b, total = ReduceSum(sum) on float32 2x3.
func addModel(t *testing.T) []byte {
	t.Helper()
	g := &onnxpb.GraphProto{
		Name:  proto.String("add"),
		Input: []*onnxpb.ValueInfoProto{onnxtest.ValueInfo("a", graph.Float32, []int64{2, 3}), onnxtest.ValueInfo("b", graph.Float32, []int64{2, 3})},
		Node: []*onnxpb.NodeProto{
			onnxtest.Node("Add", []string{"a", "b"}, []string{"sum"}),
			onnxtest.Node("ReduceSum", []string{"sum"}, []string{"total"}, onnxtest.IntAttr("keepdims", 0)),
		},
		Output: []*onnxpb.ValueInfoProto{onnxtest.ValueInfo("sum", graph.Float32, []int64{2, 3}), onnxtest.ValueInfo("total", graph.Float32, []int64{})},
	}
	return onnxtest.Model(t, g)
}

func f32Data(dims graph.Shape, vals ...float32) *graph.Data {
	return &graph.Data{DType: graph.Float32, Dims: dims, Raw: graph.Float32Raw(vals)}
}

func f32Values(t *testing.T, d *graph.Data) []float32 {
	t.Helper()
	if d.DType != graph.Float32 {
		t.Fatalf("dtype %s, want float32", d.DType)
	}
	return graph.Float32s(d.Raw)
}

func TestOpenAndVersion(t *testing.T) {
	r := openRuntime(t)
	v := r.Version()
	if v == "" || v[0] < '0' || v[0] > '9' {
		t.Errorf("Version() = %q, want a version number", v)
	}
	again, err := Open(assets.ORTLibrary())
	if err != nil || again != r {
		t.Errorf("second Open = %p, %v; want the same runtime %p", again, err, r)
	}
	if _, err := Open(assets.ORTLibrary() + ".other"); err == nil || !strings.HasPrefix(err.Error(), "ort: ") {
		t.Errorf("Open with another path: err = %v, want an ort: error", err)
	}
	t.Logf("ONNX Runtime %s", v)
}

func TestRunRoundTrip(t *testing.T) {
	r := openRuntime(t)
	model, inNames, outNames := testModel(t)
	s, err := r.NewSession(model, inNames, outNames, SessionOptions{IntraOpThreads: 1, InterOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	rng := rand.New(rand.NewSource(1))
	a := f32Data(graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	b := f32Data(graph.Shape{2, 3}, 0.5, -2, 0.25, 1, 1, -8)
	feeds := []*graph.Data{a, b}
	for _, dt := range identityTypes {
		feeds = append(feeds, RandomData(dt, graph.Shape{2}, rng))
	}
	scalar := &graph.Data{DType: graph.Int64, Dims: graph.Shape{}, Raw: binary.LittleEndian.AppendUint64(nil, 16000)}
	empty := &graph.Data{DType: graph.Float32, Dims: graph.Shape{0, 3}, Raw: []byte{}}
	feeds = append(feeds, scalar, empty)

	got, err := s.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(outNames) {
		t.Fatalf("got %d outputs, want %d", len(got), len(outNames))
	}
	byName := map[string]*graph.Data{}
	for i, n := range outNames {
		byName[n] = got[i]
	}

	wantSum := []float32{1.5, 0, 3.25, 5, 6, -2}
	if v := f32Values(t, byName["sum"]); !slices.Equal(v, wantSum) || !byName["sum"].Dims.Equal(graph.Shape{2, 3}) {
		t.Errorf("sum = %v %v, want 2x3 %v", byName["sum"].Dims, v, wantSum)
	}
	half := byName["half"]
	if half.DType != graph.Float16 || !half.Dims.Equal(graph.Shape{2, 3}) || len(half.Raw) != 12 {
		t.Fatalf("half = %s %s with %d bytes, want float16 2x3 with 12 bytes", half.DType, half.Dims, len(half.Raw))
	}
	for i, w := range wantSum {
		if h := graph.Float16Value(binary.LittleEndian.Uint16(half.Raw[2*i:])); h != w {
			t.Errorf("half[%d] = %v, want %v", i, h, w)
		}
	}
	total := byName["total"]
	if v := f32Values(t, total); len(total.Dims) != 0 || len(v) != 1 || v[0] != 13.75 {
		t.Errorf("total = %s %v, want scalar 13.75", total.Dims, v)
	}
	shp := byName["shp"]
	if shp.DType != graph.Int64 || !shp.Dims.Equal(graph.Shape{2}) || binary.LittleEndian.Uint64(shp.Raw) != 2 || binary.LittleEndian.Uint64(shp.Raw[8:]) != 3 {
		t.Errorf("shp = %s %s %v, want int64 [2 3]", shp.DType, shp.Dims, shp.Raw)
	}
	for i, dt := range identityTypes {
		y := byName["y_"+dt.String()]
		x := feeds[2+i]
		if y.DType != dt || !y.Dims.Equal(x.Dims) || !bytes.Equal(y.Raw, x.Raw) {
			t.Errorf("y_%s = %s %s %v, want %s %s %v", dt, y.DType, y.Dims, y.Raw, x.DType, x.Dims, x.Raw)
		}
	}
	if so := byName["s_out"]; so.DType != graph.Int64 || len(so.Dims) != 0 || !bytes.Equal(so.Raw, scalar.Raw) {
		t.Errorf("s_out = %s %s %v, want int64 scalar 16000", so.DType, so.Dims, so.Raw)
	}
	if eo := byName["e_out"]; eo.DType != graph.Float32 || !eo.Dims.Equal(graph.Shape{0, 3}) || len(eo.Raw) != 0 {
		t.Errorf("e_out = %s %s %d bytes, want float32 0x3 empty", eo.DType, eo.Dims, len(eo.Raw))
	}

	// The outputs must not alias each other or the next run's buffers.
	before := append([]byte(nil), byName["sum"].Raw...)
	feeds[0] = f32Data(graph.Shape{2, 3}, 9, 9, 9, 9, 9, 9)
	if _, err := s.Run(feeds); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, byName["sum"].Raw) {
		t.Error("a second run changed the first run's output")
	}
}

func TestRunErrors(t *testing.T) {
	r := openRuntime(t)
	s, err := r.NewSession(addModel(t), []string{"a", "b"}, []string{"sum"}, SessionOptions{IntraOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	good := f32Data(graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	tests := []struct {
		name   string
		inputs []*graph.Data
		want   string
	}{
		{"too few inputs", []*graph.Data{good}, "got 1 inputs"},
		{"nil input", []*graph.Data{good, nil}, "nil data"},
		{"short raw", []*graph.Data{good, {DType: graph.Float32, Dims: graph.Shape{2, 3}, Raw: make([]byte, 8)}}, "needs 24 bytes"},
		{"unknown dim", []*graph.Data{good, {DType: graph.Float32, Dims: graph.Shape{2, graph.Unknown}}}, "not fully known"},
		{"string type", []*graph.Data{good, {DType: graph.String, Dims: graph.Shape{1}}}, "not supported"},
		{"wrong shape", []*graph.Data{good, f32Data(graph.Shape{3, 2}, 1, 2, 3, 4, 5, 6)}, "dimensions"},
		{"wrong type", []*graph.Data{good, {DType: graph.Int32, Dims: graph.Shape{2, 3}, Raw: make([]byte, 24)}}, "type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Run(tt.inputs)
			if err == nil || !strings.HasPrefix(err.Error(), "ort: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run: err = %v, want an ort: error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewSessionErrors(t *testing.T) {
	r := openRuntime(t)
	model, inNames, _ := testModel(t)
	f16Sym := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(model, f16Sym); err != nil {
		t.Fatal(err)
	}
	for _, o := range f16Sym.Graph.Output {
		if o.GetName() == "half" {
			o.Type.GetTensorType().Shape = nil
		}
	}
	f16SymBytes, err := proto.Marshal(f16Sym)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		model    []byte
		in, out  []string
		opt      SessionOptions
		wantText string
	}{
		{"garbage", []byte("not a model"), inNames, []string{"sum"}, SessionOptions{}, "ort: new session"},
		{"not an output", model, inNames, []string{"nope"}, SessionOptions{}, "not a graph output"},
		{"no outputs", model, inNames, nil, SessionOptions{}, "no outputs"},
		{"no inputs", model, nil, []string{"sum"}, SessionOptions{}, "no inputs given"},
		{"missing input", model, []string{"a"}, []string{"sum"}, SessionOptions{}, `model input "b" is not among`},
		{"unknown input", model, append([]string{"zz"}, inNames...), []string{"sum"}, SessionOptions{}, `"zz" is not a graph input`},
		{"input twice", model, append([]string{"a"}, inNames...), []string{"sum"}, SessionOptions{}, "given twice"},
		{"bad optimization level", model, inNames, []string{"sum"}, SessionOptions{Optimization: 99}, "unknown optimization level"},
		{"negative threads", model, inNames, []string{"sum"}, SessionOptions{IntraOpThreads: -1}, "negative thread count"},
		{"float16 without static shape", f16SymBytes, inNames, []string{"half"}, SessionOptions{}, "static shape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := r.NewSession(tt.model, tt.in, tt.out, tt.opt)
			if err == nil {
				s.Close()
			}
			if err == nil || !strings.HasPrefix(err.Error(), "ort: ") || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("NewSession: err = %v, want an ort: error containing %q", err, tt.wantText)
			}
		})
	}
}

func TestRunConcurrent(t *testing.T) {
	r := openRuntime(t)
	s, err := r.NewSession(addModel(t), []string{"a", "b"}, []string{"sum", "total"}, SessionOptions{IntraOpThreads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const workers, runs = 4, 20
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < runs; i++ {
				a := RandomData(graph.Float32, graph.Shape{2, 3}, rng)
				b := RandomData(graph.Float32, graph.Shape{2, 3}, rng)
				out, err := s.Run([]*graph.Data{a, b})
				if err != nil {
					errs <- err
					return
				}
				var want float32
				av, bv, sum := f32Values(t, a), f32Values(t, b), f32Values(t, out[0])
				for j := range av {
					if sum[j] != av[j]+bv[j] {
						errs <- fmt.Errorf("worker %d run %d: sum[%d] = %v, want %v", w, i, j, sum[j], av[j]+bv[j])
						return
					}
					want += sum[j]
				}
				if got := f32Values(t, out[1])[0]; math.Abs(float64(got-want)) > 1e-5 {
					errs <- fmt.Errorf("worker %d run %d: total = %v, want %v", w, i, got, want)
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestOptimizationLevels(t *testing.T) {
	r := openRuntime(t)
	a := f32Data(graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	for _, level := range []Optimization{OptimizeDefault, OptimizeNone, OptimizeBasic, OptimizeExtended, OptimizeAll} {
		s, err := r.NewSession(addModel(t), []string{"a", "b"}, []string{"total"}, SessionOptions{Optimization: level})
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		out, err := s.Run([]*graph.Data{a, a})
		s.Close()
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		if v := f32Values(t, out[0]); v[0] != 42 {
			t.Errorf("level %d: total = %v, want 42", level, v[0])
		}
	}
}

func TestClosedSession(t *testing.T) {
	r := openRuntime(t)
	s, err := r.NewSession(addModel(t), []string{"a", "b"}, []string{"sum"}, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	a := f32Data(graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	if _, err := s.Run([]*graph.Data{a, a}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Run after Close: err = %v, want a closed-session error", err)
	}
}
