// Package fleetagent is the robot daemon's side of a fleet: its settings and variables (the
// flags are robot-daemon's, in robotd/cmd/robotdaemon), the MQTT connection (adapters/mqtt), and
// core/fleet's agent run over the daemon's app manager, so that a push to an installed app's space
// updates it on the robot.
package fleetagent

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/version"
	"github.com/robothub/robothub/internal/machineid"
)

// Settings are the fleet's flags as given (robot-daemon's --fleet, --fleet-id and the rest, in
// robotd/cmd/robotdaemon); "" for one not given, which Resolve then takes from its variable.
type Settings struct {
	URL, ID, Name, Username, PasswordFile string
	CA, Cert, Key                         string // PEM files
}

// Config is what the fleet settings and variables resolve to; the zero Config joins no fleet.
type Config struct {
	url, id, name, username, password string
	tlsFiles                          [3]string // ca, cert, key
	idWarning                         string    // why the default id may not be unique; "" when it is
}

var hostnameID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Resolve resolves the fleet settings s over the variables getenv reads (for the systemd unit's
// /etc/robot-daemon/env), and takes the broker password out of the process environment, which
// apps inherit. Its errors name the flag.
func Resolve(s Settings, getenv func(string) string) (Config, error) {
	f := Config{url: cmp.Or(s.URL, getenv("ROBOT_FLEET_URL"))}
	if f.url == "" {
		return f, nil
	}
	host, _ := os.Hostname()
	f.id = cmp.Or(s.ID, getenv("ROBOT_FLEET_ID"))
	if f.id == "" {
		// Not the host name: robots flashed from one image share it (the anchor's are all
		// reachy-mini.local), and robots sharing an id take each other's MQTT session.
		if hw, _ := machineid.ID(); hw != "" {
			f.id = "robot-" + hw
		} else {
			f.id = strings.Trim(hostnameID.ReplaceAllString(strings.ToLower(host), "-"), "-._")
			f.idWarning = fmt.Sprintf("this machine has no machine id (%s): the fleet id defaults to the host name %q, which robots flashed from one image share; give each robot its own --fleet-id",
				strings.Join(machineid.Sources, ", "), f.id)
		}
	}
	if err := fleet.CheckRobotID(f.id); err != nil {
		return f, fmt.Errorf("--fleet-id: %w", err)
	}
	f.name = cmp.Or(s.Name, host, f.id)
	f.username = cmp.Or(s.Username, getenv("ROBOT_FLEET_USERNAME"))
	f.password = getenv("ROBOT_FLEET_PASSWORD")
	// Apps and their installs start with the daemon's environment (core/apps): the broker password
	// must not reach them (an app from the hub could speak for the robot with it).
	_ = os.Unsetenv("ROBOT_FLEET_PASSWORD")
	if file := cmp.Or(s.PasswordFile, getenv("ROBOT_FLEET_PASSWORD_FILE")); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return f, fmt.Errorf("--fleet-password-file: %w", err)
		}
		f.password = strings.TrimSpace(string(data))
	}
	if f.username == "" && f.password != "" {
		f.username = f.id
	}
	f.tlsFiles = [3]string{cmp.Or(s.CA, getenv("ROBOT_FLEET_CA")), cmp.Or(s.Cert, getenv("ROBOT_FLEET_CERT")),
		cmp.Or(s.Key, getenv("ROBOT_FLEET_KEY"))}
	if _, _, _, err := mqtt.ParseURL(f.url); err != nil {
		return f, fmt.Errorf("--fleet: %w", err)
	}
	return f, nil
}

// Start joins the fleet: the agent of core/fleet over a persistent MQTT session. It returns
// a function that leaves it (the presence goes offline, the session stays for the next start).
//
// releases updates the daemon itself when a daemon release is announced (nil: ignored).
func Start(ctx context.Context, f Config, mgr *apps.Manager, releases fleet.Releases, hubURL, hubToken string, log *slog.Logger) (func(), error) {
	log = log.With("component", "fleet")
	if f.idWarning != "" {
		log.Warn(f.idWarning)
	}
	var tlsCfg *tls.Config
	if f.tlsFiles != [3]string{} {
		t, err := mqtt.TLSFiles(f.tlsFiles[0], f.tlsFiles[1], f.tlsFiles[2])
		if err != nil {
			return nil, fmt.Errorf("--fleet: %w", err)
		}
		tlsCfg = t
	}
	agent, err := fleet.NewAgent(fleet.AgentConfig{
		Robot: f.id, Name: f.name, Daemon: version.String(), Apps: fleetApps{mgr}, Releases: releases,
		Hub: fleet.HubCheck{TokenHub: hubURL, Token: hubToken, Client: &http.Client{Timeout: 30 * time.Second}},
		Log: log,
		OnCatalog: func(c fleet.CatalogChange) {
			mgr.RefreshCatalog()
			log.Info("fleet: an app of the store was pushed: the catalog is fetched afresh", "space", c.Space, "revision", c.Revision)
		},
	})
	if err != nil {
		return nil, err
	}
	topics := fleet.Topics{}
	// The connection outlives ctx so that leaving can say offline; the returned function closes it.
	client, err := mqtt.ConnectAgent(context.WithoutCancel(ctx), mqtt.Config{
		URL: f.url, ClientID: f.id, Username: f.username, Password: f.password, TLS: tlsCfg, Logger: log,
		// Another robot joined with this id: say so where the operator looks, and leave the
		// session to it rather than take it back (each would be thrown out in turn, forever).
		OnTakenOver: func() {
			mgr.Warn(fmt.Sprintf("fleet: another robot joined the fleet with this robot's id %s and took its session: this robot left the fleet rather than fight for it; give each robot its own --fleet-id (the default, robot-<hardware id>, is unique per robot) and restart",
				f.id))
		},
	}, agent, f.id, topics)
	if err != nil {
		return nil, fmt.Errorf("--fleet: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = agent.Run(runCtx); close(done) }()
	log.Info("joining the fleet", "broker", client.Broker(), "robot", f.id, "bucket", agent.Bucket())
	return func() {
		cancel()
		<-done
		bye, stop := context.WithTimeout(context.Background(), 3*time.Second)
		defer stop()
		if err := client.Leave(bye, agent, f.id, topics); err != nil {
			log.Warn("fleet: leaving", "err", err)
		}
	}, nil
}

// fleetApps is the fleet agent's view of the app lifecycle: core/apps.Manager, whose update job is
// the one robot-update starts.
type fleetApps struct{ m *apps.Manager }

func (a fleetApps) Installed() []fleet.InstalledApp {
	var out []fleet.InstalledApp
	for _, info := range a.m.List() {
		if info.Extra.SourceKind == apps.SourceHubSpace {
			out = append(out, fleet.InstalledApp{Name: info.Name, Source: info.Extra.Source, Revision: info.Extra.Revision})
		}
	}
	return out
}

func (a fleetApps) Running() string {
	if st := a.m.Status(); st != nil && st.State.Active() {
		return st.Info.Name
	}
	return ""
}

func (a fleetApps) Update(ctx context.Context, source, revision string) error {
	job, err := a.m.Update(source, revision)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- job.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errors.New("the daemon is stopping")
	}
}

// Enabled reports whether the daemon joins a fleet (--fleet or ROBOT_FLEET_URL).
func (f Config) Enabled() bool { return f.url != "" }
