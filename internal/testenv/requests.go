package testenv

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// requestCounts counts the operator's requests by method and path, so that a test can tell that
// a pass sent no write it did not need, even one the API server would have found a no-op.
var requestCounts = struct {
	mu     sync.Mutex
	counts map[string]int
}{counts: map[string]int{}}

func countRequests(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			requestCounts.mu.Lock()
			requestCounts.counts[req.Method+" "+req.URL.Path]++
			requestCounts.mu.Unlock()
			return next.RoundTrip(req)
		})
	})
}

// Requests is how many requests with method the operator under test has sent to paths ending in
// suffix, such as "PATCH" and "/statefulsets/db".
func Requests(method, suffix string) int {
	requestCounts.mu.Lock()
	defer requestCounts.mu.Unlock()
	n := 0
	for key, count := range requestCounts.counts {
		m, path, _ := strings.Cut(key, " ")
		if m == method && strings.HasSuffix(path, suffix) {
			n += count
		}
	}
	return n
}
