package replication

import (
	"errors"
	"testing"
)

func mustPosition(t *testing.T, s string) Position {
	t.Helper()
	p, err := ParsePosition(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParsePosition(t *testing.T) {
	p := mustPosition(t, "0-11-590, 1-12-7")
	if p.Seq(0) != 590 || p[1].Server != 12 || p.String() != "0-11-590,1-12-7" {
		t.Fatalf("parsed %v", p)
	}
	if len(mustPosition(t, "")) != 0 {
		t.Fatal("the empty string is the empty position")
	}
	for _, bad := range []string{"0-11", "a-b-c", "0-1-2,0-1-3", "0-1-2-3"} {
		if _, err := ParsePosition(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if !mustPosition(t, "0-1-9").Covers(mustPosition(t, "0-2-9")) || mustPosition(t, "0-1-8").Covers(mustPosition(t, "0-1-9")) {
		t.Fatal("Covers compares sequences")
	}
}

func replica(t *testing.T, name string, serverID uint32, binlog, applied, received string) View {
	return View{Name: name, Observation: Observation{ServerID: serverID, Binlog: mustPosition(t, binlog), Applied: mustPosition(t, applied),
		Replica: &ReplicaStatus{Received: mustPosition(t, received)}}}
}

func TestSuccessor(t *testing.T) {
	unread := View{Name: "c", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		name           string
		replicas       []View
		acceptDataLoss bool
		want, blocked  string
	}{{
		name:     "the replica that received the most wins, not the one that applied the most",
		replicas: []View{replica(t, "a", 101, "0-100-50", "0-100-50", "0-100-50"), replica(t, "b", 102, "0-100-40", "0-100-40", "0-100-60")},
		want:     "b",
	}, {
		name:     "a tie goes to the first name",
		replicas: []View{replica(t, "b", 102, "0-100-5", "0-100-5", "0-100-5"), replica(t, "a", 101, "0-100-5", "0-100-5", "0-100-5")},
		want:     "a",
	}, {
		name:     "a replica that cannot be read may hold the last acknowledged write",
		replicas: []View{replica(t, "a", 101, "0-100-5", "0-100-5", "0-100-5"), unread},
		blocked:  ReasonCannotProveNoLoss,
	}, {
		name:           "unless a person accepts the loss",
		replicas:       []View{replica(t, "a", 101, "0-100-5", "0-100-5", "0-100-5"), unread},
		acceptDataLoss: true,
		want:           "a",
	}, {
		name:     "a replica with writes of its own is never promoted",
		replicas: []View{replica(t, "a", 101, "0-101-9", "0-100-8", "0-100-8"), replica(t, "b", 102, "0-100-7", "0-100-7", "0-100-7")},
		want:     "b",
	}, {
		name:     "a former primary's own writes up to the fork are history, not errant",
		replicas: []View{replica(t, "a", 101, "0-101-5", "", "")},
		want:     "a",
	}, {
		name:     "and when no other can be, nothing is",
		replicas: []View{replica(t, "a", 101, "0-101-9", "0-100-8", "0-100-8")},
		blocked:  ReasonNoCandidate,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Successor(tc.replicas, mustPosition(t, "0-100-5"), tc.acceptDataLoss)
			var blocked *Blocked
			switch {
			case tc.blocked != "":
				if !errors.As(err, &blocked) || blocked.Reason != tc.blocked {
					t.Fatalf("got %v, %v; want blocked for %s", got.Name, err, tc.blocked)
				}
			case err != nil || got.Name != tc.want:
				t.Fatalf("got %q, %v; want %q", got.Name, err, tc.want)
			}
		})
	}
}
