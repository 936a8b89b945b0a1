// Package sched is Gavel's round-based mechanism as a deterministic state
// machine: it holds the active jobs, asks the policy for an allocation when
// jobs arrive or finish (at most once per reset interval), and turns the
// allocation into the next round's placements — each entry's priority on a
// GPU type is its allocated share over the share of time it has received
// since the last reset; entries are taken greedily in priority order, then
// placed on servers (consolidated or spread).
//
// Inputs are Add (an arrival), Done (what a placement achieved) and Remove
// (a completion); the output of Plan is a Round. The package reads no clock
// and does no I/O beyond the policy's solver: the simulator and the
// Kubernetes scheduler drive the same code.
package sched

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Placement is how a multi-GPU job's GPUs are chosen among servers.
type Placement string

const (
	Consolidated Placement = "consolidated" // as few servers as possible
	Spread       Placement = "spread"       // one GPU per server where it can
)

// Config configures the mechanism. Zero values take Gavel's settings.
type Config struct {
	// Round is the round length in seconds (default 360).
	Round float64
	// ResetInterval is the least time between allocation recomputations
	// (default 1920 s, Gavel's minimum_time_between_allocation_resets);
	// negative: recompute at every arrival and completion.
	ResetInterval float64
	Placement     Placement
	// Seed seeds the agnostic policies' shuffle of GPU types.
	Seed uint64
}

func (c *Config) fill() error {
	if c.Round == 0 {
		c.Round = 360
	}
	if c.ResetInterval == 0 {
		c.ResetInterval = 1920
	}
	if c.Placement == "" {
		c.Placement = Consolidated
	}
	if !(c.Round > 0) {
		return fmt.Errorf("cluster/sched: round must be positive, got %g", c.Round)
	}
	if c.Placement != Consolidated && c.Placement != Spread {
		return fmt.Errorf("cluster/sched: unknown placement %q (consolidated, spread)", c.Placement)
	}
	return nil
}

// Placed is one entry of a round: job A (and B when sharing) on GPUs of one
// column, with the servers that hold them and each job's rate in steps/s.
type Placed struct {
	A, B    int
	GPU     int   // column of the table
	Servers []int // node index per GPU
	Spread  bool  // on more than one server
	Rate    [2]float64
	// Moved is true per job when it ran last round elsewhere (or not at
	// all) and has run before: a preemption.
	Moved [2]bool
}

// Round is the output of Plan.
type Round struct {
	Placed []Placed
	// Recomputed is true when the policy was asked this round.
	Recomputed bool
	Note       string
	// Fallback is the allocation's Fallback when it was recomputed this
	// round and the policy's own method failed (policy.Allocation).
	Fallback string
}

type entryKey int64

func key(a, b int) entryKey { return entryKey(int64(a)<<32 | int64(b+1)) }

type server struct {
	node, gpus int
}

// Mechanism is the round-based mechanism. Not safe for concurrent use.
type Mechanism struct {
	cfg    Config
	pol    policy.Policy
	traits policy.Traits
	table  *throughput.Table
	c      *policy.Cluster
	order  []int         // GPU columns, fastest first
	srv    [][]server    // per column
	srvIdx []map[int]int // per column: node → index into srv
	// placedLast holds per column the jobs placed there last round.
	placedLast [][]int
	jobs       map[int]*policy.Job
	ids        []int // active job IDs, sorted
	alloc      *policy.Allocation
	allocX     map[entryKey][]float64
	allocN     map[entryKey]int // entries with their own GPU count
	// Time received per entry and column since the last reset, and per
	// column in all; deficits carried across resets.
	jobTime    map[entryKey][]float64
	workerTime []float64
	deficit    map[entryKey][]float64
	lastReset  float64
	everReset  bool
	needUpdate bool
	// last placement per job: column and servers, for stickiness and
	// preemption accounting.
	lastGPU     map[int]int
	lastServers map[int][]int
	ran         map[int]bool
	rng         *rand.Rand
}

