package main

import (
	"embed"
	"strings"
)

// helpFiles holds the long help of the commands whose help runs to
// paragraphs, one help/NAME.txt each.
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is the long help in help/NAME.txt.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a file of this package
	}
	return strings.TrimSuffix(string(b), "\n")
}
