package main

import goruntime "runtime"

// defaultWorkers is the number of evaluations run at once by default: one
// per core.
func defaultWorkers() int { return goruntime.NumCPU() }
