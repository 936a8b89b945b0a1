package clusterreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/bench"
	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/sim"
)

func TestBenchPlots(t *testing.T) {
	rep := &bench.Report{Cluster: "c", Window: [2]int{1, 9}, Rows: []bench.Row{
		{Experiment: bench.Single, Rate: 1, Policy: "a", PerSeed: []float64{2}, Mean: 2},
		{Experiment: bench.Single, Rate: 2, Policy: "a", PerSeed: []float64{3}, Mean: 3},
		{Experiment: bench.Single, Rate: 1, Policy: "b", PerSeed: []float64{4}, Mean: 4},
		{Experiment: bench.Multi, Rate: 1, Policy: "a"}, // no seeds: no picture
		{Experiment: bench.Static, Rate: 5, Policy: "a", PerSeed: []float64{1}, Mean: 1},
	}}
	plots := BenchPlots(rep)
	if len(plots) != 1 || plots[0].Experiment != bench.Single || plots[0].Title != "single-GPU jobs on c, jobs 1-9" ||
		len(plots[0].Series) != 2 || plots[0].Series[0].Name != "a" || len(plots[0].Series[0].X) != 2 || plots[0].Series[1].Y[0] != 4 {
		t.Fatalf("%+v", plots)
	}
	var b bytes.Buffer
	if err := plots[0].Draw(&b, "svg"); err != nil || !strings.Contains(b.String(), "<svg") {
		t.Errorf("draw: %v", err)
	}
}

func TestGanttCDFPerJob(t *testing.T) {
	c, err := chw.Resolve("gavel-108-servers")
	if err != nil {
		t.Fatal(err)
	}
	r := &sim.Result{Policy: "p", Cluster: "gavel-108-servers", Window: [2]int{0, 1}, PerJob: []sim.JobResult{
		{ID: 0, Arrival: 3600, Finish: 7200, JCT: 3600, Spans: []sim.Span{{Start: 3600, End: 7200, GPU: "v100", Servers: []int{0, 0}, With: -1}}},
		{ID: 1, Arrival: 3600, Finish: 10800, JCT: 7200, Spans: []sim.Span{{Start: 3600, End: 10800, GPU: "v100", Servers: []int{1}, With: 0}}},
	}}
	var b bytes.Buffer
	if err := Gantt(&b, "svg", r, c, nil); err != nil || b.Len() == 0 {
		t.Errorf("gantt: %v", err)
	}
	b.Reset()
	if err := JCTCDF(&b, "svg", []*sim.Result{r}); err != nil || b.Len() == 0 {
		t.Errorf("cdf: %v", err)
	}
	b.Reset()
	if err := WritePerJob(&b, r); err != nil || strings.Count(b.String(), "\n") != 2 {
		t.Errorf("per job: %v %q", err, b.String())
	}
}
