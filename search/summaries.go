package search

// Summary says what a planner of the registry does and what its argument
// (the text after "name:") may hold. docs/reference/planners.md is
// generated from Registry and Summaries; its test fails when a planner has
// no summary.
type Summary struct {
	Text    string
	Options string
}

// Summaries returns a summary per planner base name of Registry.
func Summaries() map[string]Summary {
	return map[string]Summary{
		"single": {"everything on one processor; layers it cannot run fall back to the CPU as separate subgraphs",
			"required: a processor name or kind (`single:npu`, `single:cpu-prime`)"},
		"bestmap": {"each whole model on its fastest processor configuration (Puzzle's \"Best Mapping\")", ""},
		"heft":    {"HEFT (Topcuoglu et al. 2002) with insertion over the layer graphs", ""},
		"puzzle": {"the Puzzle genetic algorithm: partition, mapping and priority chromosomes, UPMX crossover, a seeded first population and a local search that writes back into the genome",
			"`pop=12,gen=0,mut=0.02,cut=0.01,cx=0.9` (population, generations with 0 for the whole budget, mutation, initial cut probability, crossover probability)"},
		"inlay": {"the default: a memetic search that couples a load-balancing surrogate with the simulator, seeded with HEFT's plan", ""},
		"milp": {"an exact mixed-integer program solved by COIN-OR CBC, warm-started from `inlay`; prints the proven bound and gap (needs the `cbc` binary)",
			"`budget=DURATION` (overrides `--budget`), `improve=on|off` (the neighbourhood search), `parallel=on|off` (CBC beside the search)"},
	}
}
