package mysql

import "testing"

// TestProbesAgainstARealServer runs the exact probe commands of the mysqld container against a
// MariaDB server from the distribution's packages (the same client protocol and tools): the local
// cluster simulates pods, so this is where the probes meet a real server.
func TestProbesAgainstARealServer(t *testing.T) {
	server := newMariaDB(t)
	server.start(t)
	run := server.run
	// As the image's entrypoint does at first start: root gets the password from the Secret and
	// may connect over TCP.
	server.asRoot(t, "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY 's3cret';"+
		"GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; ALTER USER 'root'@'localhost' IDENTIFIED BY 's3cret';")

	if err := run(ReadinessCommand, "MYSQL_ROOT_PASSWORD=s3cret"); err != nil {
		t.Errorf("readiness with the right password: %v", err)
	}
	if err := run(ReadinessCommand, "MYSQL_ROOT_PASSWORD=wrong"); err == nil {
		t.Error("readiness passes with a wrong password: it does not test that the server authenticates")
	}
	if err := run(LivenessCommand); err != nil {
		t.Errorf("liveness of a running server that refuses the login: %v", err)
	}
	server.stop()
	if err := run(ReadinessCommand, "MYSQL_ROOT_PASSWORD=s3cret"); err == nil {
		t.Error("readiness passes with the server stopped")
	}
	if err := run(LivenessCommand); err == nil {
		t.Error("liveness passes with the server stopped")
	}
}
