package main

import (
	"io"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commands returns root and every command under it.
func commands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		out = append(out, commands(c)...)
	}
	return out
}

// TestFlagValueNamesAreOneWord checks the value name --help shows after
// each flag: pflag takes the first back-quoted text of the usage as that
// name, so a back-quoted phrase would print the phrase in the flag column.
func TestFlagValueNamesAreOneWord(t *testing.T) {
	for _, c := range commands(newRoot(io.Discard, io.Discard)) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
				t.Errorf("%s --%s: value name %q in --help is not one word", c.CommandPath(), f.Name, name)
			}
		})
	}
}

// TestLongHelpParagraphsAreFilled checks that no line of a command's long
// help, but a paragraph's last, breaks far short of the paragraph's width:
// a short line in the middle of a paragraph reads as a stray line break.
func TestLongHelpParagraphsAreFilled(t *testing.T) {
	for _, c := range commands(newRoot(io.Discard, io.Discard)) {
		for _, para := range strings.Split(c.Long, "\n\n") {
			lines := strings.Split(strings.TrimSpace(para), "\n")
			width := 0
			for _, l := range lines {
				width = max(width, len(l))
			}
			for i, l := range lines[:len(lines)-1] {
				if strings.HasPrefix(l, " ") || strings.HasPrefix(lines[i+1], " ") {
					continue // an indented block keeps its own lines
				}
				if len(l)+len(strings.Fields(lines[i+1])[0]) < width*3/4 {
					t.Errorf("%s: long help line %q breaks short of the paragraph's width %d", c.CommandPath(), l, width)
				}
			}
		}
	}
}
