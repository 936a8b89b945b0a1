// Package jobspec is the contract between inlay's Kubernetes scheduler and
// the batch/v1 Jobs it schedules: the label that puts a Job in inlay's
// queue, the annotations that describe the training job, and the
// annotations in which the scheduler (and the workload) report its state.
//
// A Job asks for inlay with the label inlay.dev/queue (any value; the
// scheduler serves one queue, "default" unless told otherwise) and pods
// with schedulerName inlay. Its annotations:
//
//	inlay.dev/job-type   the throughput table's job type, "ResNet-50 (batch size 64)"  (required)
//	inlay.dev/steps      total training steps, a positive number                        (required)
//	inlay.dev/weight     priority weight, a positive number                             (default 1)
//
// Its GPUs are parallelism × each pod's nvidia.com/gpu limit; parallelism
// must equal completions (a gang: all pods run together or none).
//
// The scheduler writes inlay.dev/state (queued, running, preempted,
// finished, invalid), inlay.dev/reason, inlay.dev/allocated (the GPU type),
// inlay.dev/rounds, inlay.dev/preemptions, inlay.dev/steps-estimated and
// the times inlay.dev/queued-at, inlay.dev/started-at,
// inlay.dev/finished-at (RFC 3339 with nanoseconds). The workload reports
// its progress in inlay.dev/steps-done when it stops (a checkpoint); the
// scheduler trusts it over its own estimate.
//
// Under an adaptive policy (package adapt: the scheduler's --policy names
// one of cluster/policy/adaptreg) a Job is described by its model instead
// (ParseAdaptive):
//
//	inlay.dev/model       the benchmark's model, "resnet18"                            (required)
//	inlay.dev/kind        adaptive, scale-gpus or rigid                                (default adaptive)
//	inlay.dev/batch-size  the requested global batch size, a positive number           (required but for adaptive)
//
// Its pods hold one GPU each, and it is an Indexed Job (completionMode
// Indexed, parallelism = completions = its GPUs), so that the scheduler can
// give it another GPU count: it suspends the Job, patches parallelism and
// completions together, and resumes it. Each pod's Binding carries
// inlay.dev/batch-size, that pod's share of the global batch (its local
// batch), onto the pod; a pod template reads it through the downward API
// (env valueFrom fieldRef metadata.annotations['inlay.dev/batch-size']).
// The workload reports its progress (the model's units) in
// inlay.dev/progress.
package jobspec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/throughput"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Names of the label, annotations and scheduler.
const (
	QueueLabel    = "inlay.dev/queue"
	SchedulerName = "inlay"

	TypeAnno   = "inlay.dev/job-type"
	StepsAnno  = "inlay.dev/steps"
	WeightAnno = "inlay.dev/weight"

	StateAnno       = "inlay.dev/state"
	ReasonAnno      = "inlay.dev/reason"
	AllocatedAnno   = "inlay.dev/allocated"
	RoundsAnno      = "inlay.dev/rounds"
	PreemptionsAnno = "inlay.dev/preemptions"
	EstimateAnno    = "inlay.dev/steps-estimated"
	QueuedAtAnno    = "inlay.dev/queued-at"
	StartedAtAnno   = "inlay.dev/started-at"
	FinishedAtAnno  = "inlay.dev/finished-at"
	StepsDoneAnno   = "inlay.dev/steps-done"

	// Set by the replayer: the trace's arrival (seconds), the job's ID in
	// the trace, and the wall time it was submitted.
	ArrivalAnno     = "inlay.dev/arrival-s"
	TraceIDAnno     = "inlay.dev/trace-id"
	SubmittedAtAnno = "inlay.dev/submitted-at"
	// GPUSecondsAnno, set by the replayer's workload, is the GPU-seconds
	// (of virtual time) the job ran per GPU type: "v100=1234.5,k80=10".
	GPUSecondsAnno = "inlay.dev/gpu-seconds"

	// Adaptive Jobs (ParseAdaptive).
	ModelAnno     = "inlay.dev/model"
	KindAnno      = "inlay.dev/kind"
	BatchSizeAnno = "inlay.dev/batch-size"
	ProgressAnno  = "inlay.dev/progress"
)

// States written to StateAnno.
const (
	Queued    = "queued"
	Running   = "running"
	Preempted = "preempted"
	Finished  = "finished"
	Invalid   = "invalid"
)

