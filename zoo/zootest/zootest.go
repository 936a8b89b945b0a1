// Package zootest builds workloads of zoo networks for tests and
// benchmarks.
package zootest

import (
	"sync"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

var (
	mu   sync.Mutex
	nine = map[string]*workload.Workload{}
)

// Layers is the named zoo network's layer graph; an error fails tb.
func Layers(tb testing.TB, name string) *graph.LayerGraph {
	tb.Helper()
	_, lg, err := zoo.Layers(name)
	if err != nil {
		tb.Fatal(err)
	}
	return lg
}

// Nine is the nine zoo networks in three groups: camera (with an after
// chain), photo (Poisson arrivals) and text, for the named platform. It is
// built once per platform and shared: callers must not change it. An
// error fails tb.
func Nine(tb testing.TB, platform string) *workload.Workload {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if w, ok := nine[platform]; ok {
		return w
	}
	w := &workload.Workload{Platform: platform}
	for _, name := range zoo.Names() {
		g, lg, err := zoo.Layers(name)
		if err != nil {
			tb.Fatal(err)
		}
		w.Models = append(w.Models, &workload.Model{Name: name, Graph: g, Layers: lg, Source: "zoo:" + name, Zoo: name})
	}
	w.Groups = []*workload.Group{
		{Name: "camera", Models: []string{"mobilenet_v2", "yolov5s", "deeplabv3_mobilenet_v3_large"},
			After: map[string][]string{"deeplabv3_mobilenet_v3_large": {"yolov5s"}}, Period: 100 * time.Millisecond, Deadline: 100 * time.Millisecond, Arrival: workload.Periodic},
		{Name: "photo", Models: []string{"resnet50", "inception_v3", "efficientnet_b0", "mobilenet_v3_large", "deit_tiny"},
			After: map[string][]string{}, Period: time.Second, Deadline: 500 * time.Millisecond, Arrival: workload.Poisson},
		{Name: "text", Models: []string{"mobilebert"}, After: map[string][]string{}, Period: 200 * time.Millisecond, Deadline: 200 * time.Millisecond, Arrival: workload.Periodic},
	}
	nine[platform] = w
	return w
}
