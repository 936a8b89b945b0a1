package sim

// RunWith is Run, or the reference implementation of contended runs
// (refRun), with the rate searches' fail-fast stop on or off; for the
// external tests.
func RunWith(prog *Program, opt Options, reference, failFast bool) (*Result, error) {
	opt.failFast = failFast
	if reference {
		return refRun(prog, opt)
	}
	return Run(prog, opt)
}
