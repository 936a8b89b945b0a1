// Command fuzzlist prints the fuzz targets that make fuzz runs, one
// "package:FuzzName" a line. Keep the list explicit: each entry is a parser
// of a file that users hand to inlay.
package main

import "fmt"

func main() {
	for _, t := range []string{
		"./onnx:FuzzLoad",
		"./workload:FuzzParse",
		"./plan:FuzzPlanParse",
		"./search/dag:FuzzDAGParse",
		"./hw:FuzzParse",
		"./agent:FuzzMeasure",
		"./agent:FuzzHandOff",
		"./agent:FuzzCycle",
		"./cluster/hw:FuzzClusterParse",
		"./cluster/job:FuzzTraceParse",
		"./cluster/sia:FuzzSiaParse",
		"./cluster/throughput:FuzzGavelParse",
		"./cluster/kube/jobspec:FuzzJobParse",
		"./cluster/kube/jobspec:FuzzAdaptiveParse",
		"./serve:FuzzDecode",
		"./profile:FuzzParsePublished",
		"./internal/openapi:FuzzValidate",
		"./internal/openapi:FuzzLoad",
		"./train:FuzzModelLine",
		"./train:FuzzPlanParse",
		"./train:FuzzPlanJSON",
		"./train:FuzzSailorParse",
		"./train:FuzzGPUList",
		"./train:FuzzInputShape",
		"./train/planner:FuzzCheckExport",
		"./train/published:FuzzPublishedParse",
		"./profile:FuzzParseAIHub",
		"./app:FuzzFlagValues",
	} {
		fmt.Println(t)
	}
}
