package published

// TargetResult is one fidelity target checked against a report: the
// set, the metric, its limit, the value reached and whether the limit is
// met.
type TargetResult struct {
	Set    string  `json:"set"`
	Metric string  `json:"metric"`
	Limit  float64 `json:"limit"`
	Value  float64 `json:"value"`
	Met    bool    `json:"met"`
}

// TargetResults checks every target of Targets whose set the report
// scored, in the order of Targets.
func (r *Report) TargetResults() []TargetResult {
	var out []TargetResult
	for _, t := range Targets {
		for i := range r.Sets {
			s := &r.Sets[i]
			if s.Set != t.Set {
				continue
			}
			v := s.Value(t.Metric)
			met := v <= t.Limit
			if t.AtLeast {
				met = v >= t.Limit
			}
			out = append(out, TargetResult{t.Set, t.Metric, t.Limit, v, met})
		}
	}
	return out
}
