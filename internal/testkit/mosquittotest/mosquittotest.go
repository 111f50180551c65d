// Package mosquittotest runs Debian's mosquitto on loopback for tests and benchmarks: a TLS
// listener with certificates made here (crypto/x509), per-robot user names and passwords or client
// certificates, and an ACL file, as a fleet runs it (deploy/mosquitto). It skips the test when
// mosquitto is not installed (apt-get install mosquitto; .ci/run installs it).
package mosquittotest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options configure a broker.
type Options struct {
	Users       map[string]string // user name -> password (with TLS, unless ClientCerts)
	ClientCerts []string          // names to make client certificates for; the listener then requires one, and its CN is the user name
	ACL         string            // the acl_file; empty: every client may do everything
	Persistence bool              // keep retained messages and sessions across Restart (autosave on exit)
	NoTLS       bool              // a plain mqtt:// listener (the benchmark, to measure the broker rather than TLS)
	Anonymous   bool              // allow clients without credentials
	Extra       string            // more configuration lines
}

// Broker is a running mosquitto.
type Broker struct {
	URL    string // mqtts://127.0.0.1:PORT (mqtt:// with NoTLS)
	Dir    string
	CAFile string
	port   int
	opts   Options
	t      testing.TB

	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey

	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
}

// Start starts mosquitto with opts; the test's cleanup stops it.
func Start(t testing.TB, opts Options) *Broker {
	t.Helper()
	if testing.Short() {
		t.Skip("starts mosquitto: not under -short")
	}
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		t.Skip("mosquitto is not installed (apt-get install mosquitto)")
	}
	b := &Broker{Dir: t.TempDir(), opts: opts, t: t}
	if !opts.NoTLS {
		b.makeCA()
	}
	b.writeConfig()
	for attempt := 0; ; attempt++ {
		b.port = freePort(t)
		err := b.start(bin)
		if err == nil {
			break
		}
		if attempt == 4 {
			t.Fatalf("mosquitto did not start: %v\n%s", err, b.Log())
		}
	}
	t.Cleanup(b.Stop)
	return b
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (b *Broker) writeConfig() {
	var c strings.Builder
	fmt.Fprintf(&c, "user root\npersistence %v\npersistence_location %s/\nautosave_interval 0\n", b.opts.Persistence, b.Dir)
	fmt.Fprintf(&c, "log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\nconnection_messages true\n")
	fmt.Fprintf(&c, "max_queued_messages 10000\n")
	fmt.Fprintf(&c, "listener PORT 127.0.0.1\n")
	if !b.opts.NoTLS {
		fmt.Fprintf(&c, "cafile %s\ncertfile %s\nkeyfile %s\ntls_version tlsv1.2\n", b.CAFile, filepath.Join(b.Dir, "server.pem"), filepath.Join(b.Dir, "server.key"))
		if len(b.opts.ClientCerts) > 0 {
			fmt.Fprintf(&c, "require_certificate true\nuse_identity_as_username true\n")
		}
	}
	if len(b.opts.Users) > 0 {
		var plain strings.Builder
		for u, p := range b.opts.Users {
			fmt.Fprintf(&plain, "%s:%s\n", u, p)
		}
		pw := filepath.Join(b.Dir, "passwd")
		must(b.t, os.WriteFile(pw, []byte(plain.String()), 0o600))
		if out, err := exec.Command("mosquitto_passwd", "-U", pw).CombinedOutput(); err != nil {
			b.t.Fatalf("mosquitto_passwd -U: %v: %s", err, out)
		}
		fmt.Fprintf(&c, "password_file %s\n", pw)
	}
	if b.opts.ACL != "" {
		acl := filepath.Join(b.Dir, "acl")
		must(b.t, os.WriteFile(acl, []byte(b.opts.ACL), 0o600))
		fmt.Fprintf(&c, "acl_file %s\n", acl)
	}
	// Robots are told apart by their user name (or certificate); a client may not take another's session.
	fmt.Fprintf(&c, "allow_anonymous %v\n", b.opts.Anonymous)
	if len(b.opts.Users) > 0 || len(b.opts.ClientCerts) > 0 {
		fmt.Fprintf(&c, "use_username_as_clientid true\n")
	}
	c.WriteString(b.opts.Extra)
	must(b.t, os.WriteFile(filepath.Join(b.Dir, "mosquitto.conf.in"), []byte(c.String()), 0o600))
}

