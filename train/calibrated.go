package train

// Calibrated efficiencies per GPU type. Produced by
//
//	inlay train calibrate --published shared/training/vtrain_single_node.csv \
//	  shared/training/korthikanti_mlsys23.csv shared/training/megatron_sc21_table1.csv \
//	  shared/training/sailor_gh200.csv --write train/calibrated.go
//
// from the measurements named in each entry; do not edit by hand.

var calibrated = map[string]Efficiency{
	"A100-40":  {GEMM: 0.7, GEMMTraffic: 0.5, Memory: 0.7, Backward: 2, LaunchUs: 5, Link: 0.8, Network: 0.8, LinkLatencyUs: 2, ContextGB: 1, Fragmentation: 0.1},
	"A100-80":  {GEMM: 0.7, GEMMTraffic: 0.5, Memory: 0.7, Backward: 2, LaunchUs: 5, Link: 0.8, Network: 0.8, LinkLatencyUs: 2, ContextGB: 1, Fragmentation: 0.1},
	"GH200-96": {GEMM: 0.7, GEMMTraffic: 0.5, Memory: 0.7, Backward: 2, LaunchUs: 5, Link: 0.8, Network: 0.8, LinkLatencyUs: 2, ContextGB: 5, Fragmentation: 0.1},
}

var defaultEfficiency = Efficiency{GEMM: 0.7, GEMMTraffic: 0.5, Memory: 0.7, Backward: 2, LaunchUs: 5, Link: 0.8, Network: 0.8, LinkLatencyUs: 2, ContextGB: 1, Fragmentation: 0.1}

// calibratedEfficiency returns the fitted efficiency of the type called
// name, or DefaultEfficiency and false.
func calibratedEfficiency(name string) (Efficiency, bool) {
	if e, ok := calibrated[name]; ok {
		return e, true
	}
	return defaultEfficiency, false
}
