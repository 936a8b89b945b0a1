package throughput

// Load returns the table a --throughputs flag names: Gavel's
// measurements for "" or "gavel", otherwise the file in Gavel's format.
func Load(path string) (*Table, error) {
	if path == "" || path == "gavel" {
		return Gavel()
	}
	return LoadGavel(path)
}

// FileFlagHelp is the help of a --throughputs flag that Load reads.
const FileFlagHelp = "throughput file in Gavel's format (default: Gavel's measurements)"
