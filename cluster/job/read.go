package job

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/inlay-dev/inlay/cluster/internal/yamlerr"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/internal/yamlpath"
)

// Format is a trace file format.
type Format string

const (
	JSONL Format = "jsonl" // one JSON job object a line
	YAML  Format = "yaml"  // {jobs: [...]}
	Gavel Format = "gavel" // Gavel's tab-separated trace lines
)

// maxJobs bounds a trace, so that a runaway file cannot exhaust memory.
const maxJobs = 5_000_000

// Load reads a trace from a file, choosing the format from the extension
// (.jsonl/.json, .yaml/.yml, .trace/.txt/.tsv) or else from the content.
func Load(path string) ([]Job, error) {
	return loadfile.Read("cluster/job", path, func(file string, data []byte) ([]Job, error) { return Parse(file, data, "") })
}

// Detect guesses the format of a file from its name and content.
func Detect(file string, data []byte) Format {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".jsonl", ".json", ".ndjson":
		return JSONL
	case ".yaml", ".yml":
		return YAML
	case ".trace", ".txt", ".tsv":
		return Gavel
	}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		return JSONL
	case bytes.ContainsRune(firstLine(trimmed), '\t'):
		return Gavel
	}
	return YAML
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// Parse reads a trace in format f ("" detects it). Jobs get IDs in file
// order; arrivals must not decrease. Errors are one line naming the file
// and the line.
func Parse(file string, data []byte, f Format) ([]Job, error) {
	if f == "" {
		f = Detect(file, data)
	}
	var jobs []Job
	var lines []int
	var err error
	switch f {
	case JSONL:
		jobs, lines, err = parseJSONL(file, data)
	case YAML:
		jobs, lines, err = parseYAML(file, data)
	case Gavel:
		jobs, lines, err = parseGavel(file, data)
	default:
		return nil, fmt.Errorf("cluster/job: %s: unknown format %q (jsonl, yaml, gavel)", file, f)
	}
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("cluster/job: %s: no jobs", file)
	}
	for i := range jobs {
		j := &jobs[i]
		j.ID = i
		j.Line = lines[i]
		if len(j.Stages) > 0 && j.Type == "" {
			j.Type, j.GPUs, j.Steps = j.Stages[0].Type, j.Stages[0].GPUs, j.Stages[0].Steps
		}
		msg := j.checkModel()
		if msg == "" {
			msg = j.check()
		}
		if msg != "" {
			return nil, fmt.Errorf("cluster/job: %s:%d: %s", file, lines[i], msg)
		}
		if i > 0 && j.Arrival < jobs[i-1].Arrival {
			return nil, fmt.Errorf("cluster/job: %s:%d: arrival %gs before the previous job's %gs (traces are in arrival order)", file, lines[i], j.Arrival, jobs[i-1].Arrival)
		}
	}
	return jobs, nil
}

// eachLine reads a trace of one job a line: blank lines and lines whose
// first non-space is # are skipped; parse turns line n into a job.
func eachLine(file string, data []byte, parse func(n int, line string) (Job, error)) ([]Job, []int, error) {
	var jobs []Job
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
			continue
		}
		if len(jobs) >= maxJobs {
			return nil, nil, fmt.Errorf("cluster/job: %s:%d: more than %d jobs", file, n, maxJobs)
		}
		j, err := parse(n, line)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, j)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("cluster/job: %s:%d: %v", file, n+1, err)
	}
	return jobs, lines, nil
}

func parseJSONL(file string, data []byte) ([]Job, []int, error) {
	return eachLine(file, data, func(n int, text string) (Job, error) {
		line := []byte(strings.TrimSpace(text))
		var j Job
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			msg := errline.JSON(line, err)
			msg = strings.TrimPrefix(msg, "line 1: ")
			return j, fmt.Errorf("cluster/job: %s:%d: %s", file, n, msg)
		}
		if dec.More() {
			return j, fmt.Errorf("cluster/job: %s:%d: more than one JSON value on the line", file, n)
		}
		return j, nil
	})
}