// New builds a mechanism for a policy on a cluster with a table.
func New(cfg Config, pol policy.Policy, c *hw.Platform, t *throughput.Table) (*Mechanism, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	pc, err := ClusterView(c, t)
	if err != nil {
		return nil, err
	}
	m := &Mechanism{
		cfg: cfg, pol: pol, traits: pol.Traits(), table: t, c: pc,
		jobs: map[int]*policy.Job{}, allocX: map[entryKey][]float64{},
		jobTime: map[entryKey][]float64{}, workerTime: make([]float64, len(pc.GPUs)),
		deficit: map[entryKey][]float64{}, lastGPU: map[int]int{}, lastServers: map[int][]int{},
		ran: map[int]bool{}, rng: rand.New(rand.NewPCG(cfg.Seed, 0x73687566)),
	}
	m.srv = make([][]server, len(pc.GPUs))
	m.srvIdx = make([]map[int]int, len(pc.GPUs))
	m.placedLast = make([][]int, len(pc.GPUs))
	for g := range m.srvIdx {
		m.srvIdx[g] = map[int]int{}
	}
	for i, n := range c.Nodes {
		g := t.GPUIndex(n.GPU)
		m.srvIdx[g][i] = len(m.srv[g])
		m.srv[g] = append(m.srv[g], server{node: i, gpus: n.GPUs})
	}
	// Fastest first: by tensor peak, then name.
	for g := range pc.GPUs {
		if pc.Count[g] > 0 {
			m.order = append(m.order, g)
		}
	}
	peak := func(g int) float64 {
		gt, _ := c.GPUType(pc.GPUs[g])
		return gt.TensorTFLOPS
	}
	sort.SliceStable(m.order, func(i, k int) bool { return peak(m.order[i]) > peak(m.order[k]) })
	return m, nil
}

// ClusterView is the policy's view of a cluster, in the table's columns.
func ClusterView(c *hw.Platform, t *throughput.Table) (*policy.Cluster, error) {
	n := len(t.GPUs())
	pc := &policy.Cluster{GPUs: t.GPUs(), Count: make([]int, n), Price: make([]float64, n), CPUs: make([]float64, n), Memory: make([]float64, n), PerServer: make([]int, n)}
	for _, node := range c.Nodes {
		g := t.GPUIndex(node.GPU)
		if g < 0 {
			return nil, fmt.Errorf("cluster/sched: cluster %s has GPU type %q, which the %s throughput table lacks (%v)", c.Name, node.GPU, t.Source, t.GPUs())
		}
		pc.Count[g] += node.GPUs
		pc.CPUs[g] += float64(node.CPUs)
		pc.Memory[g] += node.MemoryGiB
		pc.PerServer[g] = max(pc.PerServer[g], node.GPUs)
	}
	for g, name := range pc.GPUs {
		if gt, ok := c.GPUType(name); ok {
			pc.Price[g] = gt.PricePerHour
		}
	}
	return pc, nil
}

// Cluster returns the policy's view of the cluster.
func (m *Mechanism) Cluster() *policy.Cluster { return m.c }

// Add registers an arriving job.
func (m *Mechanism) Add(j policy.Job) {
	j.Last = -1
	m.jobs[j.ID] = &j
	i := sort.SearchInts(m.ids, j.ID)
	m.ids = append(m.ids, 0)
	copy(m.ids[i+1:], m.ids[i:])
	m.ids[i] = j.ID
	half := make([]float64, len(m.c.GPUs))
	for g := range half {
		half[g] = m.cfg.Round / 2
	}
	m.jobTime[key(j.ID, -1)] = half
	m.needUpdate = true
}

// Remove drops a finished job.
func (m *Mechanism) Remove(id int) {
	if _, ok := m.jobs[id]; !ok {
		return
	}
	delete(m.jobs, id)
	i := sort.SearchInts(m.ids, id)
	m.ids = append(m.ids[:i], m.ids[i+1:]...)
	delete(m.lastGPU, id)
	delete(m.lastServers, id)
	delete(m.ran, id)
	for k := range m.jobTime {
		if a, b := int(int64(k)>>32), int(int64(k)&0xffffffff)-1; a == id || b == id {
			delete(m.jobTime, k)
			delete(m.deficit, k)
			delete(m.allocX, k)
		}
	}
	m.needUpdate = true
}

