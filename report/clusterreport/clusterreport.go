// Package clusterreport renders the cluster wing's results (inlay
// cluster) for people and scripts: a simulation's metrics, the benches'
// tables, the cluster presets and policies as aligned text, every job's
// result as JSONL, and the pictures (Gantt chart of the GPUs, JCT CDF,
// average JCT against rate), each written to an io.Writer.
package clusterreport

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/internal/textfmt"
)

// WriteSim writes a simulation's result: what ran and its counters in a
// line, the fallbacks, and a table of the metrics.
func WriteSim(w io.Writer, r *sim.Result, wall time.Duration) {
	fmt.Fprintf(w, "%s on %s: %d jobs measured (IDs %d-%d)", r.Policy, r.Cluster, r.Jobs, r.Window[0], r.Window[1])
	if r.Unfinished > 0 {
		fmt.Fprintf(w, ", %d unfinished", r.Unfinished)
	}
	fmt.Fprintf(w, "; %d rounds, %d allocations, %d preemptions, %.1f s\n", r.Rounds, r.Recomputes, r.Preemptions, wall.Seconds())
	if r.Fallbacks > 0 {
		fmt.Fprintf(w, "%d allocations fell back to the policy's cheaper allocation (first: %s)\n", r.Fallbacks, r.FirstFallback)
	}
	tb := textfmt.Table{Header: []string{"metric", "value"}}
	tb.Add("avg JCT", fmt.Sprintf("%.2f h", r.AvgJCT))
	tb.Add("p50 / p90 / p99 JCT", fmt.Sprintf("%.2f / %.2f / %.2f h", r.P50JCT, r.P90JCT, r.P99JCT))
	tb.Add("makespan", fmt.Sprintf("%.2f h", r.Makespan))
	tb.Add("finish-time fairness ρ", fmt.Sprintf("avg %.2f, max %.2f", r.AvgFTF, r.MaxFTF))
	for _, g := range slices.Sorted(maps.Keys(r.Utilization)) {
		tb.Add("utilisation "+g, fmt.Sprintf("%.1f %%", 100*r.Utilization[g]))
	}
	tb.WriteTo(w) //nolint:errcheck
}

// SimJSON is a simulation's --json document: the result without the
// per-job rows, and the wall time in seconds (to the millisecond).
func SimJSON(w io.Writer, r *sim.Result, wall time.Duration) error {
	return json.NewEncoder(w).Encode(sim.NewOutcome(r, wall))
}

// WritePerJob writes every job's result and timeline as JSONL.
func WritePerJob(w io.Writer, r *sim.Result) error {
	enc := json.NewEncoder(w)
	for i := range r.PerJob {
		if err := enc.Encode(&r.PerJob[i]); err != nil {
			return err
		}
	}
	return nil
}

// WritePlatforms writes a row per cluster preset.
func WritePlatforms(w io.Writer) error {
	tb := textfmt.Table{Header: []string{"cluster", "GPUs"}}
	for _, n := range chw.Presets() {
		p, err := chw.Preset(n)
		if err != nil {
			return err
		}
		tb.Add(n, strings.TrimPrefix(p.Summary(), n+": "))
	}
	_, err := tb.WriteTo(w)
	return err
}

// WritePlatform writes a cluster's summary and a row per GPU type.
func WritePlatform(w io.Writer, p *chw.Platform) error {
	fmt.Fprintln(w, p.Summary())
	tb := textfmt.Table{Header: []string{"GPU", "count", "per server", "memory", "tensor TFLOPS", "$/GPU-h"}}
	for _, g := range p.Types() {
		gt, _ := p.GPUType(g)
		tb.Add(g, strconv.Itoa(p.Count(g)), strconv.Itoa(p.MaxGPUsPerNode(g)), fmt.Sprintf("%g GiB", gt.MemoryGiB), fmt.Sprintf("%g", gt.TensorTFLOPS), fmt.Sprintf("%.2f", gt.PricePerHour))
	}
	_, err := tb.WriteTo(w)
	return err
}

// WritePolicies writes a row per scheduling policy.
func WritePolicies(w io.Writer) error {
	tb := textfmt.Table{Header: []string{"policy", "what it does"}}
	reg := registry.Registry()
	for _, n := range registry.Names() {
		tb.Add(n, reg[n].Summary)
	}
	_, err := tb.WriteTo(w)
	return err
}
