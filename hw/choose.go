package hw

// DefaultPlatform is the platform a command works on when neither the
// command line nor the workload names one: this machine's cores.
const DefaultPlatform = "host"

// Choose is the one platform lookup of every command: the platform given
// on the command line (given, a preset name or a file), else the one the
// workload names (fromWorkload), else DefaultPlatform; resolved with
// Resolve. Either argument may be "".
func Choose(given, fromWorkload string) (*Platform, error) {
	name := given
	if name == "" {
		name = fromWorkload
	}
	if name == "" {
		name = DefaultPlatform
	}
	return Resolve(name)
}
