package jobspec_test

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/throughput"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func mkJob(annos map[string]string, par, comp int32, gpus int64, sched string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Annotations: annos},
		Spec: batchv1.JobSpec{Parallelism: &par, Completions: &comp, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			SchedulerName: sched,
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
				Limits:   corev1.ResourceList{jobspec.GPUResource: *resource.NewQuantity(gpus, resource.DecimalSI)},
			}}},
		}}},
	}
}

func TestParse(t *testing.T) {
	tab, err := throughput.Gavel()
	if err != nil {
		t.Fatal(err)
	}
	typ := ""
	for _, jt := range tab.JobTypes() {
		for _, sc := range tab.Scales(jt) {
			if sc == 2 && typ == "" {
				typ = jt
			}
		}
	}
	good := map[string]string{jobspec.TypeAnno: typ, jobspec.StepsAnno: "1000"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	s, err := jobspec.Parse(mkJob(good, 2, 2, 1, "inlay"), tab)
	if err != nil {
		t.Fatal(err)
	}
	if s.GPUs != 2 || s.Pods != 2 || s.PerPod != 1 || s.Steps != 1000 || s.Weight != 1 || s.CPUs != 2 || s.MemoryGiB != 4 {
		t.Errorf("parsed %+v", s)
	}
	for _, c := range []struct {
		name string
		j    *batchv1.Job
		want string
	}{
		{"no type", mkJob(with(jobspec.TypeAnno, ""), 1, 1, 1, "inlay"), "annotation inlay.dev/job-type: missing"},
		{"unknown type", mkJob(with(jobspec.TypeAnno, "NoSuchNet"), 1, 1, 1, "inlay"), "annotation inlay.dev/job-type:"},
		{"no steps", mkJob(with(jobspec.StepsAnno, ""), 1, 1, 1, "inlay"), "annotation inlay.dev/steps: missing"},
		{"bad steps", mkJob(with(jobspec.StepsAnno, "many"), 1, 1, 1, "inlay"), `annotation inlay.dev/steps: "many" is not a positive number`},
		{"negative steps", mkJob(with(jobspec.StepsAnno, "-3"), 1, 1, 1, "inlay"), "not a positive number"},
		{"bad weight", mkJob(with(jobspec.WeightAnno, "0"), 1, 1, 1, "inlay"), "annotation inlay.dev/weight"},
		{"not a gang", mkJob(good, 2, 4, 1, "inlay"), "spec.parallelism: 2 must equal spec.completions 4"},
		{"no GPU", mkJob(good, 1, 1, 0, "inlay"), "no nvidia.com/gpu"},
		{"other scheduler", mkJob(good, 1, 1, 1, "default-scheduler"), "schedulerName"},
	} {
		_, err := jobspec.Parse(c.j, tab)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestTimes(t *testing.T) {
	if _, ok := jobspec.ParseTime("yesterday"); ok {
		t.Error("a malformed time parsed")
	}
	now := metav1.Now().Time
	got, ok := jobspec.ParseTime(jobspec.FormatTime(now))
	if !ok || !got.Equal(now) {
		t.Errorf("round trip %v -> %v", now, got)
	}
}

func TestParseAdaptive(t *testing.T) {
	models := []string{"cifar10", "resnet18"}
	indexed := func(j *batchv1.Job) *batchv1.Job {
		m := batchv1.IndexedCompletion
		j.Spec.CompletionMode = &m
		return j
	}
	ok := indexed(mkJob(map[string]string{jobspec.ModelAnno: "resnet18", jobspec.KindAnno: "rigid", jobspec.BatchSizeAnno: "256"}, 4, 4, 1, "inlay"))
	s, err := jobspec.ParseAdaptive(ok, models)
	if err != nil || s.Model != "resnet18" || s.Kind != adapt.Rigid || s.Batch != 256 || s.GPUs != 4 {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = jobspec.ParseAdaptive(indexed(mkJob(map[string]string{jobspec.ModelAnno: "cifar10"}, 1, 1, 1, "inlay")), models)
	if err != nil || s.Kind != adapt.Adaptive || s.Batch != 0 {
		t.Fatalf("adaptive default: %+v %v", s, err)
	}
	for _, tc := range []struct {
		job  *batchv1.Job
		want string
	}{
		{indexed(mkJob(nil, 1, 1, 1, "inlay")), "inlay.dev/model: missing"},
		{indexed(mkJob(map[string]string{jobspec.ModelAnno: "bert"}, 1, 1, 1, "inlay")), `unknown model "bert" (models: cifar10, resnet18)`},
		{indexed(mkJob(map[string]string{jobspec.ModelAnno: "cifar10", jobspec.KindAnno: "elastic"}, 1, 1, 1, "inlay")), `inlay.dev/kind: unknown job category "elastic"`},
		{indexed(mkJob(map[string]string{jobspec.ModelAnno: "cifar10", jobspec.KindAnno: "rigid"}, 1, 1, 1, "inlay")), "inlay.dev/batch-size: missing"},
		{indexed(mkJob(map[string]string{jobspec.ModelAnno: "cifar10", jobspec.BatchSizeAnno: "0"}, 1, 1, 1, "inlay")), "not a positive number"},
		{mkJob(map[string]string{jobspec.ModelAnno: "cifar10"}, 2, 2, 1, "inlay"), "spec.completionMode: must be Indexed"},
		{indexed(mkJob(map[string]string{jobspec.ModelAnno: "cifar10"}, 2, 2, 2, "inlay")), "2 nvidia.com/gpu a pod, want 1"},
		{indexed(mkJob(map[string]string{jobspec.ModelAnno: "cifar10"}, 2, 3, 1, "inlay")), "must equal spec.completions"},
	} {
		_, err := jobspec.ParseAdaptive(tc.job, models)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}
