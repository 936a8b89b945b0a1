// Package workload describes what a device must run: models, grouped into
// groups that one input triggers together (a camera frame, an audio chunk),
// each group with a rate, a deadline, an arrival process and optional
// dependencies between its models.
//
// A workload is a YAML file; paths in it are relative to the file:
//
//	platform: phone                 # preset name or path; the CLI may override it
//	models:
//	  - {name: det, onnx: models/det.onnx, inputs: {x: [1, 3, 640, 640]}}
//	  - {name: face, zoo: mobilenet_v2}
//	groups:
//	  - name: camera
//	    models: [face, det]
//	    after: {det: [face]}        # optional: det waits for face
//	    period_ms: 33.3             # or rate_hz
//	    deadline_ms: 33.3           # default: the period
//	    arrival: periodic           # periodic (default) or poisson
//
// An ONNX path that starts with "cache:" names a file in the folder of
// fetched real models (scripts/fetch.sh), e.g. onnx: cache:melspectrogram.onnx.
//
// Parse checks a file without loading any model (strict: unknown fields are
// errors); Load parses and then loads every model (package onnx or package
// zoo) and builds its layer graph. Every error is one line that names the
// file and, where it can, the line and the place ("workload: w.yaml:7:
// groups[0] (camera).after: dependency cycle det -> rec -> det").
//
// A model may belong to several groups; every model must belong to at least
// one. The package plans nothing.
package workload
