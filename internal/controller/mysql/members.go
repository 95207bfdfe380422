package mysql

import (
	"database/sql"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/replication"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// memberDialTimeout bounds a connection to a member: a member that does not answer within it is
// taken as unreadable, so that a failed primary is noticed in about a second.
const memberDialTimeout = time.Second

// memberPools keeps one small connection pool per member pod, by pod, for as long as the pod keeps
// its address and the account its password.
type memberPools struct {
	mu    sync.Mutex
	pools map[types.NamespacedName]memberPool
}

type memberPool struct {
	uid      types.UID
	address  string
	password string
	db       *sql.DB
}

// member is the member pod runs, reached at its address as the replication account, and reached
// by the other members at its stable name under the headless Service. A pod without an address
// yields a member that cannot be read.
func (p *memberPools) member(m *appsv1alpha1.MySQL, pod *corev1.Pod, password string) replication.Member {
	source := replication.Source{
		Host: m.MemberHost(pod.Name),
		Port: appsv1alpha1.MySQLPort, User: resources.ClusterUser, Password: password,
	}
	member := replication.Member{Name: pod.Name, Source: source}
	if pod.Status.PodIP == "" || pod.DeletionTimestamp != nil {
		return member
	}
	address := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(appsv1alpha1.MySQLPort))
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pools == nil {
		p.pools = map[types.NamespacedName]memberPool{}
	}
	if pool, ok := p.pools[key]; ok {
		if pool.uid == pod.UID && pool.address == address && pool.password == password {
			member.DB = pool.db
			return member
		}
		_ = pool.db.Close()
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = resources.ClusterUser, password, "tcp", address
	cfg.Timeout = memberDialTimeout
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return member
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	p.pools[key] = memberPool{uid: pod.UID, address: address, password: password, db: db}
	member.DB = db
	return member
}

// forget closes the pools of the members of the MySQL named instance whose pods are not in keep.
func (p *memberPools) forget(namespace, instance string, keep map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, pool := range p.pools {
		if key.Namespace == namespace && isMemberOf(key.Name, instance) && !keep[key.Name] {
			_ = pool.db.Close()
			delete(p.pools, key)
		}
	}
}

// isMemberOf tells whether a pod name is <instance>-<ordinal>.
func isMemberOf(pod, instance string) bool {
	if len(pod) <= len(instance)+1 || pod[:len(instance)] != instance || pod[len(instance)] != '-' {
		return false
	}
	_, err := strconv.Atoi(pod[len(instance)+1:])
	return err == nil
}
