package serve

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/workload"
)

//go:embed web openapi.yaml
var webFiles embed.FS

// OpenAPI is the API's description, openapi.yaml: the one description of
// the results the web API answers and the CLI's --json prints.
func OpenAPI() []byte {
	b, err := webFiles.ReadFile("openapi.yaml")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	return b
}

// Defaults of Config.
const (
	DefaultMaxBody     = 1 << 20
	DefaultMaxSearches = 2
	DefaultMaxBudget   = time.Minute
	// DefaultMaxBenchTime bounds a bench request's scenarios × planners ×
	// budget.
	DefaultMaxBenchTime = 10 * time.Minute
)

// Config configures a Server. The zero value serves on loopback with the
// defaults above, the analytic cost model and no examples folder.
type Config struct {
	// Token, when set, must come with every request (see package doc).
	Token string
	// Examples is the folder of example workloads the Workload page offers
	// (*.yaml); workloads sent by the browser resolve relative paths
	// (ONNX files, platform files) inside it. "" means none.
	Examples string
	// MaxBody caps a request body in bytes (0: DefaultMaxBody).
	MaxBody int64
	// MaxSearches caps the searches (plan, bench) running at once (0:
	// DefaultMaxSearches).
	MaxSearches int
	// MaxBudget caps one search's wall-clock budget (0: DefaultMaxBudget).
	MaxBudget time.Duration
	// MaxBenchTime caps a bench's scenarios × planners × budget (0:
	// DefaultMaxBenchTime).
	MaxBenchTime time.Duration
	// Workers is the evaluations a search runs at once (0: one per core).
	Workers int
	// Profiles is the profile store the cost model answers from
	// (profile.CostModel, as the CLI's --profiles); "" means the analytic
	// model. ProfilesNamed: the user named it, so it must exist.
	Profiles      string
	ProfilesNamed bool
}

// Server is the web UI's state: running searches, recent plans and loaded
// workloads. Make one with New.
type Server struct {
	cfg   Config
	slots chan struct{} // one token per running search

	mu       sync.Mutex
	searches map[string]func() // running searches' cancel functions by ID
	plans    *recent[*Outcome] // recent plans by ID (the plan view's links)
	loaded   *recent[*workload.Workload]
}

// New returns a server for cfg, with defaults filled in.
func New(cfg Config) (*Server, error) {
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxSearches == 0 {
		cfg.MaxSearches = DefaultMaxSearches
	}
	if cfg.MaxBudget == 0 {
		cfg.MaxBudget = DefaultMaxBudget
	}
	if cfg.MaxBenchTime == 0 {
		cfg.MaxBenchTime = DefaultMaxBenchTime
	}
	if cfg.Workers <= 0 {
		cfg.Workers = goruntime.NumCPU()
	}
	if cfg.MaxBody < 0 || cfg.MaxSearches < 0 || cfg.MaxBudget < 0 || cfg.MaxBenchTime < 0 {
		return nil, errors.New("serve: limits must not be negative")
	}
	if cfg.ProfilesNamed {
		if _, err := os.Stat(cfg.Profiles); err != nil {
			return nil, fmt.Errorf("serve: --profiles %s: %v", cfg.Profiles, err)
		}
	}
	return &Server{
		cfg: cfg, slots: make(chan struct{}, cfg.MaxSearches),
		searches: map[string]func(){}, plans: newRecent[*Outcome](32), loaded: newRecent[*workload.Workload](16),
	}, nil
}

// cost is the cost model for a platform and workload: the CLI's
// (profile.CostModel with the configured store).
func (s *Server) cost(pl *hw.Platform, w *workload.Workload) (cost.Estimator, error) {
	est, _, err := profile.CostModel(s.cfg.Profiles, s.cfg.ProfilesNamed, pl, w)
	return est, err
}

// CheckListen returns an error when addr is not a loopback address and no
// token is given: inlay serve listens beyond this machine only behind a
// token.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: --listen %q: %v", addr, err)
	}
	if token == "" && !isLoopback(host) {
		return fmt.Errorf("serve: --listen %s is not a loopback address: give --token so that only holders of it get in", addr)
	}
	return nil
}

