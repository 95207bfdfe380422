// Package docslayout holds the test that keeps the book's map of the repository,
// docs/development/layout.md, true: every folder the page names exists, and every folder of the
// mapped trees is named on the page. It has no code of its own.
package docslayout
