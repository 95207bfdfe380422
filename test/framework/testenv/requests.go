package testenv

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// request is one kind of request the operator sent and, once answered, the status of the answer.
type request struct {
	method, path string
	status       int
}

// requestCounts counts the operator's requests by method and path as they are sent, and again by
// the status of their answers, so that a test can tell that a pass sent no write it did not need,
// even one the API server would have found a no-op, and that no write of the operator was refused.
var requestCounts = struct {
	mu       sync.Mutex
	sent     map[request]int
	answered map[request]int
}{sent: map[request]int{}, answered: map[request]int{}}

func countRequests(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			sent := request{method: req.Method, path: req.URL.Path}
			requestCounts.mu.Lock()
			requestCounts.sent[sent]++
			requestCounts.mu.Unlock()
			resp, err := next.RoundTrip(req)
			if resp != nil {
				sent.status = resp.StatusCode
				requestCounts.mu.Lock()
				requestCounts.answered[sent]++
				requestCounts.mu.Unlock()
			}
			return resp, err
		})
	})
}

// Requests is how many requests with method the operator under test has sent to paths ending in
// suffix, such as "PATCH" and "/statefulsets/db".
func Requests(method, suffix string) int {
	return countWhere(requestCounts.sent, func(r request) bool { return r.method == method && strings.HasSuffix(r.path, suffix) })
}

// RequestsAnswered is how many requests of the operator under test, of any method, to paths that
// hold part, such as "/namespaces/shop/", the API server answered with status, such as
// http.StatusConflict.
func RequestsAnswered(status int, part string) int {
	return countWhere(requestCounts.answered, func(r request) bool { return r.status == status && strings.Contains(r.path, part) })
}

func countWhere(counts map[request]int, match func(request) bool) int {
	requestCounts.mu.Lock()
	defer requestCounts.mu.Unlock()
	n := 0
	for r, count := range counts {
		if match(r) {
			n += count
		}
	}
	return n
}
