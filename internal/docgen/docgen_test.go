package docgen

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

const sample = "# Title\n" +
	"Run `inlay plan examples/a.yaml --planner heft` or `go run ./cmd/inlay demo`;\n" +
	"the synopsis `inlay plan WORKLOAD [--planner P]`, the planner `inlay` and `make test` are no commands.\n" +
	"```sh\n" +
	"$ inlay zoo list | head   # the networks\n" +
	"INLAY_CACHE=/x inlay plan w.yaml \\\n" +
	"    --budget 5s -o 'my plan.yaml' > out.txt\n" +
	"make test\n" +
	"```\n" +
	"```\n" +
	"inlay demo: 8 models in 2 groups (output, not a command)\n" +
	"```\n"

func TestCommands(t *testing.T) {
	got := Commands("x.md", sample)
	want := []Command{
		{"x.md", 2, "inlay plan examples/a.yaml --planner heft", []string{"plan", "examples/a.yaml", "--planner", "heft"}},
		{"x.md", 2, "go run ./cmd/inlay demo", []string{"demo"}},
		{"x.md", 5, "$ inlay zoo list | head   # the networks", []string{"zoo", "list"}},
		{"x.md", 6, "INLAY_CACHE=/x inlay plan w.yaml  --budget 5s -o 'my plan.yaml' > out.txt", []string{"plan", "w.yaml", "--budget", "5s", "-o", "my plan.yaml"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Commands:\n got %+v\nwant %+v", got, want)
	}
}

func newTree() *cobra.Command {
	root := &cobra.Command{Use: "inlay"}
	plan := &cobra.Command{Use: "plan WORKLOAD", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }}
	plan.Flags().Duration("budget", 0, "wall clock")
	plan.Flags().StringP("out", "o", "", "output")
	plan.Flags().Bool("json", false, "JSON")
	zoo := &cobra.Command{Use: "zoo"}
	zoo.AddCommand(&cobra.Command{Use: "list", RunE: func(*cobra.Command, []string) error { return nil }})
	root.AddCommand(plan, zoo)
	return root
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		line, err string
	}{
		{"plan w.yaml --budget 5s -o p.yaml --json", ""},
		{"zoo list", ""},
		{"plan w.yaml --budget five", `invalid argument "five" for "--budget"`},
		{"plan w.yaml --planner heft", "unknown flag: --planner"},
		{"zoo lsit", `unknown command "lsit" for "inlay zoo"`},
		{"simulate w.yaml", `unknown command "simulate" for "inlay"`},
	} {
		err := Check(newTree, strings.Fields(tc.line))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.line, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, want an error with %q", tc.line, err, tc.err)
		}
	}
}

func TestComplete(t *testing.T) {
	for line, want := range map[string]bool{
		"plan w.yaml --budget 5s": true,
		"plan":                    false, // plan takes a workload
		"zoo":                     false, // zoo only groups commands
		"zoo list":                true,
	} {
		if got := Complete(newTree, strings.Fields(line)); got != want {
			t.Errorf("Complete(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestCLIPages(t *testing.T) {
	pages := CLI(newTree())
	var paths []string
	for _, p := range pages {
		paths = append(paths, p.Path)
	}
	want := []string{CLIDir + "/README.md", CLIDir + "/inlay-plan.md", CLIDir + "/inlay-zoo-list.md", CLIDir + "/inlay-zoo.md", CLIDir + "/inlay.md"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("pages %q, want %q", paths, want)
	}
	plan := string(pages[1].Body)
	for _, s := range []string{"# inlay plan\n", "inlay plan WORKLOAD [flags]", "| `--budget`", "| `-o`, `--out` | string"} {
		if !strings.Contains(plan, s) {
			t.Errorf("inlay-plan.md lacks %q:\n%s", s, plan)
		}
	}
}

func TestTableLinesUp(t *testing.T) {
	got := Table([][]string{{"a", "bb"}, {"ccc", "d"}})
	want := "| a   | bb |\n| --- | -- |\n| ccc | d  |\n"
	if got != want {
		t.Fatalf("Table:\n%s\nwant\n%s", got, want)
	}
}

// FuzzCommands feeds Markdown to the command finder: it never panics, and
// every command it finds starts with a word and came from the input. It is
// not in internal/fuzzlist (the docs are the project's files, not a user's);
// run it with go test -fuzz FuzzCommands ./internal/docgen.
func FuzzCommands(f *testing.F) {
	f.Add(sample)
	f.Add("```sh\ninlay plan 'unterminated \\\n")
	f.Add("`` inlay `x` `` ``")
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range Commands("x.md", text) {
			if c.Line < 1 || c.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("line %d outside the input", c.Line)
			}
			_ = Check(newTree, c.Args)
			_ = Complete(newTree, c.Args)
		}
	})
}
