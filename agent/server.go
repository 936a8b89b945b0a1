package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"github.com/inlay-dev/inlay/profile"
)

// Defaults of Options.
const (
	DefaultMaxUpload     = 64 << 20
	DefaultMaxWarmup     = 1000
	DefaultMaxReps       = 10000
	DefaultMaxQueue      = 4
	DefaultMaxInputBytes = 1 << 30
	// DefaultMaxRunDuration bounds the duration of a run request.
	DefaultMaxRunDuration = 10 * time.Minute
)

// Options tune a Server; a zero field takes its default.
type Options struct {
	// MaxUpload is the largest /v1/measure request body in bytes (the
	// base64 model and the rest of the JSON); default DefaultMaxUpload.
	MaxUpload int64
	// MaxWarmup and MaxReps bound a request's warm-up and timed runs.
	MaxWarmup, MaxReps int
	// MaxQueue is how many measure requests may wait (uploading, or for
	// the device) behind the running one before further requests are
	// refused with 503; it also bounds the uploads held in memory to
	// (MaxQueue+1)·MaxUpload. Default DefaultMaxQueue.
	MaxQueue int
	// MaxInputBytes bounds the total size of a request's input tensors.
	MaxInputBytes int64
	// Executor, when not nil, runs plans for POST /v1/run; without one
	// the agent only measures.
	Executor Executor
	// MaxRunDuration bounds a run's duration (default DefaultMaxRunDuration),
	// and a hand-off probe's.
	MaxRunDuration time.Duration
	// Prober, when not nil, measures the runtime's hand-off for POST
	// /v1/handoff; without one that endpoint answers 404.
	Prober HandOffProber
	// Logf, when not nil, receives one line per request served and per
	// recovered panic.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	orDefault(&o.MaxUpload, DefaultMaxUpload)
	orDefault(&o.MaxWarmup, DefaultMaxWarmup)
	orDefault(&o.MaxReps, DefaultMaxReps)
	orDefault(&o.MaxQueue, DefaultMaxQueue)
	orDefault(&o.MaxInputBytes, DefaultMaxInputBytes)
	orDefault(&o.MaxRunDuration, DefaultMaxRunDuration)
	return o
}

// orDefault sets *v to def when it is zero or negative (not set).
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Server is the agent's http.Handler: it serves one profile.Device.
type Server struct {
	dev       profile.Device
	tokenHash [sha256.Size]byte
	noToken   bool
	opt       Options
	mux       *http.ServeMux
	// slot holds one token while a measurement runs on the device.
	slot chan struct{}
	// waiting counts the measure requests past authentication and the
	// size check: the running one and those queued behind it.
	waiting atomic.Int64
}

var _ http.Handler = (*Server)(nil)

