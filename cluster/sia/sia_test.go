package sia_test

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/cluster/sia/siatest"
)

func TestLoadShared(t *testing.T) {
	b := siatest.Load(t)
	if got := len(b.Cluster.NodeTypes); got != 3 {
		t.Fatalf("node types: %d, want 3", got)
	}
	total := 0
	for _, nt := range b.Cluster.NodeTypes {
		total += nt.PerNode * nt.Nodes
	}
	if total != 64 {
		t.Errorf("GPUs: %d, want 64", total)
	}
	if s := b.Cluster.Scaled(32); s.NodeTypes[0].Nodes != 32*b.Cluster.NodeTypes[0].Nodes {
		t.Errorf("scale 32: %d nodes", s.NodeTypes[0].Nodes)
	}
	for _, m := range []string{"cifar10", "bert", "imagenet", "deepspeech2", "yolov3"} {
		md, ok := b.Models[m]
		if !ok || len(md.Profiles) != 3 || len(md.Batches) < 6 {
			t.Errorf("model %s: %+v", m, md)
		}
	}
	names, ws, err := b.Workloads("philly")
	if err != nil || len(ws) != 8 || names[1] != "workload-2" || len(ws[0]) != 160 {
		t.Fatalf("philly: %v %d %v", names, len(ws), err)
	}
	if _, ws, _ := b.Workloads("saturn"); len(ws) != 10 {
		t.Errorf("saturn: %d files", len(ws))
	}
	found := false
	for _, p := range b.Published {
		found = found || (p.Source == "table3" && p.Trace == "Philly" && p.Policy == "Sia" && p.AvgJCT == 0.6)
	}
	if !found {
		t.Error("Table 3's Philly Sia row missing")
	}
}

func TestWorkloadErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"name,time,application,num_replicas\n", "w.csv:1: missing column batch_size"},
		{"name,time,application,num_replicas,batch_size\na,1,cifar10,2\n", "w.csv:2: 4 fields"},
		{"name,time,application,num_replicas,batch_size\na,x,cifar10,2,64\n", "w.csv:2: time"},
		{"name,time,application,num_replicas,batch_size\na,5,cifar10,2,64\nb,1,cifar10,2,64\n", "w.csv:3: time 1 is before"},
		{"name,time,application,num_replicas,batch_size\na,5,cifar10,0,64\n", "w.csv:2: num_replicas"},
		{"name,time,application,num_replicas,batch_size,category\na,5,cifar10,2,64,elastic\n", "w.csv:2: category"},
		{"name,time,application,num_replicas,batch_size\na,5,cifar10,2,64\na,6,cifar10,2,64\n", "w.csv:3: name"},
		{"", "w.csv: empty file"},
	} {
		_, err := sia.ParseWorkload("w.csv", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	js, err := sia.ParseWorkload("w.csv", []byte("name,time,application,num_replicas,batch_size,category\na,5,cifar10,2,64,rigid\nb,6,bert,1,12,\n"))
	if err != nil || len(js) != 2 || js[0].Category != "rigid" || js[1].Category != "adaptive" || js[1].Line != 3 {
		t.Errorf("%+v %v", js, err)
	}
}

func TestProfileErrors(t *testing.T) {
	if _, err := sia.ParsePlacements("p.csv", []byte("placement,local_bsz,step_time\n1,32,0.1\n")); err == nil || !strings.Contains(err.Error(), "p.csv:1: missing column sync_time") {
		t.Errorf("missing column: %v", err)
	}
	if _, err := sia.ParsePlacements("p.csv", []byte("placement,local_bsz,step_time,sync_time\n10,32,0.1,0\n")); err == nil || !strings.Contains(err.Error(), "p.csv:2: placement") {
		t.Errorf("digit 0: %v", err)
	}
	s, err := sia.ParsePlacements("p.csv", []byte("local_bsz,step_time,sync_time,placement\n32,0.1,0.01,1122\n"))
	if err != nil || s[0].Nodes != 4 || s[0].Replicas != 6 {
		t.Errorf("%+v %v", s, err)
	}
	if _, err := sia.ParseValidation("v.csv", []byte("progress,grad_sqr,grad_var\n5,1,1\n3,1,1\n")); err == nil || !strings.Contains(err.Error(), "v.csv:3: progress decreases") {
		t.Errorf("decreasing progress: %v", err)
	}
	if _, err := sia.ParseCluster("c.json", []byte(`{"node_types":[{"profile_suffix":"../x","gpus_per_node":4,"nodes":1}],"max_epochs":{"a":1}}`)); err == nil || !strings.Contains(err.Error(), "profile_suffix") {
		t.Errorf("suffix: %v", err)
	}
	if _, err := sia.ParseCluster("c.json", []byte("{\n\"node_types\": 3}")); err == nil || !strings.Contains(err.Error(), "c.json: line 2") {
		t.Errorf("type: %v", err)
	}
}

func FuzzSiaParse(f *testing.F) {
	f.Add(0, []byte("name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\n"))
	f.Add(1, []byte("placement,local_bsz,step_time,sync_time\n12,32,0.04,0.0005\n"))
	f.Add(2, []byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n6,6,32,0.14,0.09\n"))
	f.Add(3, []byte("progress,iteration,metric,grad_sqr,grad_var\n391.0,390,0.44,8.9,5.0\n"))
	f.Add(4, []byte(`{"node_types":[{"profile_suffix":"aws","gpus_per_node":4,"nodes":6}],"max_epochs":{"cifar10":100}}`))
	f.Add(5, []byte("source,setting,trace,policy,avg_jct_h\ntable3,x,Philly,Sia,0.6\n"))
	f.Fuzz(func(t *testing.T, which int, data []byte) {
		var err error
		switch ((which % 6) + 6) % 6 {
		case 0:
			_, err = sia.ParseWorkload("f", data)
		case 1:
			_, err = sia.ParsePlacements("f", data)
		case 2:
			_, err = sia.ParseScalability("f", data)
		case 3:
			_, err = sia.ParseValidation("f", data)
		case 4:
			_, err = sia.ParseCluster("f", data)
		case 5:
			_, err = sia.ParsePublished("f", data)
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "f")) {
			t.Fatalf("error not one line naming the file: %q", err)
		}
	})
}