func (b *Broker) start(bin string) error {
	in, err := os.ReadFile(filepath.Join(b.Dir, "mosquitto.conf.in"))
	if err != nil {
		return err
	}
	conf := filepath.Join(b.Dir, "mosquitto.conf")
	if err := os.WriteFile(conf, []byte(strings.Replace(string(in), "PORT", strconv.Itoa(b.port), 1)), 0o600); err != nil {
		return err
	}
	log, err := os.OpenFile(filepath.Join(b.Dir, "mosquitto.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	scheme := "mqtts"
	if b.opts.NoTLS {
		scheme = "mqtt"
	}
	b.URL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, b.port)
	// Ready when it accepts a connection.
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			log.Close()
			return fmt.Errorf("mosquitto exited: %v", err)
		default:
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", b.port), time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			log.Close()
			return fmt.Errorf("mosquitto did not listen on port %d within 10s", b.port)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.mu.Lock()
	b.cmd, b.log = cmd, log
	b.mu.Unlock()
	go func() {
		<-exited
		log.Close()
	}()
	return nil
}

// Stop stops mosquitto (SIGTERM: it saves its persistence file) and waits for it.
func (b *Broker) Stop() {
	b.mu.Lock()
	cmd := b.cmd
	b.cmd = nil
	b.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Restart stops mosquitto and starts it again on the same port.
func (b *Broker) Restart() {
	b.t.Helper()
	b.Stop()
	bin, _ := exec.LookPath("mosquitto")
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = b.start(bin); err == nil {
			return
		}
	}
	b.t.Fatalf("restarting mosquitto: %v\n%s", err, b.Log())
}

// Pid is mosquitto's process id (0 when stopped).
func (b *Broker) Pid() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil || b.cmd.Process == nil {
		return 0
	}
	return b.cmd.Process.Pid
}

// Log is what mosquitto logged.
func (b *Broker) Log() string {
	data, _ := os.ReadFile(filepath.Join(b.Dir, "mosquitto.log"))
	return string(data)
}

// WaitLog waits until mosquitto's log has a line containing s.
func (b *Broker) WaitLog(s string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		f, err := os.Open(filepath.Join(b.Dir, "mosquitto.log"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.Contains(sc.Text(), s) {
				f.Close()
				return true
			}
		}
		f.Close()
	}
	return false
}

// TLSConfig trusts the broker's CA.
func (b *Broker) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(b.caCert)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// ClientCert writes a client certificate for name (its CN, which the broker takes as the user
// name) signed by the broker's CA, and returns the certificate and key files.
func (b *Broker) ClientCert(name string) (certFile, keyFile string) {
	certFile, keyFile = filepath.Join(b.Dir, name+".pem"), filepath.Join(b.Dir, name+".key")
	b.issue(name, nil, certFile, keyFile, x509.ExtKeyUsageClientAuth)
	return certFile, keyFile
}

func (b *Broker) makeCA() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(b.t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "robothub test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(b.t, err)
	b.caCert, err = x509.ParseCertificate(der)
	must(b.t, err)
	b.caKey = key
	b.CAFile = filepath.Join(b.Dir, "ca.pem")
	must(b.t, os.WriteFile(b.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	b.issue("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		filepath.Join(b.Dir, "server.pem"), filepath.Join(b.Dir, "server.key"), x509.ExtKeyUsageServerAuth)
	for _, name := range b.opts.ClientCerts {
		b.ClientCert(name)
	}
}

var serial = struct {
	sync.Mutex
	n int64
}{n: 1}

func (b *Broker) issue(cn string, ips []net.IP, certFile, keyFile string, usage x509.ExtKeyUsage) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(b.t, err)
	serial.Lock()
	serial.n++
	n := serial.n
	serial.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(n), Subject: pkix.Name{CommonName: cn}, IPAddresses: ips, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, b.caCert, &key.PublicKey, b.caKey)
	must(b.t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	must(b.t, err)
	must(b.t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(b.t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FleetACL is deploy/mosquitto/robothub.acl, the ACL the project ships, with a block per robot
// giving it the wave topics of its apps' spaces (robot -> spaces).
func FleetACL(t testing.TB, robots map[string][]string) string {
	t.Helper()
	dir, err := os.Getwd()
	must(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("mosquittotest: no go.mod above the test's directory")
		}
		dir = parent
	}
	data, err := os.ReadFile(filepath.Join(dir, "deploy", "mosquitto", "robothub.acl"))
	must(t, err)
	var acl strings.Builder
	acl.Write(data)
	names := make([]string, 0, len(robots))
	for r := range robots {
		names = append(names, r)
	}
	slices.Sort(names)
	for _, r := range names {
		fmt.Fprintf(&acl, "\nuser %s\n", r)
		for _, space := range robots[r] {
			fmt.Fprintf(&acl, "topic read robothub/v1/spaces/%s/wave/+\n", space)
		}
	}
	return acl.String()
}
