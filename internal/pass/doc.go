// Package pass is the shape every instance controller shares: begin a pass (read the instance,
// leave one being deleted, wait for the cache to show the last status written) and finish it (judge
// the rollout, compute the status, write it once, decide on a retry and the next check).
package pass
