package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/internal/docgen"
	"github.com/inlay-dev/inlay/search"
)

// repoRoot is the repository root, seen from this package's folder.
const repoRoot = "../.."

// generatedDocs returns the pages of docs/reference that come from the
// code: the CLI pages from the cobra tree, the planners and the cluster
// policies from their registries.
func generatedDocs(t *testing.T) []docgen.Page {
	t.Helper()
	// The --profiles default names the cache folder; write it as a reader's.
	t.Setenv("INLAY_CACHE", "~/.cache/inlay")
	pages := docgen.CLI(newRootCmd())

	summaries := search.Summaries()
	var planners []docgen.Entry
	for _, name := range search.Names() {
		s, ok := summaries[name]
		if !ok {
			t.Fatalf("planner %q has no entry in search.Summaries (search/summaries.go)", name)
		}
		planners = append(planners, docgen.Entry{Name: name, Summary: s.Text, Options: s.Options})
	}
	for name := range summaries {
		if _, ok := search.Registry()[name]; !ok {
			t.Fatalf("search.Summaries names %q, which search.Registry lacks", name)
		}
	}
	pages = append(pages, docgen.Registry("docs/reference/planners.md", "Planners",
		"The planners of `inlay plan --planner NAME` (and `inlay bench`, `inlay demo`, the web UI), from `search.Registry`. "+
			"A planner with options takes them after a colon: `--planner puzzle:pop=24,gen=50`. "+
			"Search planners share `--budget`, `--evals`, `--seed` and `--workers`; "+
			"the same seed, evaluations and workers give the same plan.", planners))

	var policies []docgen.Entry
	for name, f := range registry.Registry() {
		policies = append(policies, docgen.Entry{Name: name, Summary: f.Summary})
	}
	pages = append(pages, docgen.Registry("docs/reference/policies.md", "Cluster policies",
		"The policies of `inlay cluster simulate --policy NAME`, `inlay cluster bench` and `inlay-scheduler run`, from `cluster/policy/registry`. "+
			"The simulator and the Kubernetes scheduler run the same policy code.", policies))
	return pages
}

// TestGeneratedDocs fails when a generated page of docs/reference differs
// from what the code gives; `make docs` (INLAY_UPDATE_DOCS=1) rewrites them.
func TestGeneratedDocs(t *testing.T) {
	pages := generatedDocs(t)
	update := os.Getenv("INLAY_UPDATE_DOCS") == "1"
	want := map[string]bool{}
	for _, p := range pages {
		want[p.Path] = true
		path := filepath.Join(repoRoot, filepath.FromSlash(p.Path))
		if update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, p.Body, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(have, p.Body) {
			t.Errorf("%s is stale: run make docs", p.Path)
		}
	}
	// A page whose command is gone is stale too.
	entries, err := os.ReadDir(filepath.Join(repoRoot, docgen.CLIDir))
	if err != nil {
		t.Fatalf("%s: %v (run make docs)", docgen.CLIDir, err)
	}
	for _, e := range entries {
		p := docgen.CLIDir + "/" + e.Name()
		if want[p] {
			continue
		}
		if update {
			if err := os.Remove(filepath.Join(repoRoot, filepath.FromSlash(p))); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s names no command: run make docs", p)
	}
}

// docFiles returns README.md and every Markdown file under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// TestDocCommands checks every inlay command line of the README and the
// docs against the command tree: the subcommand exists, and every flag
// exists and parses. With INLAY_DOC_COMMANDS=FILE it also writes them to
// FILE, one "file:line<TAB>kind<TAB>arguments" a line (kind: "command",
// or "mention" for a command named in running text without its
// arguments), for scripts/doc-commands.sh, which runs the light ones.
func TestDocCommands(t *testing.T) {
	var list bytes.Buffer
	n := 0
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range docgen.Commands(f, string(text)) {
			n++
			if err := docgen.Check(newRootCmd, c.Args); err != nil {
				t.Errorf("%s:%d: %s: %v", c.File, c.Line, c.Text, err)
			}
			kind := "mention"
			if docgen.Complete(newRootCmd, c.Args) {
				kind = "command"
			}
			fmt.Fprintf(&list, "%s:%d\t%s\t%s\n", c.File, c.Line, kind, strings.Join(quoteWords(c.Args), " "))
		}
	}
	if n == 0 {
		t.Fatal("no inlay command found in README.md and docs/")
	}
	if out := os.Getenv("INLAY_DOC_COMMANDS"); out != "" {
		if err := os.WriteFile(out, list.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// quoteWords quotes the words that a shell would otherwise split or expand.
func quoteWords(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$`\\*?;&|<>(){}") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