// GPUResource is NVIDIA's device-plugin resource.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// Spec is what the scheduler reads from a Job.
type Spec struct {
	Type   string
	Steps  float64
	Weight float64
	// Pods is the gang size; PerPod the GPUs of each pod; GPUs their
	// product.
	Pods, PerPod, GPUs int
	// CPUs and MemoryGiB are per-GPU requests (the pod's over PerPod).
	CPUs, MemoryGiB float64
	Row             throughput.ID
}

// Error is a malformed Job: the field and why.
type Error struct {
	Field, Reason string
}

func (e *Error) Error() string { return e.Field + ": " + e.Reason }

func bad(field, format string, a ...any) error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, a...)}
}

func positive(field, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, bad(field, "%q is not a positive number", s)
	}
	return v, nil
}

// Parse reads a Job's spec and checks it against the throughput table.
func Parse(j *batchv1.Job, t *throughput.Table) (Spec, error) {
	var s Spec
	a := j.Annotations
	s.Type = strings.TrimSpace(a[TypeAnno])
	if s.Type == "" {
		return s, bad("annotation "+TypeAnno, "missing (the throughput table's job type)")
	}
	raw, ok := a[StepsAnno]
	if !ok {
		return s, bad("annotation "+StepsAnno, "missing (total training steps)")
	}
	var err error
	if s.Steps, err = positive("annotation "+StepsAnno, raw); err != nil {
		return s, err
	}
	s.Weight = 1
	if w, ok := a[WeightAnno]; ok {
		if s.Weight, err = positive("annotation "+WeightAnno, w); err != nil {
			return s, err
		}
	}
	par, err := gangOf(j)
	if err != nil {
		return s, err
	}
	s.Pods = par
	if n := j.Spec.Template.Spec.SchedulerName; n != SchedulerName {
		return s, bad("spec.template.spec.schedulerName", "%q, want %q", n, SchedulerName)
	}
	req := PodRequests(&j.Spec.Template.Spec)
	s.PerPod = int(req.GPUs)
	if s.PerPod < 1 {
		return s, bad("spec.template.spec.containers[].resources.limits", "no nvidia.com/gpu (a training job needs at least one GPU a pod)")
	}
	s.GPUs = s.Pods * s.PerPod
	s.CPUs = req.MilliCPU / 1000 / float64(s.PerPod)
	s.MemoryGiB = float64(req.Memory) / (1 << 30) / float64(s.PerPod)
	if s.Row, err = t.Resolve(s.Type, s.GPUs); err != nil {
		return s, bad("annotation "+TypeAnno, "%v", err)
	}
	return s, nil
}

// AdaptSpec is what the scheduler reads from a Job under an adaptive
// policy.
type AdaptSpec struct {
	Model string
	Kind  adapt.Kind
	// Batch is the requested global batch size (0: the model's initial
	// one, for an adaptive Job).
	Batch float64
	// GPUs is the requested GPU count: parallelism, one GPU a pod.
	GPUs int
}

// ParseAdaptive reads a Job's adaptive spec; models are the models the
// scheduler knows (its error names them).
func ParseAdaptive(j *batchv1.Job, models []string) (AdaptSpec, error) {
	var s AdaptSpec
	a := j.Annotations
	s.Model = strings.TrimSpace(a[ModelAnno])
	if s.Model == "" {
		return s, bad("annotation "+ModelAnno, "missing (the model: one of %s)", strings.Join(models, ", "))
	}
	if !slices.Contains(models, s.Model) {
		return s, bad("annotation "+ModelAnno, "unknown model %q (models: %s)", s.Model, strings.Join(models, ", "))
	}
	var err error
	if s.Kind, err = adapt.ParseKind(strings.TrimSpace(a[KindAnno])); err != nil {
		return s, bad("annotation "+KindAnno, "%v", err)
	}
	if raw, ok := a[BatchSizeAnno]; ok {
		if s.Batch, err = positive("annotation "+BatchSizeAnno, raw); err != nil {
			return s, err
		}
	} else if s.Kind != adapt.Adaptive {
		return s, bad("annotation "+BatchSizeAnno, "missing (a %s job runs at its batch size)", s.Kind)
	}
	par, err := gangOf(j)
	if err != nil {
		return s, err
	}
	if m := j.Spec.CompletionMode; m == nil || *m != batchv1.IndexedCompletion {
		return s, bad("spec.completionMode", "must be Indexed (inlay changes an adaptive job's parallelism and completions together)")
	}
	s.GPUs = par
	if n := j.Spec.Template.Spec.SchedulerName; n != SchedulerName {
		return s, bad("spec.template.spec.schedulerName", "%q, want %q", n, SchedulerName)
	}
	if g := PodRequests(&j.Spec.Template.Spec).GPUs; g != 1 {
		return s, bad("spec.template.spec.containers[].resources.limits", "%d nvidia.com/gpu a pod, want 1 (an adaptive job's pods hold one GPU each)", g)
	}
	return s, nil
}

