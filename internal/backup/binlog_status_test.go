package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// The shipper of a primary says how far it shipped and what the archive can replay; that of a
// replica says it does not ship.
func TestTheShipperTellsHowFarItShipped(t *testing.T) {
	primary := startMariaDB(t, clusterArgs(7)...)
	replica := startMariaDB(t, append(clusterArgs(8), "--read-only")...)
	primary.exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")
	store := archiveStore{target: Target{Volume: t.TempDir()}}
	addresses := map[string]string{}
	for name, m := range map[string]*mariadb{"primary": primary, "replica": replica} {
		addresses[name] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- Ship(ctx, ShipOptions{Target: store.at("ns/db/binlog"), Connection: m.rootConnection(),
				Interval: 100 * time.Millisecond, StatusAddress: addresses[name]})
		}()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("ship: %v", err)
			}
		})
	}
	w := startWriter(t, primary)
	w.writeFor(500 * time.Millisecond)
	last := w.rows[len(w.rows)-1]
	waitShipped(t, primary, store, "ns/db/binlog")

	var status ShipperStatus
	deadline := time.Now().Add(10 * time.Second)
	for {
		status = readStatus(t, addresses["primary"])
		if status.LastShipped == last.gtid.String() || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !status.Shipping || status.Session == "" || status.LastShipped != last.gtid.String() || status.Error != "" {
		t.Fatalf("the primary's shipper says %+v; want it shipping, through %s", status, last.gtid)
	}
	if status.ArchiveAfter != 0 || status.ArchiveLast != last.gtid.Seq || status.ArchiveLastTime == nil || status.LagSeconds > 1 {
		t.Errorf("the primary's shipper says the archive replays %d to %d (at %v), lag %.1fs; want 0 to %d, lag under a second",
			status.ArchiveAfter, status.ArchiveLast, status.ArchiveLastTime, status.LagSeconds, last.gtid.Seq)
	}
	if replica := readStatus(t, addresses["replica"]); replica.Shipping || replica.LastShipped != "" {
		t.Errorf("the replica's shipper says %+v; want it not shipping", replica)
	}
}

func readStatus(t *testing.T, address string) ShipperStatus {
	t.Helper()
	resp, err := http.Get("http://" + address + ShipperStatusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var status ShipperStatus
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
		t.Fatal(err)
	}
	return status
}
