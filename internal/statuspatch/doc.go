// Package statuspatch writes an instance's status once per pass, only when it changed, and tells
// when the cache has not caught up with the last status written.
package statuspatch