// Gang is how many pods of the Job run together now: its parallelism,
// less the completions already succeeded (the Job controller creates no
// more pods than that), at least 0.
func Gang(j *batchv1.Job) int {
	par, comp := counts(j)
	return int(max(0, min(par, comp-j.Status.Succeeded)))
}

// counts is a Job's parallelism and completions (1 when unset).
func counts(j *batchv1.Job) (par, comp int32) {
	par, comp = 1, 1
	if j.Spec.Parallelism != nil {
		par = *j.Spec.Parallelism
	}
	if j.Spec.Completions != nil {
		comp = *j.Spec.Completions
	}
	return par, comp
}

// gangOf is a Job's gang size: its parallelism, which must equal its
// completions.
func gangOf(j *batchv1.Job) (int, error) {
	par, comp := counts(j)
	if par < 1 || par != comp {
		return 0, bad("spec.parallelism", "%d must equal spec.completions %d (inlay gang-schedules all pods of a job)", par, comp)
	}
	return int(par), nil
}

// Requests are a pod's resource requests.
type Requests struct {
	MilliCPU float64
	Memory   int64
	GPUs     int64
}

// Add adds o's requests to r's.
func (r *Requests) Add(o Requests) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.GPUs += o.GPUs
}

// PodRequests sums a pod's container requests (limits where a request is
// missing, as the API server defaults them), taking the larger of that sum
// and any init container's.
func PodRequests(p *corev1.PodSpec) Requests {
	get := func(c *corev1.Container) Requests {
		q := func(n corev1.ResourceName) (r corev1.ResourceList) {
			if v, ok := c.Resources.Requests[n]; ok {
				return corev1.ResourceList{n: v}
			}
			if v, ok := c.Resources.Limits[n]; ok {
				return corev1.ResourceList{n: v}
			}
			return nil
		}
		var r Requests
		if l := q(corev1.ResourceCPU); l != nil {
			v := l[corev1.ResourceCPU]
			r.MilliCPU = float64(v.MilliValue())
		}
		if l := q(corev1.ResourceMemory); l != nil {
			v := l[corev1.ResourceMemory]
			r.Memory = v.Value()
		}
		if l := q(GPUResource); l != nil {
			v := l[GPUResource]
			r.GPUs = v.Value()
		}
		return r
	}
	var sum Requests
	for i := range p.Containers {
		sum.Add(get(&p.Containers[i]))
	}
	for i := range p.InitContainers {
		r := get(&p.InitContainers[i])
		sum.MilliCPU = math.Max(sum.MilliCPU, r.MilliCPU)
		sum.Memory = max(sum.Memory, r.Memory)
		sum.GPUs = max(sum.GPUs, r.GPUs)
	}
	return sum
}

// List is the requests as a resource list (the ones that are not zero).
func (r Requests) List() corev1.ResourceList {
	l := corev1.ResourceList{}
	if r.MilliCPU > 0 {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(math.Round(r.MilliCPU)), resource.DecimalSI)
	}
	if r.Memory > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(r.Memory, resource.BinarySI)
	}
	if r.GPUs > 0 {
		l[GPUResource] = *resource.NewQuantity(r.GPUs, resource.DecimalSI)
	}
	return l
}

// FormatTime writes a time for the *At annotations.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime reads a time written by FormatTime (ok false when absent or
// malformed).
func ParseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// Done reports whether the Job controller has marked the Job Complete
// (true, true) or Failed (true, false).
func Done(j *batchv1.Job) (done, ok bool) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true
		case batchv1.JobFailed:
			return true, false
		}
	}
	return false, false
}
