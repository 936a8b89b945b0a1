package hw

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/fuzzcheck"
)

const minimal = `name: tiny
domains:
  - name: dram
  - name: acc
processors:
  - name: cpu0
    kind: cpu
    backends: [ort-cpu]
    dtypes:
      - {dtype: float32, peak_gops: 50}
    mem_bandwidth_gbs: 10
    domain: dram
  - name: npu
    kind: npu
    backends: [qnn-htp]
    dtypes:
      - {dtype: int8, peak_gops: 1000}
    mem_bandwidth_gbs: 20
    concurrency: 2
    domain: acc
links:
  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}
`

func TestParseMinimal(t *testing.T) {
	p, err := Parse("tiny.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "tiny" || len(p.Processors) != 2 || p.Processors[0].Concurrency != 1 || p.Processors[1].Concurrency != 2 {
		t.Fatalf("parsed %+v", p)
	}
	if p.Links[0].Latency != 10*time.Microsecond || p.Source != "tiny.yaml" {
		t.Errorf("link %+v source %q", p.Links[0], p.Source)
	}
}

// TestLoadErrors checks that every mistake gives one line naming the file,
// the line and the field.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		from    string // replaced in minimal
		to      string
		want    string
		wantNot string
	}{
		{"typo field", "    mem_bandwidth_gbs: 10\n", "    mem_bandwith_gbs: 10\n", `bad.yaml:11: processors[0]: unknown field "mem_bandwith_gbs"`, ""},
		{"top-level typo", "name: tiny\n", "nmae: tiny\n", `bad.yaml:1: unknown field "nmae"`, ""},
		{"unknown kind", "kind: npu", "kind: tpu", `bad.yaml:14: processors[1].kind: unknown kind "tpu"`, ""},
		{"unknown backend", "[qnn-htp]", "[qnn-htpp]", `bad.yaml:15: processors[1].backends[0]: unknown backend "qnn-htpp"`, ""},
		{"unknown dtype", "dtype: int8", "dtype: int9", `bad.yaml:17: processors[1].dtypes[0].dtype: unknown data type "int9"`, ""},
		{"non-compute dtype", "dtype: int8", "dtype: bool", `bad.yaml:17: processors[1].dtypes[0].dtype: bool is not a compute data type`, ""},
		{"zero peak", "peak_gops: 1000", "peak_gops: 0", `bad.yaml:17: processors[1].dtypes[0].peak_gops: must be > 0`, ""},
		{"negative bandwidth", "mem_bandwidth_gbs: 20", "mem_bandwidth_gbs: -1", `bad.yaml:18: processors[1].mem_bandwidth_gbs: must be > 0`, ""},
		{"zero concurrency", "concurrency: 2", "concurrency: 0", `bad.yaml:19: processors[1].concurrency: must be ≥ 1`, ""},
		{"duplicate name", "name: npu", "name: cpu0", `bad.yaml:13: processors[1].name: duplicate processor "cpu0"`, ""},
		{"name with a space", "name: npu", `name: "n pu"`, `bad.yaml:13: processors[1].name: name "n pu" has a space or a control character`, ""},
		{"name with a line break", "name: npu", `name: "n\npu"`, `bad.yaml:13: processors[1].name: name "n\npu" has a space or a control character`, ""},
		{"platform name with a tab", "name: tiny\n", "name: \"ti\\tny\"\n", `bad.yaml:1: name: name "ti\tny" has a space or a control character`, ""},
		{"unknown domain", "    domain: acc\n", "    domain: sram\n", `bad.yaml:20: processors[1].domain: unknown domain "sram"`, ""},
		{"link to unknown domain", "to: acc,", "to: gpu,", `bad.yaml:22: links[0].to: unknown domain "gpu"`, ""},
		{"link zero bandwidth", "bandwidth_gbs: 4", "bandwidth_gbs: 0", `bad.yaml:22: links[0].bandwidth_gbs: must be > 0`, ""},
		{"bad duration", "latency: 10us", "latency: 10 parsecs", `bad.yaml:22: links[0].latency: bad duration "10 parsecs"`, ""},
		{"no link", "links:\n  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\n", "", `bad.yaml:1: links: no link between domains "dram" and "acc"`, ""},
		{"wrong type", "peak_gops: 50", "peak_gops: fast", `bad.yaml:10: processors[0].dtypes[0].peak_gops: cannot unmarshal`, "\n"},
		{"syntax", "kind: cpu", "kind: [cpu", "bad.yaml:", "\n"},
		{"duplicate backend", "[ort-cpu]", "[ort-cpu, ort-cpu]", `bad.yaml:8: processors[0].backends[1]: duplicate backend "ort-cpu"`, ""},
		{"negative max rank", "    domain: acc\n", "    domain: acc\n    support: {max_rank: -1}\n", `bad.yaml:21: processors[1].support.max_rank: must be ≥ 0`, ""},
		{"negative memory", "    domain: acc\n", "    domain: acc\n    memory_mib: -1\n", `bad.yaml:21: processors[1].memory_mib: must be between 0 (unlimited) and`, ""},
		{"negative capacity", "  - name: acc\n", "  - name: acc\n    capacity_mib: -5\n", `bad.yaml:5: domains[1].capacity_mib: must be between 0 (unlimited) and`, ""},
		{"contention zero bandwidth", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\n", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\ncontention:\n  - {name: m, kind: memory, bandwidth_gbs: 0}\n", `bad.yaml:24: contention[0].bandwidth_gbs: must be > 0 for a memory channel`, ""},
		{"contention unknown kind", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\n", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\ncontention:\n  - {name: m, kind: bus, bandwidth_gbs: 3}\n", `bad.yaml:24: contention[0].kind: unknown kind "bus"`, ""},
		{"contention cache without size", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\n", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\ncontention:\n  - {name: l3, kind: cache}\n", `bad.yaml:24: contention[0].size_kib: must be > 0 for a cache`, ""},
		{"contention unknown processor", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\n", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\ncontention:\n  - {name: l3, kind: cache, size_kib: 64, processors: [cpu0, gpu]}\n", `bad.yaml:24: contention[0].processors[1]: unknown processor "gpu"`, ""},
		{"contention duplicate", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\n", "  - {from: dram, to: acc, bandwidth_gbs: 4, latency: 10us}\ncontention:\n  - {name: m, kind: memory, bandwidth_gbs: 3}\n  - {name: m, kind: memory, bandwidth_gbs: 3}\n", `bad.yaml:25: contention[1].name: duplicate shared resource "m"`, ""},
		{"sensitivity out of range", "    domain: acc\n", "    domain: acc\n    contention_sensitivity: 9\n", `bad.yaml:21: processors[1].contention_sensitivity: must be in [0, 4]`, ""},
		{"bad tensor dtype", "    domain: acc\n", "    domain: acc\n    support:\n      tensor_dtypes: [float33]\n", `bad.yaml:22: processors[1].support.tensor_dtypes[0]: unknown data type "float33"`, ""},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(minimal, tc.from) {
				t.Fatalf("test case does not apply: %q not in the minimal file", tc.from)
			}
			text := strings.Replace(minimal, tc.from, tc.to, 1)
			path := filepath.Join(dir, "bad.yaml")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatalf("accepted:\n%s", text)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q\nwant it to contain %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error has several lines: %q", msg)
			}
			if !strings.HasPrefix(msg, "hw: ") {
				t.Errorf("error %q lacks the package prefix", msg)
			}
		})
	}
}

