// Package hw describes the platforms inlay plans for: processors (kind,
// backends, data types with their peak throughput, memory bandwidth,
// dispatch overhead, operator support, how many subgraphs run at once),
// memory domains and the links between them.
//
// A processor's index in Platform.Processors is its ID everywhere in inlay.
// Wherever a processor name is asked for, a kind ("cpu", "gpu", "npu",
// "dsp", "dla") is accepted too, meaning that kind's fastest processor
// (see Platform.Find).
//
// Platforms are YAML files (see Load for the schema) or embedded presets:
// "desktop", "host" (discovered from this machine), "jetson-orin" and
// "phone". Every preset number cites its public source in a comment. The
// presets are starting points to calibrate against measurements, not
// measurements themselves.
//
// The package estimates no time except the copy time of a link
// (Platform.Transfer): time of computation is package cost's job.
package hw
