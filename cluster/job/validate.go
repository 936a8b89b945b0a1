package job

import (
	"fmt"
	"strconv"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Validate checks a trace against a throughput table and a cluster: every
// job type (and stage type) at its GPU count has a row, some GPU type of the
// cluster can run it, and no job asks for more GPUs than the cluster's
// largest GPU type holds. file names the trace in the one-line error.
func Validate(file string, jobs []Job, t *throughput.Table, c *hw.Platform) error {
	most, mostType := 0, ""
	for _, g := range c.Types() {
		if n := c.Count(g); n > most {
			most, mostType = n, g
		}
		if t.GPUIndex(g) < 0 {
			return fmt.Errorf("cluster/job: cluster %s has GPU type %q, which the %s throughput table lacks (it has %q)", c.Name, g, t.Source, t.GPUs())
		}
	}
	check := func(i int, what, typ string, gpus int) error {
		if gpus > most {
			return fmt.Errorf("cluster/job: %s: job %d%s: asks for %d GPUs, more than the cluster %s holds of any type (%d %s)", file, i, what, gpus, c.Name, most, mostType)
		}
		id, err := t.Resolve(typ, gpus)
		if err != nil {
			return fmt.Errorf("cluster/job: %s: job %d%s: %v", file, i, what, err)
		}
		for _, g := range c.Types() {
			if t.Alone(id, t.GPUIndex(g)) > 0 && c.Count(g) >= gpus {
				return nil
			}
		}
		return fmt.Errorf("cluster/job: %s: job %d%s: %q on %d GPUs runs on no GPU type of cluster %s", file, i, what, typ, gpus, c.Name)
	}
	for i := range jobs {
		j := &jobs[i]
		if err := check(i, "", j.Type, j.GPUs); err != nil {
			return err
		}
		for _, s := range j.Stages {
			if err := check(i, " stage "+strconv.Quote(s.Name), s.Type, s.GPUs); err != nil {
				return err
			}
		}
		if e := j.Elastic; e != nil && e.Max > most {
			return fmt.Errorf("cluster/job: %s: job %d: elastic max_gpus %d above the cluster's %d %s", file, i, e.Max, most, mostType)
		}
	}
	return nil
}
