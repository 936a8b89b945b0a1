package verify

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"github.com/inlay-dev/inlay/ort"
)

// sessionOptions keep the verify runs to one core.
var sessionOptions = ort.SessionOptions{IntraOpThreads: 1, InterOpThreads: 1}

// knownInputs gives inputs whose values the model needs to be meaningful:
// Silero VAD takes its sample rate as an int64 scalar and accepts only
// 8000 or 16000.
var knownInputs = map[string]func() *graph.Data{
	"sr": func() *graph.Data {
		return &graph.Data{DType: graph.Int64, Dims: graph.Shape{}, Raw: binary.LittleEndian.AppendUint64(nil, 16000)}
	},
}

// fullRun is one run of a real model on ONNX Runtime with every top-level
// node output exposed as an extra graph output.
type fullRun struct {
	source source
	bytes  []byte             // the model as ONNX Runtime runs it
	proto  *onnxpb.ModelProto // the original model, decoded
	inputs []string           // graph inputs (initializers excluded), file order
	feeds  []*graph.Data      // their values, in the order of inputs
	// values holds every graph input and every exposed node output by tensor name.
	values map[string]*graph.Data
	// exposed lists the exposed node outputs in node order.
	exposed []exposedOutput
}

// exposedOutput is one node output of the full run.
type exposedOutput struct {
	tensor string
	node   *onnxpb.NodeProto
}

var (
	runtimeOnce sync.Once
	runtimeRT   *ort.Runtime
	runtimeErr  error

	fullRunsMu sync.Mutex
	fullRuns   = map[string]*fullRun{}
	// fullRunUse orders the cached runs by last use (oldest first) and
	// fullRunBytes is their size: the cache keeps at most
	// fullRunBudget() bytes of them, besides the one in use.
	fullRunUse   []string
	fullRunBytes = map[string]int64{}
)

// fullRunBudget is how many bytes of full runs the cache keeps: every
// node output of a model is held, and kept for all 57 zoo variants
// (yolov5m's quantized forms at 640×640 among them) they outgrew the
// machine's 24 GB (make e2e-zoo was killed for memory). INLAY_VERIFY_CACHE_MB
// overrides the default 3 GiB; an evicted model is run again when asked.
func fullRunBudget() int64 {
	if v, err := strconv.ParseInt(os.Getenv("INLAY_VERIFY_CACHE_MB"), 10, 64); err == nil && v >= 0 {
		return v << 20
	}
	return 3 << 30
}

// size is the bytes a full run holds: the model and every value.
func (fr *fullRun) size() int64 {
	n := int64(len(fr.bytes))
	for _, v := range fr.values {
		n += int64(len(v.Raw))
	}
	return n
}

// touchFullRun marks name as used now and evicts the least recently used
// runs beyond the budget (never name). fullRunsMu is held.
func touchFullRun(name string) {
	fullRunUse = slices.DeleteFunc(fullRunUse, func(n string) bool { return n == name })
	fullRunUse = append(fullRunUse, name)
	var total int64
	for _, n := range fullRunUse {
		total += fullRunBytes[n]
	}
	for len(fullRunUse) > 1 && total > fullRunBudget() {
		old := fullRunUse[0]
		fullRunUse = fullRunUse[1:]
		total -= fullRunBytes[old]
		delete(fullRuns, old)
		delete(fullRunBytes, old)
	}
}

// openRuntime opens ONNX Runtime once for the test binary.
func openRuntime(t testing.TB) *ort.Runtime {
	t.Helper()
	lib := assets.Require(t, assets.ORTLibrary())
	runtimeOnce.Do(func() { runtimeRT, runtimeErr = ort.Open(lib) })
	if runtimeErr != nil {
		t.Fatal(runtimeErr)
	}
	return runtimeRT
}

// inputShapes turns a source's input shapes into loader options.
func inputShapes(src source) map[string]graph.Shape {
	out := map[string]graph.Shape{}
	for name, dims := range src.inputs {
		out[name] = graph.Shape(dims).Clone()
	}
	return out
}

// seedOf derives a per-model seed from its name, so that the models' random
// inputs do not depend on test order.
func seedOf(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64() >> 1)
}

// getFullRun runs a source once per test binary and caches the result.
func getFullRun(t testing.TB, src source) *fullRun {
	t.Helper()
	p := prepare(t, src)
	fullRunsMu.Lock()
	defer fullRunsMu.Unlock()
	if fr := fullRuns[src.name]; fr != nil {
		touchFullRun(src.name)
		return fr
	}
	rt := openRuntime(t)
	if p.bytesErr != nil {
		t.Fatalf("%s: %v", src.name, p.bytesErr)
	}
	fr, err := runExposed(rt, src, p.bytes)
	if err != nil {
		t.Fatalf("%s: %v", src.name, err)
	}
	fullRuns[src.name] = fr
	fullRunBytes[src.name] = fr.size()
	touchFullRun(src.name)
	return fr
}

// loaded is a source's full run (getFullRun) and its prepared model; a
// model that does not load fails the test.
func loaded(t *testing.T, src source) (*fullRun, *prepared) {
	t.Helper()
	fr := getFullRun(t, src)
	p := prepare(t, src)
	if p.err != nil {
		t.Fatalf("load: %v", p.err)
	}
	return fr, p
}

