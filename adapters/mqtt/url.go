package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
)

// ParseURL reads a broker URL: mqtt:// (port 1883), mqtts:// (8883, TLS), ws:// (80) or wss://
// (443, TLS), with a path for WebSockets (AWS IoT Core's is /mqtt). It returns the URL without
// its user info, and that user name and password.
func ParseURL(raw string) (u *url.URL, user, pass string, err error) {
	u, err = url.Parse(raw)
	if err != nil {
		return nil, "", "", fmt.Errorf("broker URL: %v", redactParseError(err))
	}
	ports := map[string]string{"mqtt": "1883", "mqtts": "8883", "ws": "80", "wss": "443"}
	port, ok := ports[u.Scheme]
	if !ok || u.Host == "" {
		return nil, "", "", fmt.Errorf("broker URL %s: want mqtt://, mqtts://, ws:// or wss:// with a host, such as mqtts://broker.example.com:8883", Redact(u))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, "", "", fmt.Errorf("broker URL %s: takes no query or fragment", Redact(u))
	}
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	c := *u
	c.User = nil
	if c.Port() == "" {
		c.Host = net.JoinHostPort(c.Hostname(), port)
	}
	return &c, user, pass, nil
}

// Redact is u without its password.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Redacted()
}

func redactParseError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err // without the URL, which may hold a password
	}
	return err
}

// TLSFiles is the TLS of a broker connection from files: ca, the certificates to trust (empty: the
// system's); cert and key, the client's certificate (AWS IoT Core's way of telling devices apart).
func TLSFiles(ca, cert, key string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("broker CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("broker CA %s: no PEM certificate in it", ca)
		}
		cfg.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("a client certificate needs both its certificate and its key file")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
