package sim

import (
	"time"

	"github.com/inlay-dev/inlay/dispatch"
)

const ms = time.Millisecond

// progBuilder makes hand-written programs readable in tests.
type progBuilder struct{ p dispatch.Program }

func newProg() *progBuilder { return &progBuilder{} }

func (b *progBuilder) proc(name string, conc int) *progBuilder {
	b.p.Procs = append(b.p.Procs, dispatch.Proc{Name: name, Concurrency: conc})
	return b
}

func (b *progBuilder) link(name string, shared bool) *progBuilder {
	b.p.Links = append(b.p.Links, dispatch.Link{Name: name, Shared: shared})
	return b
}

func (b *progBuilder) group(name string, period, deadline time.Duration) int {
	b.p.Groups = append(b.p.Groups, dispatch.Group{Name: name, Period: period, Deadline: deadline})
	return len(b.p.Groups) - 1
}

func (b *progBuilder) model(group int, name string, prio int) int {
	b.p.Models = append(b.p.Models, dispatch.Model{Name: name, Group: group, Priority: prio})
	g := &b.p.Groups[group]
	g.Models = append(g.Models, len(b.p.Models)-1)
	return len(b.p.Models) - 1
}

func (b *progBuilder) index(names []dispatch.Proc, name string) int {
	for i, p := range names {
		if p.Name == name {
			return i
		}
	}
	panic("no processor " + name)
}

func (b *progBuilder) add(model int, j dispatch.Job) int {
	j.Model = model
	b.p.Jobs = append(b.p.Jobs, j)
	id := len(b.p.Jobs) - 1
	b.p.Models[model].Jobs = append(b.p.Models[model].Jobs, id)
	g := &b.p.Groups[b.p.Models[model].Group]
	g.Jobs = append(g.Jobs, id)
	return id
}

func (b *progBuilder) compute(model int, label, proc string, d time.Duration, deps ...int) int {
	return b.add(model, dispatch.Job{Kind: dispatch.Compute, Label: label, Proc: b.index(b.p.Procs, proc), Link: -1, Duration: d, Deps: deps})
}

func (b *progBuilder) transfer(model int, label, link string, d time.Duration, deps ...int) int {
	li := -1
	for i, l := range b.p.Links {
		if l.Name == link {
			li = i
		}
	}
	if li < 0 {
		panic("no link " + link)
	}
	return b.add(model, dispatch.Job{Kind: dispatch.Transfer, Label: label, Proc: -1, Link: li, Duration: d, Deps: deps})
}

func (b *progBuilder) build() *Program {
	p := b.p
	return &Program{Program: &p}
}
