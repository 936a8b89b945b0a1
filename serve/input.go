package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/workload"
)

// WorkloadInput is a workload as the browser sends it: its text and the
// file name it goes by (errors name it as the CLI names a file).
type WorkloadInput struct {
	// Name is a plain file name ("workload.yaml" when empty); the workload
	// is read as if it were that file in the examples folder.
	Name string `json:"name,omitempty"`
	YAML string `json:"yaml"`
	// Platform, when set, overrides the workload's platform: a preset, or
	// a file in the examples folder (the CLI's --platform).
	Platform string `json:"platform,omitempty"`
	// PlatformYAML, when set, is a platform file's text and overrides both;
	// PlatformName names it in errors ("platform.yaml" when empty).
	PlatformYAML string `json:"platform_yaml,omitempty"`
	PlatformName string `json:"platform_name,omitempty"`
}

// decode reads a JSON request body into v: unknown fields, trailing data
// and an empty body are errors, each one line.
func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return err
		}
		return badf("serve: reading the request body: %v", err)
	}
	return decodeBytes(data, v)
}

// request is a handler's decode: the request body as a T, or false once
// it has answered the error.
func request[T any](w http.ResponseWriter, r *http.Request) (T, bool) {
	var req T
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return req, false
	}
	return req, true
}

// decodeBytes is decode of a body already read.
func decodeBytes(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return badf("serve: empty request body: want a JSON object (see /api/openapi.yaml)")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badf("serve: request body: %s", errline.JSON(data, err))
	}
	if dec.More() {
		return badf("serve: request body: data after the JSON object")
	}
	if c, ok := v.(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return bad(err)
		}
	}
	return nil
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// checkName accepts a plain file name with a YAML extension.
func checkName(field, name string) error {
	if !plainName.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("serve: %s %q: want a plain file name (letters, digits, '.', '_', '-'; no folders)", field, name)
	}
	if ext := strings.ToLower(filepath.Ext(name)); ext != ".yaml" && ext != ".yml" {
		return fmt.Errorf("serve: %s %q: want a .yaml or .yml name", field, name)
	}
	return nil
}

func (in *WorkloadInput) check() error {
	if in.Name == "" {
		in.Name = "workload.yaml"
	}
	if err := checkName("workload name", in.Name); err != nil {
		return err
	}
	if strings.TrimSpace(in.YAML) == "" {
		return errors.New("serve: no workload text (yaml)")
	}
	if in.PlatformYAML != "" {
		if in.PlatformName == "" {
			in.PlatformName = "platform.yaml"
		}
		if err := checkName("platform name", in.PlatformName); err != nil {
			return err
		}
	}
	return nil
}

// errorPlace finds "PKG: FILE:LINE:" at the start of a one-line error: the
// file and line it points at.
var errorPlace = regexp.MustCompile(`^[a-z]+: ([^:]+):(\d+):`)

// lineOf is the line an error message points at (0: none).
func lineOf(msg string) int {
	m := errorPlace.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// fileOf is the file an error message points at ("" when none).
func fileOf(msg string) string {
	if m := errorPlace.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if pkg, rest, ok := strings.Cut(msg, ": "); ok && !strings.Contains(pkg, " ") {
		if f, _, ok := strings.Cut(rest, ": "); ok && !strings.Contains(f, " ") {
			return f
		}
	}
	return ""
}

// path is where a request's file is taken to live: in the examples folder,
// so that its relative paths resolve there.
func (s *Server) path(name string) string {
	if s.cfg.Examples == "" {
		return name
	}
	return filepath.Join(s.cfg.Examples, name)
}

// inside checks that a path named in a request's file stays in the
// examples folder: relative, without "..". place names it in the error.
func (s *Server) inside(file, place, p string) error {
	clean := filepath.Clean(p)
	if filepath.IsAbs(p) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return fmt.Errorf("workload: %s: %s: %q is outside the examples folder; the server reads only files in it and cache: models", file, place, p)
	}
	if s.cfg.Examples == "" {
		return fmt.Errorf("workload: %s: %s: %q names a file, and this server has no examples folder (inlay serve --examples)", file, place, p)
	}
	return nil
}

// parse checks a workload's text as the CLI does (workload.Parse) and
// that every file it names is one the server may read.
func (s *Server) parse(in WorkloadInput) (*workload.Workload, error) {
	path := s.path(in.Name)
	w, err := workload.Parse([]byte(in.YAML), path)
	if err != nil {
		return nil, bad(err)
	}
	for i, m := range w.Models {
		if m.ONNX == "" {
			continue
		}
		place := fmt.Sprintf("models[%d] (%s).onnx", i, m.Name)
		if rest, ok := strings.CutPrefix(m.ONNX, workload.CachePrefix); ok {
			if rest == "" || strings.ContainsAny(rest, `/\`) || rest == ".." {
				return nil, badf("workload: %s: %s: %q: a cache: path names a file of the fetched models' folder, without folders", path, place, m.ONNX)
			}
			continue
		}
		if err := s.inside(path, place, m.ONNX); err != nil {
			return nil, bad(err)
		}
	}
	if w.Platform != "" && !isPreset(w.Platform) {
		if err := s.inside(path, "platform", w.Platform); err != nil {
			return nil, bad(err)
		}
	}
	return w, nil
}

// load parses and loads a workload (cached by its name and text) and
// resolves its platform.
func (s *Server) load(in WorkloadInput) (*workload.Workload, *hw.Platform, error) {
	if _, err := s.parse(in); err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256([]byte(in.Name + "\x00" + in.YAML))
	key := hex.EncodeToString(sum[:])
	s.mu.Lock()
	w, ok := s.loaded.get(key)
	s.mu.Unlock()
	if !ok {
		var err error
		if w, err = workload.LoadData([]byte(in.YAML), s.path(in.Name)); err != nil {
			return nil, nil, bad(err)
		}
		s.mu.Lock()
		s.loaded.put(key, w)
		s.mu.Unlock()
	}
	pl, err := s.resolvePlatform(in, w)
	if err != nil {
		return nil, nil, err
	}
	return w, pl, nil
}

// resolvePlatform picks the platform text, the override, or the
// workload's own, in that order.
func (s *Server) resolvePlatform(in WorkloadInput, w *workload.Workload) (*hw.Platform, error) {
	switch {
	case in.PlatformYAML != "":
		pl, err := hw.Parse(s.path(in.PlatformName), []byte(in.PlatformYAML))
		if err != nil {
			return nil, bad(err)
		}
		return pl, nil
	case in.Platform != "":
		return s.platformNamed(in.Platform)
	case w.Platform != "":
		if isPreset(w.Platform) {
			return hw.Preset(w.Platform)
		}
		pl, err := hw.Load(w.Platform) // resolved inside the examples folder by LoadData; checked by parse
		if err != nil {
			return nil, bad(err)
		}
		return pl, nil
	}
	return nil, badf("plan: %s names no platform; pick one", s.path(in.Name))
}

// platformNamed is a preset, or a platform file in the examples folder.
func (s *Server) platformNamed(name string) (*hw.Platform, error) {
	if isPreset(name) {
		return hw.Preset(name)
	}
	if err := s.inside("request", "platform", name); err != nil {
		return nil, badf("serve: platform %q is neither a preset (%s) nor a file in the examples folder", name, strings.Join(hw.Presets(), ", "))
	}
	pl, err := hw.Load(s.path(name))
	if err != nil {
		return nil, bad(err)
	}
	return pl, nil
}

func isPreset(name string) bool {
	for _, p := range hw.Presets() {
		if p == name {
			return true
		}
	}
	return false
}