func TestLoadEmptyAndMissing(t *testing.T) {
	if _, err := Parse("e.yaml", []byte("  \n")); err == nil || !strings.Contains(err.Error(), "e.yaml: empty") {
		t.Errorf("empty file: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestPresets(t *testing.T) {
	names := Presets()
	want := []string{"desktop", "galaxy-s23", "galaxy-s24", "galaxy-s25", "host", "jetson-orin", "phone", "snapdragon-x-elite"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("Presets() = %v, want %v", names, want)
	}
	for _, n := range names {
		p, err := Preset(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if p.Description == "" {
			t.Errorf("%s: no description", n)
		}
		src, _ := PresetSource(n)
		if !strings.Contains(string(src), "starting point to calibrate") {
			t.Errorf("%s: the top comment does not say the preset is a starting point to calibrate", n)
		}
	}
	if _, err := Preset("toaster"); err == nil || !strings.Contains(err.Error(), "phone") {
		t.Errorf("unknown preset: %v", err)
	}
}

var citation = regexp.MustCompile(`(#|description:).*\[[A-Z][A-Z0-9-]*\]`)

// TestPresetNumbersCite checks that every processor and link of a preset
// file, with the comment lines just above it, cites a source ([TAG], defined
// at the top of the file) or says that a figure is an assumption.
func TestPresetNumbersCite(t *testing.T) {
	for _, n := range Presets() {
		src, _ := PresetSource(n)
		var section string
		var entries []string
		var comments, cur strings.Builder
		flush := func() {
			if cur.Len() > 0 {
				entries = append(entries, cur.String())
				cur.Reset()
			}
		}
		for _, line := range strings.Split(string(src), "\n") {
			trim := strings.TrimSpace(line)
			switch {
			case !strings.HasPrefix(line, " ") && strings.HasSuffix(trim, ":"):
				flush()
				section = trim
				comments.Reset()
			case section != "processors:" && section != "links:" && section != "contention:":
			case strings.HasPrefix(trim, "#"):
				comments.WriteString(line + "\n")
			case strings.HasPrefix(line, "  - "):
				flush()
				cur.WriteString(comments.String())
				comments.Reset()
				cur.WriteString(line + "\n")
			default:
				cur.WriteString(comments.String())
				comments.Reset()
				cur.WriteString(line + "\n")
			}
		}
		flush()
		if len(entries) == 0 {
			t.Errorf("%s: no processor or link found", n)
		}
		for _, e := range entries {
			if !citation.MatchString(e) && !strings.Contains(e, "assumption") {
				t.Errorf("%s: entry without a citation:\n%s", n, e)
			}
		}
	}
}

func TestPresetShapes(t *testing.T) {
	phone, _ := Preset("phone")
	if got := phone.Names(); !reflect.DeepEqual(got, []string{"cpu-prime", "cpu-perf", "cpu-eff", "gpu", "npu"}) {
		t.Errorf("phone processors %v", got)
	}
	orin, _ := Preset("jetson-orin")
	if got := orin.Names(); !reflect.DeepEqual(got, []string{"cpu", "gpu", "dla0", "dla1"}) {
		t.Errorf("jetson-orin processors %v", got)
	}
	desk, _ := Preset("desktop")
	if len(desk.Domains) != 2 || len(desk.Links) == 0 || desk.Links[0].Latency == 0 {
		t.Errorf("desktop: want two domains and a PCIe link with latency, got %+v", desk)
	}
}

func TestHost(t *testing.T) {
	p, err := Host([]int{2, 3, 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Names(); !reflect.DeepEqual(got, []string{"cpu2", "cpu3", "cpu5"}) {
		t.Fatalf("names %v", got)
	}
	for _, pr := range p.Processors {
		if len(pr.Cores) != 1 || pr.Backends[0] != "ort-cpu" || pr.DTypes[0].DType != graph.Float32 || pr.Kind != "cpu" {
			t.Errorf("processor %+v", pr)
		}
	}
	if p.Processors[2].Cores[0] != 5 {
		t.Errorf("cpu5 pinned to %v", p.Processors[2].Cores)
	}
	if _, err := Host(nil); err == nil {
		t.Error("Host(nil) accepted")
	}
	if cores := HostCores(); len(cores) == 0 {
		t.Error("HostCores found no core")
	}
	if p, err := Preset("host"); err != nil || len(p.Processors) == 0 {
		t.Errorf("Preset(host) = %v, %v", p, err)
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{"0-3", []int{0, 1, 2, 3}, false},
		{"0,2,4-5", []int{0, 2, 4, 5}, false},
		{"7", []int{7}, false},
		{"3-1", nil, true},
		{"x", nil, true},
	}
	for _, tc := range tests {
		got, err := parseCPUList(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("parseCPUList(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestFind(t *testing.T) {
	phone, _ := Preset("phone")
	orin, _ := Preset("jetson-orin")
	tests := []struct {
		p    *Platform
		q    string
		want string
	}{
		{phone, "cpu", "cpu-prime"},
		{phone, "cpu-eff", "cpu-eff"},
		{phone, "npu", "npu"},
		{phone, "GPU", "gpu"},
		{orin, "dla", "dla0"},
		{orin, "dla1", "dla1"},
		{orin, "cpu", "cpu"},
	}
	for _, tc := range tests {
		id, err := tc.p.Find(tc.q)
		if err != nil || tc.p.Processors[id].Name != tc.want {
			t.Errorf("%s.Find(%q) = %d, %v; want %s", tc.p.Name, tc.q, id, err, tc.want)
		}
	}
	if _, err := phone.Find("dla"); err == nil || !strings.Contains(err.Error(), "cpu-prime") {
		t.Errorf("Find(dla) on phone: %v", err)
	}
}

func TestConfigs(t *testing.T) {
	phone, _ := Preset("phone")
	npu, _ := phone.Find("npu")
	cs := phone.Configs(npu)
	if len(cs) != 4 || cs[0] != phone.DefaultConfig(npu) {
		t.Fatalf("Configs(npu) = %v", cs)
	}
	if d := phone.DefaultConfig(npu); d.Backend != "qnn-htp" || d.DType != graph.Int8 {
		t.Errorf("DefaultConfig(npu) = %v", d)
	}
	seen := map[Config]bool{}
	for _, c := range cs {
		if seen[c] {
			t.Errorf("duplicate config %v", c)
		}
		seen[c] = true
		if err := phone.CheckConfig(c); err != nil {
			t.Error(err)
		}
	}
	if err := phone.CheckConfig(Config{Proc: npu, Backend: "qnn-htp", DType: graph.Float32}); err == nil {
		t.Error("npu float32 accepted")
	}
	if err := phone.CheckConfig(Config{Proc: npu, Backend: "cuda", DType: graph.Int8}); err == nil {
		t.Error("npu cuda accepted")
	}
	if err := phone.CheckConfig(Config{Proc: 99}); err == nil {
		t.Error("processor 99 accepted")
	}
}

func TestTransfer(t *testing.T) {
	phone, _ := Preset("phone")
	desk, _ := Preset("desktop")
	id := func(p *Platform, n string) int {
		i, err := p.Find(n)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	pcie := desk.Links[0]
	mb := int64(1 << 20)
	tests := []struct {
		name     string
		p        *Platform
		from, to string
		bytes    int64
		want     time.Duration
		link     bool
	}{
		{"same processor", phone, "gpu", "gpu", mb, 0, false},
		{"zero-copy cpu→gpu", phone, "cpu-prime", "gpu", mb, 0, false},
		{"cpu→npu copies", phone, "cpu-prime", "npu", 8_000_000, phone.Links[0].Latency + time.Millisecond, true},
		{"npu→cpu uses the same link", phone, "npu", "cpu-eff", 8_000_000, phone.Links[0].Latency + time.Millisecond, true},
		{"pcie host→gpu", desk, "cpu", "gpu", 25_000_000, pcie.Latency + time.Millisecond, true},
		{"zero bytes pays latency", desk, "gpu", "cpu", 0, desk.Links[1].Latency, true},
	}
	for _, tc := range tests {
		from, to := id(tc.p, tc.from), id(tc.p, tc.to)
		if got := tc.p.Transfer(tc.bytes, from, to); got != tc.want {
			t.Errorf("%s: Transfer = %v, want %v", tc.name, got, tc.want)
		}
		if _, ok := tc.p.Link(from, to); ok != tc.link {
			t.Errorf("%s: Link ok = %v, want %v", tc.name, ok, tc.link)
		}
	}
	h2d, _ := desk.Link(id(desk, "cpu"), id(desk, "gpu"))
	d2h, _ := desk.Link(id(desk, "gpu"), id(desk, "cpu"))
	if h2d == d2h {
		t.Errorf("desktop: both directions share link %d; PCIe is full duplex", h2d)
	}
}

// roundTrip encodes p and parses the text back as file; it returns the
// platform read and the text.
func roundTrip(t *testing.T, p *Platform, file string) (*Platform, string) {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	q, err := Parse(file, b.Bytes())
	if err != nil {
		t.Fatalf("%s: re-reading the encoded platform: %v\n%s", file, err, b.String())
	}
	return q, b.String()
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, n := range Presets() {
		p, _ := Preset(n)
		q, text := roundTrip(t, p, n+".yaml")
		q.Source = p.Source
		if !reflect.DeepEqual(p, q) {
			t.Errorf("%s: round trip differs\n%s", n, text)
		}
	}
}

func TestResolve(t *testing.T) {
	if p, err := Resolve("phone"); err != nil || p.Name != "phone" {
		t.Errorf("Resolve(phone) = %v, %v", p, err)
	}
	path := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(path, []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := Resolve(path); err != nil || p.Name != "tiny" {
		t.Errorf("Resolve(file) = %v, %v", p, err)
	}
	if _, err := Resolve("no-such-platform"); err == nil || !strings.Contains(err.Error(), "jetson-orin") {
		t.Errorf("Resolve(unknown) = %v", err)
	}
}

// FuzzParse checks that no input makes Parse panic and that every error is
// one line.
func FuzzParse(f *testing.F) {
	fuzzcheck.OneLineErrors(f, func(data []byte) error {
		_, err := Parse("f.yaml", data)
		return err
	}, append(presets.Sources(), []byte(minimal))...)
}

func TestMemoryCapacities(t *testing.T) {
	text := strings.Replace(strings.Replace(minimal, "  - name: acc\n", "  - name: acc\n    capacity_mib: 512\n", 1),
		"    domain: dram\n", "    domain: dram\n    memory_mib: 2048\n", 1)
	p, err := Parse("mem.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if p.Processors[0].MemoryBytes != 2048<<20 || p.Processors[1].MemoryBytes != 0 || p.Domains[1].CapacityBytes != 512<<20 || p.Domains[0].CapacityBytes != 0 {
		t.Fatalf("memory %d, %d; capacity %d, %d", p.Processors[0].MemoryBytes, p.Processors[1].MemoryBytes, p.Domains[0].CapacityBytes, p.Domains[1].CapacityBytes)
	}
	want := []MemoryLimit{
		{What: `processor "cpu0" (memory_mib)`, Procs: []ProcID{0}, Bytes: 2048 << 20},
		{What: `domain "acc" (capacity_mib)`, Procs: []ProcID{1}, Bytes: 512 << 20},
	}
	if got := p.MemoryLimits(); !reflect.DeepEqual(got, want) {
		t.Errorf("limits %+v, want %+v", got, want)
	}
	q, text := roundTrip(t, p, "again.yaml")
	if !reflect.DeepEqual(q.MemoryLimits(), want) {
		t.Errorf("round trip lost the capacities:\n%s", text)
	}
	if (&Platform{Name: "x"}).MemoryLimits() != nil {
		t.Error("a platform without capacities has limits")
	}
	p.Domains[1].CapacityBytes = -1
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "capacity_mib") {
		t.Errorf("negative capacity validated: %v", err)
	}
}

func TestWeightBytes(t *testing.T) {
	w := graph.Work{WeightBytes: 4000, DType: graph.Float32}
	for _, c := range []struct {
		d    graph.DType
		want int64
	}{{graph.Float32, 4000}, {graph.Float16, 2000}, {graph.Int8, 1000}} {
		if got := WeightBytes(w, c.d); got != c.want {
			t.Errorf("float32 weights in %s: %d bytes, want %d", c.d, got, c.want)
		}
	}
	if got := WeightBytes(graph.Work{WeightBytes: 1000, DType: graph.Int8}, graph.Float16); got != 1000 {
		t.Errorf("int8 weights in float16: %d, want 1000 (kept as they are)", got)
	}
}

// TestPresetContention checks that the presets say what their processors
// share, and that Sharers lists it per processor.
func TestPresetContention(t *testing.T) {
	for _, tc := range []struct {
		preset string
		// shared is how many resources each processor shares, in ID order.
		shared []int
	}{
		{"phone", []int{2, 2, 2, 1, 1}},
		{"jetson-orin", []int{2, 2, 2, 2}},
		{"host", nil},
	} {
		p, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Shared) == 0 {
			t.Errorf("%s: no shared resources", tc.preset)
		}
		sh := p.Sharers()
		for i, want := range tc.shared {
			if len(sh[i]) != want {
				t.Errorf("%s: processor %s shares %v, want %d resources", tc.preset, p.Processors[i].Name, sh[i], want)
			}
		}
		for _, pr := range p.Processors {
			if pr.ContentionSensitivity != DefaultContentionSensitivity {
				t.Errorf("%s: %s sensitivity %v", tc.preset, pr.Name, pr.ContentionSensitivity)
			}
		}
	}
	h, err := Host([]int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range h.Sharers() {
		if len(s) != 2 {
			t.Errorf("host core %d shares %v, want the LLC and the memory channel", i, s)
		}
	}
	back, _ := roundTrip(t, h, "round.yaml")
	if !reflect.DeepEqual(back.Shared, h.Shared) {
		t.Errorf("round trip: %+v, want %+v", back.Shared, h.Shared)
	}
}
