package replication_test

import (
	"errors"
	"testing"

	"github.com/appkeeper/appkeeper/internal/replication"
)

func TestOnlyAReplicaOfThePrimaryThatReceivedItsWholeBinaryLogHoldsAWaitingCommit(t *testing.T) {
	primary := replication.Member{Name: "db-0", Source: replication.Source{Host: "db-0.db", Port: 3306}}
	logged := replication.Position{0: {Domain: 0, Server: 100, Seq: 927}}
	replica := func(host string, seq uint64) replication.View {
		return replication.View{Name: "db-1", Observation: replication.Observation{Replica: &replication.ReplicaStatus{
			SourceHost: host, Receiving: "Yes", Received: replication.Position{0: {Domain: 0, Server: 100, Seq: seq}}}}}
	}
	primaryView := replication.View{Name: "db-0", Observation: replication.Observation{Binlog: logged}}
	cases := []struct {
		name  string
		views []replication.View
		held  bool
	}{
		{"a replica received everything", []replication.View{primaryView, replica("db-0.db", 927)}, true},
		{"a replica received beyond, from an earlier read of the primary", []replication.View{primaryView, replica("db-0.db", 930)}, true},
		{"the replica is one behind", []replication.View{primaryView, replica("db-0.db", 926)}, false},
		{"the replica follows another member", []replication.View{primaryView, replica("db-2.db", 927)}, false},
		{"the replica cannot be read", []replication.View{primaryView, {Name: "db-1", Err: errors.New("timeout")}}, false},
		{"the replica replicates from no one", []replication.View{primaryView, {Name: "db-1"}}, false},
		{"a lone primary", []replication.View{primaryView}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if held := replication.ReceivedAll(c.views, primary, logged); held != c.held {
				t.Fatalf("held = %t, want %t", held, c.held)
			}
		})
	}
}
