// Command docscheck fails when the built book links to a page, an anchor or a repository file
// that does not exist. mkdocs checks links between Markdown files, but not their anchors, and it
// cannot see the files outside docs/ that pages link to on the repository's host.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	site := flag.String("site", "bin/docs-site", "the directory mkdocs built the book into")
	repo := flag.String("repo", ".", "the repository whose files the book links to")
	flag.Parse()
	broken, err := check(*site, *repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		os.Exit(1)
	}
	for _, b := range broken {
		fmt.Fprintln(os.Stderr, b)
	}
	if len(broken) > 0 {
		fmt.Fprintf(os.Stderr, "docscheck: %d broken links\n", len(broken))
		os.Exit(1)
	}
}