var yamlLineRE = regexp.MustCompile(`line (\d+): (.*)`)

func parseYAML(file string, data []byte) ([]Job, []int, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, yamlErr(file, err)
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 && root.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("cluster/job: %s:%d: want a mapping with a jobs: list", file, root.Content[0].Line)
	}
	var doc struct {
		Jobs []yaml.Node `yaml:"jobs"`
	}
	if err := yamlpath.DecodeStrict(data, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("cluster/job: %s: empty job file", file)
		}
		return nil, nil, yamlErr(file, err)
	}
	if len(doc.Jobs) > maxJobs {
		return nil, nil, fmt.Errorf("cluster/job: %s: more than %d jobs", file, maxJobs)
	}
	jobs := make([]Job, len(doc.Jobs))
	lines := make([]int, len(doc.Jobs))
	for i := range doc.Jobs {
		lines[i] = doc.Jobs[i].Line
		if err := decodeStrict(&doc.Jobs[i], &jobs[i]); err != nil {
			return nil, nil, yamlErr(file, err)
		}
	}
	return jobs, lines, nil
}

// decodeStrict decodes one node rejecting unknown fields (yaml.Node.Decode
// has no KnownFields of its own, so the node is re-encoded).
func decodeStrict(n *yaml.Node, v any) error {
	out, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	if err := yamlpath.DecodeStrict(out, v); err != nil {
		// Lines of the re-encoded node are relative to it.
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			rel, _ := strconv.Atoi(m[1])
			return fmt.Errorf("line %d: %s", n.Line+rel-1, m[2])
		}
		return err
	}
	return nil
}

func yamlErr(file string, err error) error {
	line, msg := yamlerr.Split(err)
	if line == "" {
		return fmt.Errorf("cluster/job: %s: %s", file, msg)
	}
	return fmt.Errorf("cluster/job: %s:%s: %s", file, line, msg)
}

// parseGavel reads Gavel's trace lines (scheduler/utils.py parse_trace):
//
//	job_type \t command \t num_steps_arg \t needs_data_dir \t total_steps \t scale_factor \t priority_weight \t SLO \t arrival_time
//
// and the older form with a working directory after the command (10
// fields). Blank lines and lines starting with # are skipped.
func parseGavel(file string, data []byte) ([]Job, []int, error) {
	return eachLine(file, data, func(n int, line string) (Job, error) {
		f := strings.Split(line, "\t")
		if len(f) == 10 {
			f = append(f[:2], f[3:]...) // drop the working directory
		}
		if len(f) != 9 {
			return Job{}, fmt.Errorf("cluster/job: %s:%d: want 9 tab-separated fields (job_type, command, num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, SLO, arrival_time), got %d", file, n, len(f))
		}
		num := func(i int, name string) (float64, error) {
			v, err := strconv.ParseFloat(strings.TrimSpace(f[i]), 64)
			if err != nil {
				return 0, fmt.Errorf("cluster/job: %s:%d: %s: not a number: %q", file, n, name, f[i])
			}
			return v, nil
		}
		steps, err := num(4, "total_steps")
		if err != nil {
			return Job{}, err
		}
		scale, err := num(5, "scale_factor")
		if err != nil {
			return Job{}, err
		}
		if scale != math.Trunc(scale) || scale < 1 || scale > 1<<20 {
			return Job{}, fmt.Errorf("cluster/job: %s:%d: scale_factor must be a positive integer, got %q", file, n, f[5])
		}
		weight, err := num(6, "priority_weight")
		if err != nil {
			return Job{}, err
		}
		arrival, err := num(8, "arrival_time")
		if err != nil {
			return Job{}, err
		}
		return Job{Type: strings.TrimSpace(f[0]), GPUs: int(scale), Steps: steps, Arrival: arrival, Weight: weight}, nil
	})
}

// WriteJSONL writes jobs one JSON object a line.
func WriteJSONL(w io.Writer, jobs []Job) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range jobs {
		if err := enc.Encode(&jobs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}
