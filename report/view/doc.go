// Package view renders the results of the use cases (package app) and the
// lower packages as the command line prints them: tables, summaries and
// one-line accounts, each written to an io.Writer or returned as a string.
// It decides nothing: what it prints was computed before.
package view
