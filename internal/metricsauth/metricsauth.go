// Package metricsauth guards the metrics endpoint the way the API server guards its own: the
// caller's bearer token is checked with a TokenReview and its right to GET the path with a
// SubjectAccessReview. Decisions are cached briefly, so a scraper costs the API server two requests
// every few minutes rather than two per scrape.
//
// It stands in for controller-runtime's filter built on k8s.io/apiserver, which links about 260
// more packages (gRPC, OpenTelemetry, CEL) into the manager; their code pages alone cost the
// process about 9 MiB of resident memory.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long decisions are remembered: an allowed caller for minutes, a refused one only briefly,
// so that a newly granted role takes effect soon.
const (
	authenticatedTTL = time.Minute
	allowedTTL       = 5 * time.Minute
	deniedTTL        = 30 * time.Second
	reviewTimeout    = 10 * time.Second
	// maxCached bounds each cache; a scraper uses one token, so the bound is only reached by
	// callers trying many tokens, and then the cache starts over.
	maxCached = 1024
)

// NewFilter is a metricsserver.FilterProvider: it asks the API server at config who a caller is and
// whether it may read the metrics.
func NewFilter(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	clientset, err := kubernetes.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	g := &guard{clientset: clientset, users: newTTLCache[userInfo](), decisions: newTTLCache[bool]()}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			status, err := g.check(req)
			switch {
			case err != nil:
				log.Error(err, "cannot check a metrics request", "path", req.URL.Path)
				http.Error(w, "cannot check the request with the API server", http.StatusInternalServerError)
			case status != http.StatusOK:
				http.Error(w, http.StatusText(status), status)
			default:
				next.ServeHTTP(w, req)
			}
		}), nil
	}, nil
}

// userInfo is who a token belongs to; a zero value means the token was not accepted.
type userInfo struct {
	authenticated bool
	user          authenticationv1.UserInfo
}

type guard struct {
	clientset kubernetes.Interface
	users     *ttlCache[userInfo]
	decisions *ttlCache[bool]
}

// check returns the HTTP status the request deserves: 401 without a valid token, 403 when its user
// may not use verb on the path, 200 otherwise.
func (g *guard) check(req *http.Request) (int, error) {
	token, ok := bearerToken(req)
	if !ok {
		return http.StatusUnauthorized, nil
	}
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	tokenKey := fmt.Sprintf("%x", sha256.Sum256([]byte(token)))
	user, found := g.users.get(tokenKey)
	if !found {
		var err error
		if user, err = g.authenticate(ctx, token); err != nil {
			return 0, err
		}
		g.users.put(tokenKey, user, authenticatedTTL)
	}
	if !user.authenticated {
		return http.StatusUnauthorized, nil
	}
	verb := strings.ToLower(req.Method)
	decisionKey := strings.Join([]string{user.user.UID, user.user.Username, verb, req.URL.Path}, "\x00")
	allowed, found := g.decisions.get(decisionKey)
	if !found {
		var err error
		if allowed, err = g.authorize(ctx, user.user, verb, req.URL.Path); err != nil {
			return 0, err
		}
		ttl := deniedTTL
		if allowed {
			ttl = allowedTTL
		}
		g.decisions.put(decisionKey, allowed, ttl)
	}
	if !allowed {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

func (g *guard) authenticate(ctx context.Context, token string) (userInfo, error) {
	review, err := g.clientset.AuthenticationV1().TokenReviews().Create(ctx,
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return userInfo{}, fmt.Errorf("token review: %w", err)
	}
	return userInfo{authenticated: review.Status.Authenticated, user: review.Status.User}, nil
}

func (g *guard) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (bool, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	review, err := g.clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("subject access review: %w", err)
	}
	return review.Status.Allowed && !review.Status.Denied, nil
}

// ttlCache is a map whose entries expire.
type ttlCache[V any] struct {
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
	now     func() time.Time
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func newTTLCache[V any]() *ttlCache[V] {
	return &ttlCache[V]{entries: map[string]ttlEntry[V]{}, now: time.Now}
}

func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[V]) put(key string, value V, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCached {
		clear(c.entries)
	}
	c.entries[key] = ttlEntry[V]{value: value, expires: c.now().Add(ttl)}
}
