package mysql

import (
	"errors"
	"testing"

	"github.com/appkeeper/appkeeper/internal/replication"
)

func TestAPrimaryIsCutOffOnlyWhenEveryReplicaAnswersAndNoneReceivesFromIt(t *testing.T) {
	primary := replication.Member{Name: "db-0", Source: replication.Source{Host: "db-0.db", Port: 3306}}
	replica := func(name, host, receiving string) replication.View {
		return replication.View{Name: name, Observation: replication.Observation{
			Replica: &replication.ReplicaStatus{SourceHost: host, Receiving: receiving, IOError: "error reconnecting to master"}}}
	}
	primaryView := replication.View{Name: "db-0"}
	cases := []struct {
		name  string
		views []replication.View
		cut   bool
	}{
		{"every replica reconnects to the primary", []replication.View{primaryView,
			replica("db-1", "db-0.db", "Connecting"), replica("db-2", "db-0.db", "Connecting")}, true},
		{"one replica still receives", []replication.View{primaryView,
			replica("db-1", "db-0.db", "Connecting"), replica("db-2", "db-0.db", "Yes")}, false},
		{"a replica cannot be read", []replication.View{primaryView,
			replica("db-1", "db-0.db", "Connecting"), {Name: "db-2", Err: errors.New("timeout")}}, false},
		{"a replica follows another member", []replication.View{primaryView,
			replica("db-1", "db-0.db", "Connecting"), replica("db-2", "db-1.db", "Connecting")}, false},
		{"a replica replicates from no one yet", []replication.View{primaryView,
			replica("db-1", "db-0.db", "Connecting"), {Name: "db-2"}}, false},
		{"a lone primary", []replication.View{primaryView}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why, cut := cutOff(c.views, primary)
			if cut != c.cut {
				t.Fatalf("cut off = %t (%q), want %t", cut, why, c.cut)
			}
			if cut && why != "db-1 is connecting: error reconnecting to master; db-2 is connecting: error reconnecting to master" {
				t.Errorf("why = %q", why)
			}
		})
	}
}
