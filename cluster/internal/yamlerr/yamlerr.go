// Package yamlerr turns go.yaml.in/yaml/v3 decoding errors into the one
// line the cluster parsers print: the first error, without its "yaml: "
// prefix, split into the line it names and the message.
package yamlerr

import (
	"errors"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var lineRE = regexp.MustCompile(`line (\d+): (.*)`)

// Split returns the line err names ("" when none) and its one-line message.
func Split(err error) (line, msg string) {
	msg = err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg, _, _ = strings.Cut(msg, "\n")
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		return m[1], strings.TrimSpace(m[2])
	}
	return "", strings.TrimSpace(msg)
}
