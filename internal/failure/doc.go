// Package failure holds the kinds of error a pass can end with: the reason each gives the Degraded
// condition, and which of them a retry cannot fix.
package failure
