package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
)

// DeviceInput names the device a profile measures on.
type DeviceInput struct {
	// Platform is the platform preset or file ("": the agent's with an
	// agent, else the workload's, else the default).
	Platform string
	// AgentURL and Token name an inlay agent to measure on ("": this
	// machine, with the ONNX Runtime library Library).
	AgentURL, Token, Library string
}

// ProfileDevice is the device a profile of w measures on: the agent's or
// this machine's, its platform, and its hand-off probe.
func ProfileDevice(ctx context.Context, w *workload.Workload, in DeviceInput) (profile.Device, *hw.Platform, HandOffProber, error) {
	var pl *hw.Platform
	var err error
	if in.Platform != "" {
		if pl, err = hw.Resolve(in.Platform); err != nil {
			return nil, nil, nil, err
		}
	}
	if in.AgentURL != "" {
		c := agent.NewClient(in.AgentURL, in.Token)
		info, err := c.Info(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		if pl == nil {
			pl = info.Platform
		}
		if pl == nil {
			return nil, nil, nil, fmt.Errorf("profile: the agent at %s names no platform; give --platform", in.AgentURL)
		}
		return c, pl, agentHandOff(c), nil
	}
	if pl == nil {
		if pl, err = hw.Choose("", w.Platform); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, pr := range pl.Processors {
		if len(pr.Cores) == 0 {
			return nil, nil, nil, fmt.Errorf("profile: platform %s: processor %s is not a set of this machine's cores; measure on --platform host, or on the device with --agent URL", pl.Name, pr.Name)
		}
	}
	dev, err := profile.NewLocal(in.Library, pl)
	if err != nil {
		return nil, nil, nil, err
	}
	return dev, pl, func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error) {
		return runtime.ProbeHandOff(ctx, runtime.ProbeConfig{Platform: pl, Library: in.Library, NoPin: unpinned})
	}, nil
}

// agentHandOff probes the hand-off on the agent's device; an agent
// without the endpoint has none (ErrNoHandOff).
func agentHandOff(c *agent.Client) HandOffProber {
	return func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error) {
		pr, err := c.HandOff(ctx, agent.HandOffOptions{NoPin: unpinned})
		var se *agent.StatusError
		if errors.As(err, &se) && se.Code == agent.CodeNotFound {
			err = fmt.Errorf("%w: %w", ErrNoHandOff, err)
		}
		return pr, err
	}
}

// Check fails on run counts a profile cannot take (before a device is
// set up).
func (in ProfileInput) Check() error {
	if in.Reps < 1 || in.Warmup < 0 || in.Chunks < 0 || in.Cold < 0 || in.Idle < 0 || in.Cycles < 0 {
		return errors.New("profile: --reps must be at least 1, --warmup, --cold, --idle, --cycles and --chunks not negative")
	}
	if in.Rounds < 1 {
		return fmt.Errorf("profile: --rounds %d: want at least 1", in.Rounds)
	}
	return nil
}
