package jobspec_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/throughput"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

const seedJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: resnet
  labels: {inlay.dev/queue: default}
  annotations:
    inlay.dev/job-type: "ResNet-50 (batch size 64)"
    inlay.dev/steps: "10000"
    inlay.dev/weight: "2"
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      schedulerName: inlay
      containers:
      - name: train
        resources:
          requests: {cpu: "4", memory: 8Gi}
          limits: {nvidia.com/gpu: 2}
`

// FuzzJobParse reads a Job manifest (what a user submits) and parses its
// inlay spec: never a panic, and a spec that parses is consistent.
func FuzzJobParse(f *testing.F) {
	tab, err := throughput.Gavel()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(seedJob))
	f.Add([]byte(`{"metadata":{"annotations":{"inlay.dev/steps":"NaN","inlay.dev/job-type":"x"}},"spec":{"parallelism":-1}}`))
	f.Add([]byte(`spec: {parallelism: 3, completions: 3, template: {spec: {schedulerName: inlay, initContainers: [{name: i, resources: {limits: {nvidia.com/gpu: 1e3}}}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var j batchv1.Job
		if err := yaml.Unmarshal(data, &j); err != nil {
			return
		}
		s, err := jobspec.Parse(&j, tab)
		_ = jobspec.Gang(&j)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if s.Pods < 1 || s.PerPod < 1 || s.GPUs != s.Pods*s.PerPod {
			t.Fatalf("gang %d pods × %d GPUs = %d", s.Pods, s.PerPod, s.GPUs)
		}
		if !(s.Steps > 0) || math.IsInf(s.Steps, 0) || !(s.Weight > 0) || math.IsInf(s.Weight, 0) {
			t.Fatalf("steps %g, weight %g", s.Steps, s.Weight)
		}
	})
}

const seedAdaptive = `apiVersion: batch/v1
kind: Job
metadata:
  name: cifar
  labels: {inlay.dev/queue: default}
  annotations:
    inlay.dev/model: cifar10
    inlay.dev/kind: scale-gpus
    inlay.dev/batch-size: "128"
spec:
  parallelism: 2
  completions: 2
  completionMode: Indexed
  template:
    spec:
      schedulerName: inlay
      containers:
      - name: train
        resources:
          limits: {nvidia.com/gpu: 1}
`

// FuzzAdaptiveParse parses a Job manifest's adaptive spec: never a panic,
// an error is one line, and a spec that parses is consistent.
func FuzzAdaptiveParse(f *testing.F) {
	models := []string{"cifar10", "resnet18"}
	f.Add([]byte(seedAdaptive))
	f.Add([]byte(`{"metadata":{"annotations":{"inlay.dev/model":"resnet18","inlay.dev/kind":"rigid","inlay.dev/batch-size":"-1"}},"spec":{"parallelism":0}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"inlay.dev/model":"bert","inlay.dev/kind":"elastic"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var j batchv1.Job
		if err := yaml.Unmarshal(data, &j); err != nil {
			return
		}
		s, err := jobspec.ParseAdaptive(&j, models)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line", msg)
			}
			return
		}
		if s.GPUs < 1 || !slices.Contains(models, s.Model) || s.Batch < 0 || math.IsInf(s.Batch, 0) || math.IsNaN(s.Batch) {
			t.Fatalf("spec %+v", s)
		}
		if s.Kind != adapt.Adaptive && !(s.Batch > 0) {
			t.Fatalf("%s job without a batch size", s.Kind)
		}
	})
}
