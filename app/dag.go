package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/search/dag"
)

// PlanDAG schedules the plain task graph in file with the named planner
// (one of dag.Planners) within budget.
func PlanDAG(ctx context.Context, file, planner string, budget time.Duration) (*dag.Result, error) {
	g, err := dag.Load(file)
	if err != nil {
		return nil, err
	}
	planners := dag.Planners()
	run, ok := planners[planner]
	if !ok {
		names := slices.Sorted(maps.Keys(planners))
		return nil, fmt.Errorf("plan: planner %q does not schedule task graphs (ones that do: %s)", planner, strings.Join(names, ", "))
	}
	return run(ctx, g, budget)
}
