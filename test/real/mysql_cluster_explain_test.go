//go:build real

package real

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	mysqlresources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// explainStall logs what each member's server says of its replication and its busy sessions, read
// at the member's own address as the operator reads it: when writes stall, the server's view says
// whether they wait for an acknowledgement, a lock or nothing the operator can see.
func (c *clusterUnderTest) explainStall(m *appsv1alpha1.MySQL) {
	c.t.Helper()
	password := secretData(c.t, c.ns, m.ClusterAccountSecretName())[appsv1alpha1.SecretKeyPassword]
	for _, member := range m.Status.Members {
		pod := getPod(c.t, c.ns, member.Name)
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net = mysqlresources.ClusterUser, password, "tcp"
		cfg.Addr = net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(appsv1alpha1.MySQLPort))
		cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 5*time.Second
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			c.t.Logf("%s: %v", member.Name, err)
			continue
		}
		db := sql.OpenDB(connector)
		c.t.Logf("%s (%s) says:\n%s", member.Name, member.Role, serverView(db))
		_ = db.Close()
	}
}

// serverView is what a server says of its positions, its semi-synchronous replication, its
// replication threads and its sessions that are not idle.
func serverView(db *sql.DB) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	queries := []string{
		"SELECT @@gtid_binlog_pos, @@gtid_current_pos, @@gtid_slave_pos, @@read_only, @@rpl_semi_sync_master_enabled",
		"SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_%'",
		"SHOW ALL SLAVES STATUS",
		"SELECT ID, USER, HOST, COMMAND, TIME, STATE, LEFT(INFO, 80) FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Sleep'",
	}
	for _, q := range queries {
		fmt.Fprintf(&b, "  %s\n", q)
		if err := writeRows(ctx, db, q, &b); err != nil {
			fmt.Fprintf(&b, "    %v\n", err)
		}
	}
	return b.String()
}

// writeRows writes each row of query as column=value pairs, leaving out empty values.
func writeRows(ctx context.Context, db *sql.DB, query string, b *strings.Builder) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	columns, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		values := make([]sql.NullString, len(columns))
		pointers := make([]any, len(columns))
		for i := range values {
			pointers[i] = &values[i]
		}
		if err := rows.Scan(pointers...); err != nil {
			return err
		}
		var pairs []string
		for i, v := range values {
			if v.Valid && v.String != "" {
				pairs = append(pairs, columns[i]+"="+v.String)
			}
		}
		fmt.Fprintf(b, "    %s\n", strings.Join(pairs, " "))
	}
	return rows.Err()
}
