// Package spaces is the hub's spaces: git repositories that their owner creates, pushes to, commits
// to through the commit API (without git), and deletes; that anyone lists, clones and downloads
// from when public; whose README's tags make the robot app catalog. Every change is announced as
// the hub's event (repo create, repo.content update, repo delete). The repositories themselves are
// behind the Git interface (internal/hubemu/git); what the hub records of them is in its Store.
package spaces

import (
	"log/slog"
	"strings"

	"github.com/robothub/robothub/internal/hubemu"
)

// Service is the hub's spaces.
type Service struct {
	hub       *hubemu.Emulator
	db        hubemu.Store
	git       Git
	log       *slog.Logger
	publicURL string
	locks     spaceLocks
}

// New returns the spaces of hub, kept in db and git.
func New(hub *hubemu.Emulator, db hubemu.Store, git Git) *Service {
	return &Service{hub: hub, db: db, git: git, log: hub.Logger(), publicURL: strings.TrimRight(hub.PublicURL(), "/")}
}

// Git returns the spaces' repositories.
func (s *Service) Git() Git { return s.git }
