package milp_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/solver"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

// BenchmarkReach measures what the MILP proves within a time limit
// (-reach.limit, default 60s) on CBC with two threads, cold (no start), for
// growing workloads: the first k networks of -reach.nets (default
// mobilenet_v2, resnet50, mobilenet_v3_large, efficientnet_b0, yolov5s) in
// one group at 10 Hz on -reach.platform (default phone). It prints one line
// per size: layers × processors × models, status, gap, time.
// -reach.cbc-args adds CBC options ("-cuts off"). Run:
// go test -run '^$' -bench Reach -benchtime 1x ./search/milp/ -args -reach.limit 30s
func BenchmarkReach(b *testing.B) {
	limit, nets, platName := *reachLimit, strings.Split(*reachNets, ","), *reachPlatform
	pl, err := hw.Resolve(platName)
	if err != nil {
		b.Fatal(err)
	}
	est := cost.NewAnalytic(pl)
	for b.Loop() {
		for k := 1; k <= len(nets); k++ {
			w := &workload.Workload{Platform: platName}
			layers := 0
			for _, name := range nets[:k] {
				g, lg, err := zoo.Layers(name)
				if err != nil {
					b.Fatal(err)
				}
				layers += len(lg.Layers)
				w.Models = append(w.Models, &workload.Model{Name: name, Graph: g, Layers: lg, Zoo: name})
			}
			names := append([]string(nil), nets[:k]...)
			w.Groups = []*workload.Group{{Name: "g", Models: names, Period: 100 * time.Millisecond, Deadline: 100 * time.Millisecond, Arrival: workload.Periodic}}
			w.AllowInt8()
			f := formulate(b, &plan.Request{Workload: w, Platform: pl, Cost: est})
			res, err := solver.Solve(context.Background(), f.Model, solver.Options{TimeLimit: limit, Threads: 2, Args: strings.Fields(*reachCBCArgs)})
			if err != nil {
				b.Fatal(err)
			}
			fmt.Printf("reach: %4d layers × %d processors × %d models: %-10s gap %6.2f%%  %6.1fs  (%d rows, %d vars, %d binaries)\n",
				layers, len(pl.Processors), k, res.Status, 100*res.Gap, res.Wall.Seconds(), f.Model.NumRows(), f.Model.NumVars(), f.Model.NumIntegers())
		}
	}
}

// BenchmarkRelaxedBound compares, on the bench's nine-model scenarios
// (inlay bench --seed 1 --min-models 9: the same draws), the fluid bound
// of ratebound.Upper with the bound of the MILP's continuous relaxation
// (valid for every plan, as the MILP's), and prints both as rate scales.
// Run: go test -run '^$' -bench RelaxedBound -benchtime 1x ./search/milp/
func BenchmarkRelaxedBound(b *testing.B) {
	pl, err := hw.Resolve("phone")
	if err != nil {
		b.Fatal(err)
	}
	est := cost.NewAnalytic(pl)
	scenarios := 2
	build := zoo.CachedLayers()
	for b.Loop() {
		rng := rand.New(rand.NewSource(1))
		for k := range scenarios {
			w, err := workload.Scenario(rng, workload.ScenarioOptions{Networks: zoo.Names(), MinModels: 9}, build)
			if err != nil {
				b.Fatal(err)
			}
			w.AllowInt8()
			fluid, err := ratebound.Upper(w, pl, est)
			if err != nil {
				b.Fatal(err)
			}
			f := formulate(b, &plan.Request{Workload: w, Platform: pl, Cost: est})
			res, err := solver.Solve(context.Background(), f.Model, solver.Options{Relaxed: true, Threads: 2})
			if err != nil {
				b.Fatal(err)
			}
			fmt.Printf("relaxed: scenario %d, %d models: fluid bound %.3f, MILP relaxation bound %.3f (%.1f%% tighter; %s, %.1fs, %d rows, %d vars)\n",
				k, len(w.Models), fluid.Scale, 1/res.Objective, 100*(1-(1/res.Objective)/fluid.Scale), res.Status, res.Wall.Seconds(), f.Model.NumRows(), f.Model.NumVars())
		}
	}
}
