package train

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/inlay-dev/inlay/internal/errline"
)

// PlanFile is a planner's answer as `inlay train plan --json` writes it;
// `--plan` reads it back (the plan field), so a plan found once can be
// simulated, exported or edited later.
type PlanFile struct {
	Planner   string `json:"planner"`
	Model     string `json:"model"`
	Cluster   string `json:"cluster"`
	Objective string `json:"objective"`
	// TokensPerS and IterationS are the simulator's for the plan.
	TokensPerS float64 `json:"tokens_per_s"`
	// SamplesPerS is a graph network's samples a second (its tokens).
	SamplesPerS float64 `json:"samples_per_s,omitempty"`
	IterationS  float64 `json:"iteration_s"`
	// BoundTokensPerS is ThroughputBound over the cluster's GPUs (the
	// job's constraints applied); Fraction the plan's share of it.
	BoundTokensPerS float64 `json:"bound_tokens_per_s"`
	Fraction        float64 `json:"fraction_of_bound"`
	SearchSeconds   float64 `json:"search_seconds"`
	Evaluated       int     `json:"evaluated"`
	Fits            bool    `json:"fits"`
	PeakMemoryBytes float64 `json:"peak_memory_bytes"`
	// HeadroomBytes is the smallest free memory over the plan's GPUs.
	HeadroomBytes float64 `json:"headroom_bytes"`
	GPUs          int     `json:"gpus"`
	DollarsPerH   float64 `json:"dollars_per_hour,omitempty"`
	// DollarsPerMTokens is the cost of a million tokens (with prices).
	DollarsPerMTokens float64 `json:"dollars_per_million_tokens,omitempty"`
	// HoursToBudget is the time to the token budget (objective time).
	HoursToBudget float64 `json:"hours_to_budget,omitempty"`
	Plan          *Plan   `json:"plan"`
	Explain       any     `json:"explain,omitempty"`
}

// ParsePlanJSON reads a plan in JSON: a PlanFile (its plan field) or a
// bare plan (stages, replicas, …); file names the source in errors. It
// returns ok false when the data is neither (a Sailor plan_config, say).
func ParsePlanJSON(file string, data []byte, m *Model) (p *Plan, ok bool, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, false, nil
	}
	raw := data
	if pl, has := top["plan"]; has {
		raw = pl
	} else if _, has := top["replicas"]; !has {
		if _, has := top["groups"]; !has {
			return nil, false, nil
		}
	}
	p = &Plan{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, true, fmt.Errorf("train: %s: plan: %s", file, errline.JSON(raw, err))
	}
	p.fillDefaults()
	if err := p.Check(m); err != nil {
		return nil, true, fmt.Errorf("train: %s: plan: %v", file, err)
	}
	return p, true, nil
}