// isLoopback reports whether host (no port) names this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Handler returns the server's HTTP handler: pages, assets and the API,
// behind the token check, the body cap and panic recovery.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	web, _ := fs.Sub(webFiles, "web")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(web)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:")
		http.ServeFileFS(w, r, web, "index.html")
	})
	mux.HandleFunc("GET /api/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		http.ServeFileFS(w, r, webFiles, "openapi.yaml")
	})
	mux.HandleFunc("GET /api/examples", s.examples)
	mux.HandleFunc("GET /api/examples/{name}", s.example)
	mux.HandleFunc("POST /api/validate", s.validate)
	mux.HandleFunc("GET /api/planners", s.planners)
	mux.HandleFunc("GET /api/platforms", s.platforms)
	mux.HandleFunc("GET /api/platforms/{name}", s.platform)
	mux.HandleFunc("POST /api/platforms", s.platformFile)
	mux.HandleFunc("POST /api/inspect", s.inspect)
	mux.HandleFunc("POST /api/plan", s.plan)
	mux.HandleFunc("POST /api/plan/{id}/cancel", s.cancel)
	mux.HandleFunc("GET /api/plans/{id}", s.recentPlan)
	mux.HandleFunc("POST /api/simulate", s.simulate)
	mux.HandleFunc("POST /api/bench", s.bench)
	mux.HandleFunc("GET /api/cluster", s.clusterInfo)
	mux.HandleFunc("POST /api/cluster/simulate", s.clusterSimulate)
	mux.HandleFunc("GET /api/train/models", s.trainModels)
	mux.HandleFunc("POST /api/train/plan", s.trainPlan)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("serve: no API endpoint %s %s (see /api/openapi.yaml)", r.Method, r.URL.Path))
	})
	var h http.Handler = mux
	h = s.limitBody(h)
	h = http.NewCrossOriginProtection().Handler(h)
	h = s.authorize(h)
	return recoverPanics(h)
}

// authorize enforces the token, and without one refuses Host headers that
// do not name this machine (a page elsewhere cannot reach the API by
// rebinding its DNS name to 127.0.0.1).
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(r.Host); err == nil {
				host = h
			}
			if !isLoopback(host) {
				writeError(w, http.StatusForbidden, fmt.Errorf("serve: host %q is not this machine; a server without --token answers only on loopback names", r.Host))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet && s.tokenIs(q) {
			// A browser opens /?token=T once; the cookie carries it after.
			http.SetCookie(w, &http.Cookie{Name: "inlay_token", Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			qs := u.Query()
			qs.Del("token")
			u.RawQuery = qs.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		given := ""
		if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			given = a
		} else if c, err := r.Cookie("inlay_token"); err == nil {
			given = c.Value
		}
		if !s.tokenIs(given) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="inlay"`)
			writeError(w, http.StatusUnauthorized, errors.New("serve: missing or wrong token: send Authorization: Bearer TOKEN (in a browser, open /?token=TOKEN once)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tokenIs(given string) bool {
	return given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(s.cfg.Token)) == 1
}

func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.MaxBody {
			writeError(w, http.StatusRequestEntityTooLarge, s.tooLarge())
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tooLarge() error {
	return fmt.Errorf("serve: request body over the limit of %d bytes (inlay serve --max-body)", s.cfg.MaxBody)
}

// recoverPanics turns a panic into a one-line 500 (no stack reaches the
// client).
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, http.StatusInternalServerError, fmt.Errorf("serve: internal error: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
	// Line is the line of the workload or platform text the error is at
	// (0: none).
	Line int `json:"line,omitempty"`
}

// badRequest marks an error as the client's (400).
type badRequest struct{ error }

func (e badRequest) Unwrap() error { return e.error }

func bad(err error) error { return badRequest{err} }

func badf(format string, args ...any) error { return badRequest{fmt.Errorf(format, args...)} }

// writeError answers an error as one JSON line.
func writeError(w http.ResponseWriter, status int, err error) {
	msg := errline.OneLine(err)
	writeJSON(w, status, apiError{Error: msg, Line: lineOf(msg)})
}

// fail answers err with its status: 400 for the client's errors, 413 for an
// oversized body, 500 otherwise.
func fail(w http.ResponseWriter, err error) {
	var mb *http.MaxBytesError
	var br badRequest
	switch {
	case errors.As(err, &mb):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("serve: request body over the limit of %d bytes (inlay serve --max-body)", mb.Limit))
	case errors.As(err, &br):
		writeError(w, http.StatusBadRequest, err)
	default:
		writeError(w, http.StatusInternalServerError, err)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newID returns a random search or plan ID.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recent keeps the last n values by key.
type recent[T any] struct {
	n     int
	keys  []string
	items map[string]T
}

func newRecent[T any](n int) *recent[T] { return &recent[T]{n: n, items: map[string]T{}} }

func (c *recent[T]) get(k string) (T, bool) { v, ok := c.items[k]; return v, ok }

func (c *recent[T]) put(k string, v T) {
	if _, ok := c.items[k]; !ok {
		c.keys = append(c.keys, k)
	}
	c.items[k] = v
	for len(c.keys) > c.n {
		delete(c.items, c.keys[0])
		c.keys = c.keys[1:]
	}
}