// graphInputs returns a model's inputs that are not initializers, with the
// dtype and shape to feed: the shape from the source's input shapes, else
// the declared one with symbolic dims set to 1.
func graphInputs(mp *onnxpb.ModelProto, src source) (names []string, dtypes []graph.DType, shapes []graph.Shape, err error) {
	inits := map[string]bool{}
	for _, ini := range mp.GetGraph().GetInitializer() {
		inits[ini.GetName()] = true
	}
	for _, vi := range mp.GetGraph().GetInput() {
		if inits[vi.GetName()] {
			continue
		}
		tt := vi.GetType().GetTensorType()
		if tt == nil {
			return nil, nil, nil, fmt.Errorf("input %q is not a tensor", vi.GetName())
		}
		shape := graph.Shape{}
		if dims, ok := src.inputs[vi.GetName()]; ok {
			shape = graph.Shape(dims).Clone()
		} else {
			for _, d := range tt.GetShape().GetDim() {
				if _, isValue := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); isValue {
					shape = append(shape, d.GetDimValue())
				} else {
					shape = append(shape, 1)
				}
			}
		}
		names = append(names, vi.GetName())
		dtypes = append(dtypes, graph.DType(tt.GetElemType()))
		shapes = append(shapes, shape)
	}
	return names, dtypes, shapes, nil
}

// makeFeeds builds the inputs of a model: known values where the model
// needs them, seeded random values elsewhere.
func makeFeeds(mp *onnxpb.ModelProto, src source) ([]string, []*graph.Data, error) {
	names, dtypes, shapes, err := graphInputs(mp, src)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewSource(seedOf(src.name)))
	feeds := make([]*graph.Data, len(names))
	for i, name := range names {
		if known := knownInputs[name]; known != nil {
			feeds[i] = known()
			continue
		}
		feeds[i] = ort.RandomData(dtypes[i], shapes[i], rng)
	}
	return names, feeds, nil
}

// defaultOpset is the model's version of the default operator set.
func defaultOpset(mp *onnxpb.ModelProto) int64 {
	for _, o := range mp.GetOpsetImport() {
		if o.GetDomain() == "" || o.GetDomain() == "ai.onnx" {
			return o.GetVersion()
		}
	}
	return 0
}

// exposeAll returns a copy of the model in which every top-level node
// output (except those of Constant nodes and omitted optional ones) is read
// through an extra Unsqueeze(axes=[0]) node whose output is a graph output
// without a declared type or shape. The Unsqueeze makes every exposed value
// rank ≥ 1, which the onnxruntime_go binding needs to return it; the value's
// own shape is the output's shape without its leading 1. It returns the
// extra output names, parallel to the exposed tensors.
func exposeAll(mp *onnxpb.ModelProto) (*onnxpb.ModelProto, []exposedOutput, []string) {
	m := proto.Clone(mp).(*onnxpb.ModelProto)
	g := m.GetGraph()
	used := map[string]bool{}
	for _, n := range g.GetNode() {
		for _, name := range append(append([]string{}, n.GetInput()...), n.GetOutput()...) {
			used[name] = true
		}
	}
	for _, vi := range append(append([]*onnxpb.ValueInfoProto{}, g.GetInput()...), g.GetOutput()...) {
		used[vi.GetName()] = true
	}
	for _, ini := range g.GetInitializer() {
		used[ini.GetName()] = true
	}
	fresh := func(base string) string {
		name := base
		for i := 1; used[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		used[name] = true
		return name
	}
	newOpset := defaultOpset(mp) >= 13
	axes := fresh("verify_axes0")
	if newOpset {
		g.Initializer = append(g.Initializer, &onnxpb.TensorProto{
			Name: proto.String(axes), DataType: proto.Int32(int32(graph.Int64)), Dims: []int64{1}, Int64Data: []int64{0},
		})
	}
	var exposed []exposedOutput
	var outNames []string
	original := g.GetNode()
	for _, n := range original {
		if n.GetOpType() == "Constant" && (n.GetDomain() == "" || n.GetDomain() == "ai.onnx") {
			continue
		}
		for _, o := range n.GetOutput() {
			if o == "" {
				continue
			}
			out := fresh(o + "__verify")
			u := &onnxpb.NodeProto{OpType: proto.String("Unsqueeze"), Name: proto.String(fresh("verify_unsqueeze_" + o)), Input: []string{o}, Output: []string{out}}
			if newOpset {
				u.Input = append(u.Input, axes)
			} else {
				u.Attribute = []*onnxpb.AttributeProto{{Name: proto.String("axes"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{0}}}
			}
			g.Node = append(g.Node, u)
			g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: proto.String(out)})
			exposed = append(exposed, exposedOutput{tensor: o, node: n})
			outNames = append(outNames, out)
		}
	}
	return m, exposed, outNames
}

// runExposed runs the model once with every node output exposed.
func runExposed(rt *ort.Runtime, src source, data []byte) (*fullRun, error) {
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	names, feeds, err := makeFeeds(mp, src)
	if err != nil {
		return nil, err
	}
	exp, exposed, outNames := exposeAll(mp)
	expBytes, err := proto.Marshal(exp)
	if err != nil {
		return nil, err
	}
	sess, err := rt.NewSession(expBytes, names, outNames, src.options)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	outs, err := sess.Run(feeds)
	if err != nil {
		return nil, err
	}
	fr := &fullRun{source: src, bytes: data, proto: mp, inputs: names, feeds: feeds, values: map[string]*graph.Data{}, exposed: exposed}
	for i, name := range names {
		fr.values[name] = feeds[i]
	}
	for i, e := range exposed {
		d := outs[i]
		if len(d.Dims) == 0 || d.Dims[0] != 1 {
			return nil, fmt.Errorf("exposed output %q: Unsqueeze gave shape %s", e.tensor, d.Dims)
		}
		fr.values[e.tensor] = &graph.Data{DType: d.DType, Dims: d.Dims[1:].Clone(), Raw: d.Raw}
	}
	return fr, nil
}
