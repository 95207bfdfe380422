package pass

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/appkeeper/appkeeper/internal/event"
)

// Creations collects the children a pass created, which its end reports in one Created Event: a
// person reads that the instance got its children, not one line per child. Steps that run
// concurrently may add to it at once.
type Creations struct {
	mu      sync.Mutex
	what    []string
	related runtime.Object
}

// Add records that the pass created related, described as "Service web" or "StatefulSet cache
// with 3 members of memcached:1.6".
func (c *Creations) Add(related runtime.Object, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.what = append(c.what, fmt.Sprintf(format, args...))
	c.related = related
}

// report records one Created Event on regarding naming every child created, in a stable order;
// its related object is the child when there is only one.
func (c *Creations) report(recorder events.EventRecorder, regarding runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.what) == 0 {
		return
	}
	var related runtime.Object
	if len(c.what) == 1 {
		related = c.related
	}
	slices.Sort(c.what)
	event.Created.Emit(recorder, regarding, related, "created %s", joinAnd(c.what))
}

// joinAnd joins items as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
