package view

import (
	"fmt"
	"io"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/internal/textfmt"
)

// Zoo prints one aligned row per zoo network, numbers right-aligned.
func Zoo(w io.Writer, rows []app.ZooRow) error {
	t := textfmt.Table{Header: []string{"NAME", "INPUT", "LAYERS", "PARAMS", "MACS", "DESCRIPTION"},
		Align: []textfmt.Align{textfmt.Left, textfmt.Left, textfmt.Right, textfmt.Right, textfmt.Right, textfmt.Left}}
	for _, r := range rows {
		s := r.Spec
		t.Add(s.Name, s.Input.String(), fmt.Sprint(r.Layers), textfmt.Count(r.Params), textfmt.SI(float64(r.MACs), "MAC"), s.Description)
	}
	_, err := t.WriteTo(w)
	return err
}
