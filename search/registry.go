package search

import (
	"fmt"
	"strings"

	"github.com/inlay-dev/inlay/internal/named"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/bestmap"
	"github.com/inlay-dev/inlay/search/heft"
	"github.com/inlay-dev/inlay/search/inlay"
	"github.com/inlay-dev/inlay/search/milp"
	"github.com/inlay-dev/inlay/search/puzzle"
	"github.com/inlay-dev/inlay/search/single"
)

// Factory makes a planner from the argument after the colon in its name
// ("npu" in "single:npu"; "" when there is none). It validates the argument.
type Factory func(arg string) (plan.Planner, error)

// Registry returns the planners by base name. Each call builds a new map.
func Registry() map[string]Factory {
	return map[string]Factory{
		"single": func(arg string) (plan.Planner, error) {
			p, err := single.New(arg)
			if err != nil {
				return nil, err
			}
			return p, nil
		},
		"bestmap": noArg("bestmap", bestmap.Planner{}),
		"heft":    noArg("heft", heft.Planner{}),
		"puzzle": func(arg string) (plan.Planner, error) {
			opt, err := puzzle.ParseOptions(arg)
			if err != nil {
				return nil, err
			}
			opt.Seeds = []plan.Planner{bestmap.Planner{}, heft.Planner{}}
			return puzzle.New(opt), nil
		},
		"inlay": func(arg string) (plan.Planner, error) {
			if arg != "" {
				return nil, fmt.Errorf("search: planner inlay takes no argument (got %q)", arg)
			}
			return inlay.New(inlay.Options{Seeds: []plan.Planner{heft.Planner{}}}), nil
		},
		"milp": func(arg string) (plan.Planner, error) {
			opt, err := milp.ParseOptions(arg)
			if err != nil {
				return nil, err
			}
			opt.Start = inlay.New(inlay.Options{Seeds: []plan.Planner{heft.Planner{}}})
			return milp.New(opt), nil
		},
	}
}

func noArg(name string, p plan.Planner) Factory {
	return func(arg string) (plan.Planner, error) {
		if arg != "" {
			return nil, fmt.Errorf("search: planner %s takes no argument (got %q)", name, arg)
		}
		return p, nil
	}
}

// Names returns the registry's base names, sorted.
func Names() []string { return named.Names(Registry()) }

// New makes the planner named "base" or "base:arg".
func New(name string) (plan.Planner, error) {
	base, arg, _ := strings.Cut(name, ":")
	f, err := named.Lookup(named.Kind{Pkg: "search", What: "planner", Plural: "planners"}, Registry(), base, name)
	if err != nil {
		return nil, err
	}
	return f(arg)
}
