package main

import (
	goruntime "runtime"

	"github.com/inlay-dev/inlay/report/progress"
)

// The progress bars on stderr (package progress), as the commands call them.
var (
	newBar      = progress.New
	barAdd      = progress.Add
	barDescribe = progress.Describe
	barDone     = progress.Done
	barProgress = progress.Set
	barCallback = progress.SetDescribed
)

// defaultWorkers is the number of evaluations run at once by default: one
// per core.
func defaultWorkers() int { return goruntime.NumCPU() }