// NewServer returns the handler that serves dev to clients that present
// token. An empty token refuses every request (the agent never runs open).
func NewServer(dev profile.Device, token string, opt Options) *Server {
	s := &Server{
		dev:       dev,
		tokenHash: sha256.Sum256([]byte(token)),
		noToken:   token == "",
		opt:       opt.withDefaults(),
		slot:      make(chan struct{}, 1),
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/v1/info", s.info)
	s.mux.HandleFunc("/v1/measure", s.measure)
	s.mux.HandleFunc("/v1/run", s.run)
	s.mux.HandleFunc("/v1/handoff", s.handOff)
	s.mux.HandleFunc("/v1/cycle", s.cycle)
	return s
}

// ServeHTTP authenticates the request, recovers panics into 500 and routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			msg := oneLine(fmt.Sprint(v))
			s.logf("agent: %s %s: panic: %s", r.Method, r.URL.Path, msg)
			if !rec.wrote {
				writeError(rec, http.StatusInternalServerError, CodeInternal, "agent: internal error: "+msg)
			}
		}
		s.logf("agent: %s %s %s: %d", r.RemoteAddr, r.Method, r.URL.Path, rec.status)
	}()
	if !s.authorized(r) {
		rec.Header().Set("WWW-Authenticate", `Bearer realm="inlay-agent"`)
		writeError(rec, http.StatusUnauthorized, CodeUnauthorized, "agent: missing or wrong token (send Authorization: Bearer TOKEN)")
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		writeError(rec, http.StatusNotFound, CodeNotFound, fmt.Sprintf("agent: no such endpoint %s (try /v1/info, /v1/measure, /v1/run, /v1/handoff)", r.URL.Path))
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// authorized compares the bearer token in constant time (hashes of equal
// length, so that not even the token's length leaks).
func (s *Server) authorized(r *http.Request) bool {
	if s.noToken {
		return false
	}
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	got := sha256.Sum256([]byte(h[len(prefix):]))
	return subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) == 1
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, http.MethodGet)
		return
	}
	di, err := s.dev.Info(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "agent: info: "+oneLine(err.Error()))
		return
	}
	_, cycles := s.dev.(profile.CycleMeasurer)
	info, err := infoOf(di, s.opt.MaxUpload, cycles)
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "agent: info: "+oneLine(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func infoOf(di profile.DeviceInfo, maxUpload int64, cycles bool) (Info, error) {
	info := Info{Name: di.Name, ORTVersion: di.ORTVersion, AgentVersion: Version, Protocol: ProtocolVersion, MaxUploadBytes: maxUpload, Processors: []ProcessorInfo{},
		MeasureFields: append([]string(nil), MeasureFields...)}
	if cycles {
		info.MeasureFields = append(info.MeasureFields, CycleField, profile.ArrivalsField)
	}
	if di.Platform == nil {
		return info, errors.New("the device has no platform")
	}
	for _, p := range di.Platform.Processors {
		pi := ProcessorInfo{Name: p.Name, Kind: p.Kind, Backends: append([]string{}, p.Backends...), DTypes: []string{}, Cores: append([]int(nil), p.Cores...)}
		for _, d := range p.DTypes {
			pi.DTypes = append(pi.DTypes, d.DType.String())
		}
		info.Processors = append(info.Processors, pi)
	}
	var buf bytes.Buffer
	if err := hw.Encode(&buf, di.Platform); err != nil {
		return info, err
	}
	info.PlatformYAML = buf.String()
	return info, nil
}

// decodePost takes a POST's place in the queue, reads its body and decodes
// it strictly into v (what names the request in errors); on failure it has
// answered. The caller calls release when ok.
func (s *Server) decodePost(w http.ResponseWriter, r *http.Request, op, what string, v any) (release func(), ok bool) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, http.MethodPost)
		return nil, false
	}
	body, ok := s.readBody(w, r, op)
	if !ok {
		return nil, false
	}
	if err := decodeStrict(body, v); err != nil {
		s.waiting.Add(-1)
		writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("agent: %s: body is not a %s: %s", op, what, oneLine(err.Error())))
		return nil, false
	}
	return func() { s.waiting.Add(-1) }, true
}

func (s *Server) measure(w http.ResponseWriter, r *http.Request) {
	var mb MeasureBody
	release, ok := s.decodePost(w, r, "measure", "measure request", &mb)
	if !ok {
		return
	}
	defer release()
	mp, err := decodeModel(mb.Model)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "agent: measure: "+err.Error())
		return
	}
	req, err := mb.request()
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalid, "agent: measure: "+err.Error())
		return
	}
	di, err := s.dev.Info(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "agent: measure: device info: "+oneLine(err.Error()))
		return
	}
	if err := s.check(req, mp, di.Platform); err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalid, "agent: measure: "+err.Error())
		return
	}
	t, err := s.measureOnDevice(r.Context(), req)
	switch {
	case err != nil && r.Context().Err() != nil:
		// The client went away or the agent is shutting down; nobody reads
		// the answer, but say why.
		writeError(w, http.StatusServiceUnavailable, CodeBusy, "agent: measure: cancelled: "+oneLine(err.Error()))
	case err != nil:
		writeError(w, http.StatusUnprocessableEntity, CodeMeasureFailed, "agent: measure: "+oneLine(err.Error()))
	default:
		writeJSON(w, http.StatusOK, timingBody(t))
	}
}

func (s *Server) tooLarge(op string) string {
	return fmt.Sprintf("agent: %s: request body over the agent's limit of %d bytes (start the agent with a larger --max-upload)", op, s.opt.MaxUpload)
}

// measureOnDevice measures once the device is free, in arrival order.
func (s *Server) measureOnDevice(ctx context.Context, req profile.MeasureRequest) (profile.Timing, error) {
	release, ok := s.takeDevice(ctx)
	if !ok {
		return profile.Timing{}, ctx.Err()
	}
	defer release()
	return s.dev.Measure(ctx, req)
}

// takeDevice waits for the device to be free, in arrival order, and takes
// it; release frees it. ok is false when ctx ends first.
func (s *Server) takeDevice(ctx context.Context) (release func(), ok bool) {
	select {
	case s.slot <- struct{}{}:
		return func() { <-s.slot }, true
	case <-ctx.Done():
		return nil, false
	}
}

// queueForDevice is takeDevice for a handler: when ctx ends first it
// answers 503 (agent: OP: cancelled while queued) and ok is false.
func (s *Server) queueForDevice(ctx context.Context, w http.ResponseWriter, op string) (release func(), ok bool) {
	release, ok = s.takeDevice(ctx)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, CodeBusy, "agent: "+op+": cancelled while queued")
	}
	return release, ok
}