// Job returns an active job's state (nil when it is not active).
func (m *Mechanism) Job(id int) *policy.Job { return m.jobs[id] }

// Active returns the number of active jobs.
func (m *Mechanism) Active() int { return len(m.ids) }

// Allocation returns the allocation in force (nil before the first).
func (m *Mechanism) Allocation() *policy.Allocation { return m.alloc }

// Restore tells the mechanism that active job id ran last round on column
// g and the given servers (node indices), as a scheduler that rebuilds the
// mechanism (after a restart, or when the cluster's nodes change) reads it
// from the cluster. The next Plan keeps the job there when the allocation
// allows, and counts a move as a preemption.
func (m *Mechanism) Restore(id, g int, servers []int) {
	j := m.jobs[id]
	if j == nil || g < 0 || g >= len(m.c.GPUs) {
		return
	}
	j.Last = g
	m.lastGPU[id] = g
	m.lastServers[id] = append([]int(nil), servers...)
	m.ran[id] = true
}

// Done reports what a placement of the round achieved: it ran for ran
// seconds and job A (and B) made the given steps.
func (m *Mechanism) Done(p Placed, ran float64, steps [2]float64) {
	k := key(p.A, p.B)
	jt := m.jobTime[k]
	if jt == nil {
		jt = make([]float64, len(m.c.GPUs))
		m.jobTime[k] = jt
	}
	jt[p.GPU] += ran
	m.workerTime[p.GPU] += ran
	for i, id := range []int{p.A, p.B} {
		j := m.jobs[id]
		if j == nil {
			continue
		}
		j.Remaining -= steps[i]
		j.Attained += ran * float64(len(p.Servers))
		j.Last = p.GPU
		j.LastGPUs = len(p.Servers)
	}
}

// state builds the policy's input.
func (m *Mechanism) state(now float64) *policy.State {
	s := &policy.State{Now: now, C: m.c, Table: m.table, Jobs: make([]policy.Job, len(m.ids))}
	for i, id := range m.ids {
		s.Jobs[i] = *m.jobs[id]
	}
	return s
}

// recompute resets the time received and asks the policy (Gavel's
// _reset_time_run_so_far followed by _compute_allocation).
func (m *Mechanism) recompute(ctx context.Context, now float64) error {
	elapsed := now - m.lastReset
	for k, jt := range m.jobTime {
		d := m.deficit[k]
		if d == nil {
			d = make([]float64, len(m.c.GPUs))
			m.deficit[k] = d
		}
		x := m.allocX[k]
		for g := range jt {
			received := jt[g] - m.cfg.Round/2
			should := 0.0
			if x != nil {
				should = x[g] * elapsed
			}
			d[g] += should - received
			jt[g] = m.cfg.Round / 2
		}
	}
	// Gavel sums the reset time of every entry into the worker total.
	for g := range m.workerTime {
		m.workerTime[g] = float64(len(m.jobTime)) * m.cfg.Round / 2
	}
	m.lastReset, m.everReset = now, true
	var a *policy.Allocation
	if len(m.ids) > 0 {
		var err error
		a, err = m.pol.Allocate(ctx, m.state(now))
		if err != nil {
			return fmt.Errorf("cluster/sched: policy %s: %w", m.pol.Name(), err)
		}
	} else {
		a = &policy.Allocation{}
	}
	m.alloc = a
	m.allocX = make(map[entryKey][]float64, len(a.Entries))
	m.allocN = map[entryKey]int{}
	for _, e := range a.Entries {
		if m.jobs[e.A] == nil || (e.B >= 0 && m.jobs[e.B] == nil) {
			continue
		}
		k := key(e.A, e.B)
		m.allocX[k] = e.X
		if e.GPUs > 0 {
			m.allocN[k] = e.GPUs
		}
		if _, ok := m.jobTime[k]; !ok {
			// Gavel keeps an entry for every pair from its jobs' arrival,
			// and the reset gives every entry half a round: a pair new to
			// the allocation starts level with the others, not ahead.
			half := make([]float64, len(m.c.GPUs))
			for g := range half {
				half[g] = m.cfg.Round / 2
				m.workerTime[g] += m.cfg.Round / 2
			}
			m.jobTime[k] = half
		}
	}
	m.needUpdate = false
	return nil
}

