// Package admission holds the specs, names and updates the API server must refuse or accept for
// each kind, with the checks that hold it to them, so that the envtest and end-to-end suites run
// one table.
package admission
