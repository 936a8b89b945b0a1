package infer

import "github.com/inlay-dev/inlay/graph"

// CaseModel is one model of the operator tables, not yet inferred, for the
// external tests that run the same cases on ONNX Runtime.
type CaseModel struct {
	Name  string
	Model *graph.Model
}

// CaseModels builds every case of the operator and folding tables.
func CaseModels() []CaseModel {
	var out []CaseModel
	var cases []opCase
	cases = append(cases, convCases()...)
	cases = append(cases, matrixCases()...)
	cases = append(cases, elementwiseCases()...)
	cases = append(cases, moreCases()...)
	cases = append(cases, quantCases()...)
	for _, f := range foldCases() {
		cases = append(cases, opCase{name: "fold " + f.name, opset: 13, build: f.build})
	}
	for _, tc := range cases {
		opset := tc.opset
		if opset == 0 {
			opset = 17
		}
		b := newModel(opset)
		tc.build(b)
		out = append(out, CaseModel{Name: tc.name, Model: b.m})
	}
	return out
}
