package milp_test

import (
	"flag"
	"time"
)

// The experiment benchmarks of this package (BenchmarkTighten, ...Improve,
// ...ImproveFirst, ...TightenDiag, ...GapDiag, ...BranchDiag, ...Reach,
// ...DAGBigM) take
// their settings as flags of the test binary, given after -args; see
// docs/benchmarks.md. For example:
//
//	go test -run '^$' -bench Tighten -benchtime 1x -timeout 0 ./search/milp/ -args -tight.variants base,cuts -tight.limit 60s
var (
	tightLimit     = flag.Duration("tight.limit", 30*time.Second, "BenchmarkTighten: CBC's CPU-time limit per variant and scenario")
	tightModels    = flag.Int("tight.models", 4, "the scenarios' most models (as inlay bench --max-models)")
	tightScenarios = flag.Int("tight.scenarios", 4, "how many of the bench's scenarios (seed 1) to draw")
	tightEvals     = flag.Int("tight.evals", 400, "evaluations of the inlay planner that makes each start plan (0: start cold)")
	tightVariants  = flag.String("tight.variants", "base", "BenchmarkTighten: comma-separated formulation and CBC variants (base, prox, cuts, cuts+vnd, cuts+dins, cold, nopre, strong, probe)")
	tightOnly      = flag.String("tight.only", "", "comma-separated scenario indices to keep (the others are still drawn, so indices stay the bench's)")
	tightLog       = flag.String("tight.log", "", "BenchmarkTighten: folder for CBC's logs, one per variant and scenario")
	tightCache     = flag.String("tight.cache", "", "folder that keeps the start plans between runs")

	improveLimit      = flag.Duration("improve.limit", 90*time.Second, "BenchmarkImprove, BenchmarkImproveFirst: wall-clock time per scenario")
	improveShares     = flag.String("improve.shares", "0,0.5", "BenchmarkImprove: comma-separated shares of the time left to the neighbourhood search; \"0.5/5s\" also sets its sub-MILP limit")
	improveAfter      = flag.Duration("improve.after", 0, "BenchmarkImprove: time kept for CBC to solve the full MILP once more, from the search's result")
	improveLog        = flag.Bool("improve.log", false, "BenchmarkImprove, BenchmarkImproveFirst: print every sub-MILP")
	improveFirstShare = flag.Float64("improve.first-share", 0.5, "BenchmarkImproveFirst: the search's share of the time, before CBC")
	improveAfterArgs  = flag.String("improve.after-args", "-Vnd on", "BenchmarkImproveFirst: CBC option sets for the final solve, separated by \";\"")

	branchCounts = flag.Bool("branch.counts", true, "BenchmarkBranchDiag: branch on the subgraph counts too (false: the latency indicators only)")

	dagBigN     = flag.Int("dagbig.n", 14, "BenchmarkDAGBigM: tasks per random task graph")
	dagBigSeeds = flag.Int("dagbig.seeds", 6, "BenchmarkDAGBigM: how many random task graphs")
	dagBigLimit = flag.Duration("dagbig.limit", 20*time.Second, "BenchmarkDAGBigM: CBC's CPU-time limit per graph and formulation")

	reachLimit    = flag.Duration("reach.limit", 60*time.Second, "BenchmarkReach: CBC's time limit per size")
	reachNets     = flag.String("reach.nets", "mobilenet_v2,resnet50,mobilenet_v3_large,efficientnet_b0,yolov5s", "BenchmarkReach: comma-separated zoo networks, added one at a time")
	reachPlatform = flag.String("reach.platform", "phone", "BenchmarkReach: platform preset or file")
	reachCBCArgs  = flag.String("reach.cbc-args", "", "BenchmarkReach: extra CBC options (\"-cuts off\")")
)
