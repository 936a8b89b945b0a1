package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/profile"
)

// PublishedInput asks for a fit of the analytic model to a CSV of
// published whole-model latencies (inlay calibrate --published).
type PublishedInput struct {
	// File is the CSV; Platform the preset or file fitted (default phone),
	// or, for an AI Hub file, the one preset fitted ("": every one).
	File, Platform string
	// Evals is the objective evaluations per fit; Prior the weight of the
	// pull toward the nominal figures (0 or less: none).
	Evals int
	Prior float64
	// Progress, when not nil, follows a single fit (not an AI Hub file's).
	Progress func(done, total int)
}

// PublishedResult is what CalibratePublished fitted: one platform's
// processor (Platform, Fit), or, for an AI Hub file, one fit per device
// with a preset (Devices).
type PublishedResult struct {
	Rows     []profile.Published
	Platform *hw.Platform
	Fit      *profile.PublishedFit
	Devices  []profile.DeviceFit
}

// CalibratePublished fits the analytic model to the published latencies
// of in.File (profile.FitPublished, or profile.FitDevices for an AI Hub
// file).
func CalibratePublished(in PublishedInput) (*PublishedResult, error) {
	data, err := os.ReadFile(in.File)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	prior := in.Prior
	if prior <= 0 {
		prior = -1 // none
	}
	if profile.IsAIHub(data) {
		rows, err := profile.ParseAIHub(data, in.File)
		if err != nil {
			return nil, err
		}
		var only []string
		if in.Platform != "" {
			only = []string{in.Platform}
		}
		fits, err := profile.FitDevices(rows, profile.DevicesOptions{MaxEvals: in.Evals, Prior: prior, Source: filepath.Base(in.File), Devices: only})
		return &PublishedResult{Rows: rows, Devices: fits}, err
	}
	rows, err := profile.ParsePublished(data, in.File)
	if err != nil {
		return nil, err
	}
	name := in.Platform
	if name == "" {
		name = "phone"
	}
	pl, err := hw.Resolve(name)
	if err != nil {
		return nil, err
	}
	res, err := profile.FitPublished(pl, rows, profile.PublishedOptions{MaxEvals: in.Evals, Prior: prior, Source: filepath.Base(in.File),
		Progress: in.Progress})
	if err != nil {
		return nil, err
	}
	return &PublishedResult{Rows: rows, Platform: pl, Fit: res}, nil
}

// PublishedOutput is the calibrated platform file of a single fit:
// output, or PLATFORM-calibrated.yaml.
func (r *PublishedResult) PublishedOutput(output string) string {
	if output == "" {
		return r.Platform.Name + "-calibrated.yaml"
	}
	return output
}

// WritePublished writes the calibrated platform of a single fit of file to
// path, with a header that says what was fitted.
func (r *PublishedResult) WritePublished(path, file string) error {
	header := fmt.Sprintf("# %s with %s's figures fitted to %s by inlay calibrate --published\n", r.Platform.Name, r.Fit.Processor, filepath.Base(file)) +
		"# (fit: sustained_gops, mem_bandwidth_gbs, overheads, half_flops, on_chip_kib, the per-class compute fractions\n# and, for integer types, requant_gbs; every other figure is the preset's estimate, see its sources)\n"
	return writePlatform(path, header, r.Fit.Platform)
}

// WriteDevice writes a device's calibrated platform, PRESET-calibrated.yaml
// in dir (or here), and returns its path.
func WriteDevice(df profile.DeviceFit, dir, file string) (string, error) {
	path := df.Preset + "-calibrated.yaml"
	if dir != "" {
		path = filepath.Join(dir, path)
	}
	header := fmt.Sprintf("# %s with %s's figures fitted to %s (%s, runtime %s) by inlay calibrate --published\n", df.Preset, df.Fit.Processor, filepath.Base(file), df.Device, profile.PredictedRuntime)
	return path, writePlatform(path, header, df.Fit.Platform)
}

// writePlatform writes a platform file with a comment header.
func writePlatform(path, header string, p *hw.Platform) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fmt.Fprint(fh, header)
	if err := hw.Encode(fh, p); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	return nil
}