type candidate struct {
	k        entryKey
	a, b, g  int
	gpus     int
	priority float64
	deficit  float64
	x        float64
}

// Plan computes the next round at time now: recomputing the allocation when
// jobs came or went and the reset interval has passed (or at every event
// when ResetInterval < 0 or the policy is event-driven), then choosing and
// placing entries.
func (m *Mechanism) Plan(ctx context.Context, now float64) (*Round, error) {
	r := &Round{}
	if (m.traits.EveryRound && len(m.ids) > 0) || m.needUpdate && (m.traits.EventDriven || m.traits.EveryEvent || m.cfg.ResetInterval < 0 || !m.everReset || now-m.lastReset >= m.cfg.ResetInterval) {
		if err := m.recompute(ctx, now); err != nil {
			return nil, err
		}
		r.Recomputed = true
		r.Note, r.Fallback = m.alloc.Note, m.alloc.Fallback
	}
	if len(m.ids) == 0 || m.alloc == nil {
		return r, nil
	}
	order := append([]int(nil), m.order...)
	// Gavel shuffles the types for its agnostic policies but not for its
	// packing ones (scheduler.py: neither "Perf" nor "Packing" in the
	// name): Gandiva's pairs visit the types fastest first.
	if m.traits.Agnostic && !m.traits.SpaceSharing {
		m.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	// Entries: those of the allocation, and the active jobs it lacks (they
	// arrived since the last recomputation: priority 0, and, as in Gavel,
	// they hold the GPUs they are picked for without running).
	var cands []candidate
	for _, g := range order {
		var per []candidate
		for _, e := range m.alloc.Entries {
			k := key(e.A, e.B)
			x, ok := m.allocX[k]
			if !ok {
				continue
			}
			if (m.traits.EveryRound || m.traits.OnlyAllocated) && x[g] == 0 {
				// A policy asked every round decides each round whole:
				// its zero entries are no fillers.
				continue
			}
			c := m.candidate(k, e.A, e.B, g, x[g])
			c.gpus = m.jobs[e.A].GPUs
			if n, ok := m.allocN[k]; ok {
				c.gpus = n
			}
			per = append(per, c)
		}
		for _, id := range m.ids {
			if m.traits.OnlyAllocated {
				break // Gavel skips the jobs its FIFO has not allocated
			}
			if _, ok := m.allocX[key(id, -1)]; !ok {
				c := candidate{k: key(id, -1), a: id, b: -1, g: g, x: -1, gpus: m.jobs[id].GPUs}
				per = append(per, c)
			}
		}
		if m.traits.EventDriven || m.traits.Sticky {
			// Entries whose share is whole run to completion: keep them
			// on the type they hold before anything else.
			for i := range per {
				if per[i].b < 0 && m.lastGPU[per[i].a] == g && per[i].x >= 0.999 {
					per[i].priority = 1e18
				}
			}
		}
		sort.Slice(per, func(i, j int) bool {
			x, y := per[i], per[j]
			if x.priority != y.priority {
				return x.priority > y.priority
			}
			if x.deficit != y.deficit {
				return x.deficit > y.deficit
			}
			if x.x != y.x {
				return x.x > y.x
			}
			return x.k < y.k
		})
		cands = append(cands, per...)
	}
	left := append([]int(nil), m.c.Count...)
	taken := map[int]bool{}
	var chosen [][]candidate = make([][]candidate, len(m.c.GPUs))
	for _, c := range cands {
		if left[c.g] == 0 || taken[c.a] || (c.b >= 0 && taken[c.b]) {
			continue
		}
		ja := m.jobs[c.a]
		if m.rateN(ja, c.g, c.gpus, false) <= 0 {
			continue
		}
		if c.b >= 0 {
			jb := m.jobs[c.b]
			if jb.GPUs != ja.GPUs {
				continue
			}
			if _, _, ok := m.table.Pair(ja.Row, jb.Row, c.g); !ok {
				continue
			}
		}
		if m.traits.EventDriven && c.x < 0.5 {
			continue
		}
		if c.gpus > left[c.g] {
			continue
		}
		left[c.g] -= c.gpus
		taken[c.a] = true
		if c.b >= 0 {
			taken[c.b] = true
		}
		if c.x < 0 {
			continue // holds the GPUs, does not run (see above)
		}
		chosen[c.g] = append(chosen[c.g], c)
	}
	for _, g := range order {
		r.Placed = append(r.Placed, m.place(g, chosen[g])...)
	}
	return r, nil
}

func (m *Mechanism) candidate(k entryKey, a, b, g int, x float64) candidate {
	c := candidate{k: k, a: a, b: b, g: g, x: x}
	if d := m.deficit[k]; d != nil {
		c.deficit = d[g]
	}
	if x <= 0 {
		return c
	}
	frac := 0.0
	if jt := m.jobTime[k]; jt != nil && m.workerTime[g] > 0 {
		frac = jt[g] / m.workerTime[g]
	}
	if frac > 0 {
		c.priority = x / frac
	} else {
		c.priority = x * 1e9
	}
	return c
}

// place puts the chosen entries of column g on servers: larger jobs first;
// an entry keeps last round's servers when they are free; the rest are
// consolidated (best fit, then the servers with most free GPUs) or spread
// (one GPU per server, most free first).
func (m *Mechanism) place(g int, chosen []candidate) []Placed {
	sort.SliceStable(chosen, func(i, j int) bool { return chosen[i].gpus > chosen[j].gpus })
	srv := m.srv[g]
	free := make([]int, len(srv))
	nodeIdx := m.srvIdx[g]
	for i, s := range srv {
		free[i] = s.gpus
	}
	out := make([]Placed, 0, len(chosen))
	assigned := make([][]int, len(chosen))
	// Keep last round's servers where possible.
	for i, c := range chosen {
		prev := m.lastServers[c.a]
		if m.lastGPU[c.a] != g || prev == nil || len(prev) != c.gpus {
			continue
		}
		need := map[int]int{}
		for _, n := range prev {
			need[nodeIdx[n]]++
		}
		ok := true
		for s, k := range need {
			if free[s] < k {
				ok = false
			}
		}
		if ok {
			for s, k := range need {
				free[s] -= k
			}
			assigned[i] = prev
		}
	}
	for i, c := range chosen {
		if assigned[i] != nil {
			continue
		}
		n := c.gpus
		if k := m.chunk(c); k > 1 {
			assigned[i] = placeChunks(srv, free, n, k, m.cfg.Placement)
			continue
		}
		var got []int
		if m.cfg.Placement == Consolidated {
			got = bestFit(srv, free, n)
		}
		for len(got) < n {
			// Most free first; spread takes one GPU a server a pass.
			s := -1
			for t := range srv {
				if free[t] > 0 && (s < 0 || free[t] > free[s]) {
					s = t
				}
			}
			take := free[s]
			if m.cfg.Placement == Spread {
				take = 1
			}
			take = min(take, n-len(got))
			for k := 0; k < take; k++ {
				got = append(got, srv[s].node)
			}
			free[s] -= take
		}
		assigned[i] = got
	}
	for i, c := range chosen {
		if assigned[i] == nil {
			continue // its chunks found no servers this round
		}
		p := Placed{A: c.a, B: c.b, GPU: g, Servers: assigned[i]}
		// A job is spread (and slowed by the network) when its GPUs sit on
		// several servers although one server of the type could hold them;
		// larger jobs have no consolidated choice, and their table figure
		// is what they get (as in Gavel's one-GPU-per-server simulations,
		// which do not use the unconsolidated measurements).
		if c.gpus <= m.c.PerServer[g] {
			for _, s := range p.Servers[1:] {
				if s != p.Servers[0] {
					p.Spread = true
				}
			}
		}
		ja := m.jobs[c.a]
		if c.b < 0 {
			p.Rate[0] = m.rateN(ja, g, c.gpus, p.Spread)
		} else {
			jb := m.jobs[c.b]
			ta, tb, _ := m.table.Pair(ja.Row, jb.Row, g)
			if p.Spread {
				// Sharing does not change the network's share of a step:
				// scale both by the job's own spread slowdown.
				ta *= m.rate(ja.Row, g, true) / m.table.Alone(ja.Row, g)
				tb *= m.rate(jb.Row, g, true) / m.table.Alone(jb.Row, g)
			}
			p.Rate = [2]float64{ta, tb}
		}
		for k, id := range []int{c.a, c.b} {
			if id < 0 {
				continue
			}
			if m.ran[id] && (m.lastGPU[id] != g || !slices.Equal(m.lastServers[id], p.Servers)) {
				p.Moved[k] = true
			}
			m.lastGPU[id] = g
			m.lastServers[id] = p.Servers
			m.ran[id] = true
		}
		out = append(out, p)
	}
	// Jobs placed here last round and not this round lose their servers.
	placed := make(map[int]bool, 2*len(out))
	var now []int
	for _, p := range out {
		placed[p.A] = true
		now = append(now, p.A)
		if p.B >= 0 {
			placed[p.B] = true
			now = append(now, p.B)
		}
	}
	for _, id := range m.placedLast[g] {
		if last, ok := m.lastGPU[id]; !placed[id] && ok && last == g {
			delete(m.lastGPU, id)
			delete(m.lastServers, id)
		}
	}
	m.placedLast[g] = now
	return out
}

// chunk is the GPUs that must share a server for candidate c (the larger
// of its jobs' chunks; 0 when any split will do, or when the chunk does
// not divide the GPUs it is given).
func (m *Mechanism) chunk(c candidate) int {
	k := m.jobs[c.a].Chunk
	if c.b >= 0 {
		k = max(k, m.jobs[c.b].Chunk)
	}
	if k <= 1 || c.gpus%k != 0 {
		return 0
	}
	return k
}

// placeChunks takes n GPUs in chunks of k, each chunk on one server, from
// the servers' free GPUs (updated): the whole job on the fullest-fitting
// single server when one holds it, else chunks from the servers with the
// most free GPUs (consolidated: as many chunks as a server holds; spread:
// one a server, on the servers it has least on first). It returns nil,
// taking nothing, when the free GPUs are too scattered.
func placeChunks(srv []server, free []int, n, k int, pl Placement) []int {
	if pl == Consolidated {
		if got := bestFit(srv, free, n); got != nil {
			return got
		}
	}
	var got []int
	took := make([]int, len(srv))
	for len(got) < n {
		s := -1
		for t := range srv {
			if free[t] < k {
				continue
			}
			switch {
			case s < 0:
				s = t
			case pl == Spread && took[t] != took[s]:
				if took[t] < took[s] {
					s = t // spread: the servers it has least on first
				}
			case free[t] > free[s]:
				s = t
			}
		}
		if s < 0 {
			for t, g := range took {
				free[t] += g
			}
			return nil
		}
		take := k
		if pl == Consolidated {
			take = min(free[s]/k*k, n-len(got))
		}
		for range take {
			got = append(got, srv[s].node)
		}
		free[s] -= take
		took[s] += take
	}
	return got
}

// bestFit puts all n GPUs on the server with the fewest free GPUs that
// still holds them (free updated), or returns nil when none does.
func bestFit(srv []server, free []int, n int) []int {
	best := -1
	for s := range srv {
		if free[s] >= n && (best < 0 || free[s] < free[best]) {
			best = s
		}
	}
	if best < 0 {
		return nil
	}
	got := make([]int, n)
	for k := range got {
		got[k] = srv[best].node
	}
	free[best] -= n
	return got
}

// rateN is job j's rate on n GPUs of column g (policy.ScaledRate).
func (m *Mechanism) rateN(j *policy.Job, g, n int, spread bool) float64 {
	return policy.ScaledRate(m.table, j, g, n, func(id throughput.ID, g int) float64 { return m.rate(id, g, spread) })
}

func (m *Mechanism) rate(row throughput.ID, g int, spread bool) float64 {
	if spread {
		return m.table.Spread(row, g)
	}
	return m.table.Alone(row, g)
}