// readBody takes a place in the queue (the caller releases it with
// s.waiting.Add(-1) when ok) and reads a size-limited body; on failure it
// has answered.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, op string) ([]byte, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		writeError(w, http.StatusUnsupportedMediaType, CodeUnsupportedMedia, fmt.Sprintf("agent: %s: content type %q: send application/json", op, ct))
		return nil, false
	}
	if r.ContentLength > s.opt.MaxUpload {
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, s.tooLarge(op))
		return nil, false
	}
	// Take a place in the queue before reading the body, so that the
	// uploads held in memory are bounded too.
	if s.waiting.Add(1) > int64(s.opt.MaxQueue)+1 {
		s.waiting.Add(-1)
		writeError(w, http.StatusServiceUnavailable, CodeBusy, fmt.Sprintf("agent: %s: %d requests already queued; retry later", op, s.opt.MaxQueue))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opt.MaxUpload))
	if err != nil {
		s.waiting.Add(-1)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, s.tooLarge(op))
			return nil, false
		}
		writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("agent: %s: read body: %s", op, oneLine(err.Error())))
		return nil, false
	}
	return body, true
}

// decodeStrict decodes exactly one JSON value without unknown fields.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("body holds more than one JSON value")
	}
	return nil
}

// decodeModel checks that data is an ONNX model with a graph that has
// nodes and outputs.
func decodeModel(data []byte) (*onnxpb.ModelProto, error) {
	if len(data) == 0 {
		return nil, errors.New(`no model (send the ONNX model base64-encoded in "model")`)
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("model is not ONNX: %s", oneLine(err.Error()))
	}
	g := mp.GetGraph()
	if g == nil || len(g.GetNode()) == 0 || len(g.GetOutput()) == 0 || len(mp.GetOpsetImport()) == 0 {
		return nil, errors.New("model is not ONNX: no graph with nodes, outputs and an opset")
	}
	return &mp, nil
}

// check validates a request against the model and the device's platform.
// maxCorunConditions bounds a request's co-run conditions (the profiler
// sends four: three stream intensities and the real neighbours).
const maxCorunConditions = 8

func (s *Server) check(req profile.MeasureRequest, mp *onnxpb.ModelProto, pl *hw.Platform) error {
	if pl == nil {
		return errors.New("the device has no platform")
	}
	if req.Processor == "" {
		return fmt.Errorf("no processor given (one of %s)", strings.Join(pl.Names(), ", "))
	}
	id, err := pl.Find(req.Processor)
	if err != nil {
		return fmt.Errorf("unknown processor %q (this device has %s)", req.Processor, strings.Join(pl.Names(), ", "))
	}
	pr := pl.Processors[id]
	if req.Backend != "" && !slices.Contains(pr.Backends, req.Backend) {
		return fmt.Errorf("processor %s has no backend %q (it has %s)", pr.Name, req.Backend, strings.Join(pr.Backends, ", "))
	}
	if req.DType != "" {
		var names []string
		found := false
		for _, d := range pr.DTypes {
			names = append(names, d.DType.String())
			found = found || d.DType.String() == req.DType
		}
		if !found {
			return fmt.Errorf("processor %s does not compute in %q (it does in %s)", pr.Name, req.DType, strings.Join(names, ", "))
		}
	}
	if req.Warmup < 0 || req.Warmup > s.opt.MaxWarmup {
		return fmt.Errorf("warmup %d: want 0 to %d", req.Warmup, s.opt.MaxWarmup)
	}
	if req.Reps < 1 || req.Reps > s.opt.MaxReps {
		return fmt.Errorf("reps %d: want 1 to %d", req.Reps, s.opt.MaxReps)
	}
	if req.Cold < 0 || req.Cold > s.opt.MaxReps {
		return fmt.Errorf("cold runs %d: want 0 to %d", req.Cold, s.opt.MaxReps)
	}
	if req.Idle < 0 || req.Idle > s.opt.MaxReps {
		return fmt.Errorf("idle runs %d: want 0 to %d", req.Idle, s.opt.MaxReps)
	}
	// The inputs first: their checks name the dimension and the limit,
	// where MeasureRequest.Validate only says a shape is not fully known.
	if err := checkInputs(req.Inputs, mp, s.opt.MaxInputBytes); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "profile: measure: "))
	}
	if len(req.Corun) > maxCorunConditions {
		return fmt.Errorf("%d co-run conditions: want at most %d", len(req.Corun), maxCorunConditions)
	}
	for ci, c := range req.Corun {
		for li, l := range c.Loads {
			if _, err := pl.Find(l.Processor); err != nil {
				return fmt.Errorf("corun[%d].loads[%d]: unknown processor %q (this device has %s)", ci, li, l.Processor, strings.Join(pl.Names(), ", "))
			}
			for mi, m := range l.Models {
				var cmp onnxpb.ModelProto
				if err := proto.Unmarshal(m.Model, &cmp); err != nil {
					return fmt.Errorf("corun[%d].loads[%d].models[%d]: not an ONNX model: %v", ci, li, mi, err)
				}
				if err := checkInputs(m.Inputs, &cmp, s.opt.MaxInputBytes); err != nil {
					return fmt.Errorf("corun[%d].loads[%d].models[%d]: %w", ci, li, mi, err)
				}
			}
		}
	}
	return nil
}

