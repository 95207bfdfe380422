// Package apply makes an instance's children match what the operator wants with server-side apply,
// sending nothing when they already do, restoring what a person changed, and never taking over an
// object that another owner holds; it also creates the Secrets whose values are generated once.
package apply
