package plan

import (
	"fmt"

	"github.com/inlay-dev/inlay/workload"
)

// StampHashes records in every model plan the content hash of the model the
// workload loaded (graph.Model.Hash; zoo networks have none), so that a
// later run can tell that a model file changed since the plan was made.
func (p *Plan) StampHashes(w *workload.Workload) {
	for i := range p.Models {
		if m := w.Model(p.Models[i].Model); m != nil && m.Graph != nil {
			p.Models[i].Hash = m.Graph.Hash
		}
	}
}

// CheckHashes reports the first model whose recorded hash differs from the
// hash of the model the workload loaded. Models without a recorded hash
// (or loaded without one) are not checked.
func (p *Plan) CheckHashes(w *workload.Workload) error {
	for _, mp := range p.Models {
		m := w.Model(mp.Model)
		if mp.Hash == "" || m == nil || m.Graph == nil || m.Graph.Hash == "" {
			continue
		}
		if m.Graph.Hash != mp.Hash {
			return fmt.Errorf("plan: model %q (%s) changed since the plan was made: content hash %.12s…, the plan has %.12s…; plan (and profile) it again",
				mp.Model, m.Source, m.Graph.Hash, mp.Hash)
		}
	}
	return nil
}
