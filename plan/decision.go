package plan

import "math"

// Decision is what a planner weighed when it placed one piece of a model,
// recorded as it chose (the way Nomad's scheduler appends each scorer's
// figure to a node as it ranks it): every processor it considered, with
// the filter that excluded it or the named scores it gave it. Explanations
// (inlay plan --explain) show these records; they are not saved with the
// plan.
type Decision struct {
	// Model names the model; Layers is the key (graph.LayerSet.Key) of the
	// layers this decision placed: one subgraph, or the whole model.
	Model  string
	Layers string
	// Step says what the planner was doing, in its own words ("fastest
	// whole-model configuration", "earliest finish of layer 3").
	Step string
	// Candidates are the processors considered, in the platform's order.
	Candidates []Candidate
}

// Candidate is one processor considered for a decision: excluded by a
// filter (Filter and Why), or scored.
type Candidate struct {
	Processor string `json:"processor"`
	Chosen    bool   `json:"chosen,omitempty"`
	// Config is the configuration scored there ("backend/dtype"), "" when
	// excluded.
	Config string `json:"config,omitempty"`
	// Filter names the filter that excluded the processor, with Why.
	Filter string       `json:"filter,omitempty"`
	Why    string       `json:"why,omitempty"`
	Scores []NamedScore `json:"scores,omitempty"`
}

// Score returns the named score's value (NaN when absent).
func (c Candidate) Score(name string) float64 {
	for _, s := range c.Scores {
		if s.Name == name {
			return s.Value
		}
	}
	return math.NaN()
}

// NamedScore is one figure a planner weighed, named for its scorer.
type NamedScore struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Unit is "ms", "" for a plain number.
	Unit string `json:"unit"`
}

// Score names, shared by the planners that record them.
const (
	// ScoreTime is the work's time on the processor, ms.
	ScoreTime = "time"
	// ScoreFinish is when the work would end in the planner's schedule of
	// one request (of its model alone, or of every model at once for
	// HEFT), ms.
	ScoreFinish = "finish"
	// ScoreBestScale is, for a search planner, the best simulated max
	// sustainable rate scale among the plans it evaluated with the work
	// there.
	ScoreBestScale = "best scale"
)

// Filter names, shared by the planners that record them.
const (
	FilterSupport   = "operator support"
	FilterPrecision = "precision"
	FilterMemory    = "memory"
	// FilterPlanner marks a processor the planner does not consider by
	// design (single:npu considers the NPU alone).
	FilterPlanner = "planner"
	// FilterUntried marks a processor no plan a search evaluated put the
	// work on.
	FilterUntried = "not tried"
)

// Selection is what a search planner recorded about the plan it returned:
// it weighed whole plans, each by its simulated max sustainable rate scale
// (plan.Evaluator), and kept the best. Its per-subgraph Decisions say, for
// each processor, the best scale of the evaluated plans that put the
// subgraph's first layer there (ScoreBestScale).
type Selection struct {
	// Evaluated counts the distinct plans it scored.
	Evaluated int `json:"evaluated"`
	// Scale is the returned plan's score.
	Scale float64 `json:"scale"`
	// Phase is the step of the search that found it, in the planner's
	// words ("seeds", "balance", "round 3", "generation 12"); "" when the
	// planner names no steps.
	Phase string `json:"phase,omitempty"`
}
