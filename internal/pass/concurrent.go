package pass

import (
	"errors"
	"sync"
)

// Concurrently runs every one of fns at once and returns their errors joined. A pass applies the
// children that do not depend on each other together, so that it waits for one round trip to the
// API server instead of one per child.
func Concurrently(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