// checkInputs checks that the inputs are exactly the model's graph inputs
// (initializers aside), with its element types, fully known positive shapes
// that agree with the dimensions the model declares, and a bounded size.
func checkInputs(inputs []profile.TensorSpec, mp *onnxpb.ModelProto, maxBytes int64) error {
	g := mp.GetGraph()
	inits := map[string]bool{}
	for _, t := range g.GetInitializer() {
		inits[t.GetName()] = true
	}
	declared := map[string]*onnxpb.ValueInfoProto{}
	var want []string
	for _, vi := range g.GetInput() {
		if !inits[vi.GetName()] {
			declared[vi.GetName()] = vi
			want = append(want, vi.GetName())
		}
	}
	if len(want) == 0 {
		return errors.New("the model has no graph inputs (a model without inputs cannot be measured)")
	}
	seen := map[string]bool{}
	var total int64
	for _, in := range inputs {
		vi, ok := declared[in.Name]
		switch {
		case in.Name == "":
			return errors.New("an input has no name")
		case seen[in.Name]:
			return fmt.Errorf("input %q given twice", in.Name)
		case !ok:
			return fmt.Errorf("input %q is not a graph input of the model (its inputs: %s)", in.Name, errline.QuoteAll(want))
		}
		seen[in.Name] = true
		if in.DType.Size() <= 0 {
			return fmt.Errorf("input %q: data type %s has no fixed element size", in.Name, in.DType)
		}
		if len(in.Shape) == 0 {
			return fmt.Errorf("input %q: no shape (scalars cannot be measured; give at least one dimension)", in.Name)
		}
		n := int64(1)
		for _, d := range in.Shape {
			if d < 1 {
				return fmt.Errorf("input %q: shape %v: every dimension must be at least 1", in.Name, []int64(in.Shape))
			}
			if n > maxBytes/d {
				return fmt.Errorf("input %q: shape %v is larger than the agent's limit of %d input bytes", in.Name, []int64(in.Shape), maxBytes)
			}
			n *= d
		}
		total += n * int64(in.DType.Size())
		if total > maxBytes {
			return fmt.Errorf("inputs larger than the agent's limit of %d bytes", maxBytes)
		}
		tt := vi.GetType().GetTensorType()
		if tt == nil {
			return fmt.Errorf("input %q is not a tensor in the model", in.Name)
		}
		if dt := graph.DType(tt.GetElemType()); dt != graph.Undefined && dt != in.DType {
			return fmt.Errorf("input %q: data type %s, but the model declares %s", in.Name, in.DType, dt)
		}
		if sp := tt.GetShape(); sp != nil {
			dims := sp.GetDim()
			if len(dims) != len(in.Shape) {
				return fmt.Errorf("input %q: shape %v has rank %d, but the model declares rank %d", in.Name, []int64(in.Shape), len(in.Shape), len(dims))
			}
			for i, d := range dims {
				if v, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); ok && v.DimValue > 0 && v.DimValue != in.Shape[i] {
					return fmt.Errorf("input %q: shape %v: dimension %d is %d in the model", in.Name, []int64(in.Shape), i, v.DimValue)
				}
			}
		}
	}
	for _, name := range want {
		if !seen[name] {
			return fmt.Errorf("model input %q is not among the inputs given", name)
		}
	}
	return nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

func (s *Server) logf(format string, args ...any) {
	if s.opt.Logf != nil {
		s.opt.Logf(format, args...)
	}
}

// statusWriter remembers whether and what status was written.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController and MaxBytesReader reach the
// underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func methodNotAllowed(w http.ResponseWriter, allowed string) {
	w.Header().Set("Allow", allowed)
	writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "agent: method not allowed (use "+allowed+")")
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorBody{Error: msg, Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: "agent: encode answer: " + oneLine(err.Error()), Code: CodeInternal})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// oneLine keeps the first line of a message.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
