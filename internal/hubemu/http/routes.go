package http

import (
	"net/http"

	"github.com/robothub/robothub/internal/hubemu"
)

// Paths of the emulator-only API (the public hub has no such routes).
const (
	pathEvents = "/api/emulator/events"
	pathJobs   = hubemu.PathJobs
)

// routes is the hub's HTTP API: every route is here.
//
// The hub's own API, with the public hub's paths, shapes and {"error": ...} bodies:
//
//	GET    /api/whoami-v2                              the token's user and its role
//	POST   /api/repos/create                           create a space   -> {"url","name","id"}
//	DELETE /api/repos/delete                           delete a space   -> {}
//	GET    /api/spaces?filter=&author=&search=&limit=  spaces (no token needed) -> a bare array
//	GET    /api/spaces/{owner}/{name}                  one space
//	POST   /api/spaces/{owner}/{name}/preupload/{rev}  how each file of a commit is sent (regular)
//	POST   /api/spaces/{owner}/{name}/commit/{rev}     a commit: NDJSON files and deletions
//	POST   /api/validate-yaml                          check README.md's front matter
//	GET    /api/spaces/{owner}/{name}/revision/{rev}   the space at a revision (sha, files, card)
//	GET    /api/spaces/{owner}/{name}/tree/{rev}[/{path}]  a folder's entries, pages linked by Link
//	GET    /spaces/{owner}/{name}/resolve/{rev}/{path}  a file (X-Repo-Commit, ETag, ranges); HEAD too
//	GET    /api/datasets/{owner}/{name}/revision/{rev} a dataset of localhub.Config.DatasetsDir (read only)
//	GET    /datasets/{owner}/{name}/resolve/{rev}/{path}  one of its files
//	GET    /api/models/{owner}/{name}/revision/{rev}   a model of localhub.Config.ModelsDir (read only)
//	GET    /{owner}/{name}/resolve/{rev}/{path}        one of its files (modelRoutes)
//	GET    /api/{type}/{owner}/{name}/discussions      discussions made by emitted events, newest first
//	GET    /api/{type}/{owner}/{name}/discussions/{num} one, with its comments and changes
//	GET    /spaces/{owner}/{name}[.git]/...            git clone and fetch (git http-backend)
//	POST   /spaces/{owner}/{name}[.git]/...            git fetch and push (push: the owner's write token)
//	GET    /api/settings/webhooks                      the caller's webhooks (a bare array)
//	POST   /api/settings/webhooks                      create    -> {"webhook": {...}}
//	GET    /api/settings/webhooks/{id}                 one       -> {"webhook": {...}}
//	POST   /api/settings/webhooks/{id}                 update    -> {"webhook": {...}}
//	DELETE /api/settings/webhooks/{id}                 delete    -> 204
//	POST   /api/settings/webhooks/{id}/enable          enable    -> {"webhook": {...}}
//	POST   /api/settings/webhooks/{id}/disable         disable   -> {"webhook": {...}}
//
// Emulator only:
//
//	POST   /api/emulator/events                                  emit an event -> its deliveries
//	GET    /api/emulator/webhooks/{id}/activity                  deliveries with their attempts
//	GET    /api/emulator/webhooks/{id}/deliveries/{delivery}     one delivery with its payload
//	POST   /api/emulator/webhooks/{id}/deliveries/{delivery}/replay
//	GET    /api/emulator/webhooks/{id}/runs                      job runs of a job webhook
//	GET    /api/emulator/runs/{run}                              one job run with its log
//	POST   /api/emulator/jobs                                    create a source job
//	GET    /api/emulator/jobs                                    the caller's source jobs
//	GET    /api/emulator/jobs/{id}                               one source job
//	GET    /healthz                                              readiness
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", handleHealth())
	mux.Handle("GET /api/whoami-v2", s.authed(hubemu.RoleRead, s.handleWhoami))

	mux.Handle("POST /api/repos/create", s.authed(hubemu.RoleWrite, s.handleCreateRepo))
	mux.Handle("DELETE /api/repos/delete", s.authed(hubemu.RoleWrite, s.handleDeleteRepo))
	mux.Handle("GET /api/spaces", s.public(s.handleListSpaces))
	mux.Handle("GET /api/spaces/{owner}/{name}", s.public(s.handleSpaceInfo))
	mux.Handle("POST /api/{type}/{owner}/{name}/preupload/{rev...}", s.authed(hubemu.RoleWrite, s.handlePreupload))
	mux.Handle("POST /api/{type}/{owner}/{name}/commit/{rev...}", s.authed(hubemu.RoleWrite, s.handleCommit))
	mux.Handle("POST /api/validate-yaml", s.public(s.handleValidateYAML))
	mux.Handle("GET /api/{type}/{owner}/{name}/revision/{rev...}", s.public(s.handleSpaceRevision))
	mux.Handle("GET /api/{type}/{owner}/{name}/tree/{rev}", s.public(s.handleTree))
	mux.Handle("GET /api/{type}/{owner}/{name}/tree/{rev}/{path...}", s.public(s.handleTree))
	mux.Handle("GET /spaces/{owner}/{name}/resolve/{rev}/{path...}", s.public(s.handleResolve))
	mux.Handle("GET /api/datasets/{owner}/{name}/revision/{rev...}", s.public(s.datasets.handleRevision))
	mux.Handle("GET /datasets/{owner}/{name}/resolve/{rev}/{path...}", s.public(s.datasets.handleResolve))
	mux.Handle("GET /api/models/{owner}/{name}/revision/{rev...}", s.public(s.models.handleRevision))
	mux.Handle("GET /api/{type}/{owner}/{name}/discussions", s.public(s.handleDiscussions))
	mux.Handle("GET /api/{type}/{owner}/{name}/discussions/{num}", s.public(s.handleDiscussion))
	mux.HandleFunc("GET /spaces/{owner}/{rest...}", s.handleGit)
	mux.HandleFunc("POST /spaces/{owner}/{rest...}", s.handleGit)

	mux.Handle("GET /api/settings/webhooks", s.authed(hubemu.RoleRead, s.handleListWebhooks))
	mux.Handle("POST /api/settings/webhooks", s.authed(hubemu.RoleWrite, s.handleCreateWebhook))
	mux.Handle("GET /api/settings/webhooks/{id}", s.authed(hubemu.RoleRead, s.handleGetWebhook))
	mux.Handle("POST /api/settings/webhooks/{id}", s.authed(hubemu.RoleWrite, s.handleUpdateWebhook))
	mux.Handle("DELETE /api/settings/webhooks/{id}", s.authed(hubemu.RoleWrite, s.handleDeleteWebhook))
	mux.Handle("POST /api/settings/webhooks/{id}/enable", s.authed(hubemu.RoleWrite, s.handleSetDisabled(false)))
	mux.Handle("POST /api/settings/webhooks/{id}/disable", s.authed(hubemu.RoleWrite, s.handleSetDisabled(true)))

	mux.Handle("POST "+pathEvents, s.authed(hubemu.RoleWrite, s.handleEmit))
	mux.Handle("GET /api/emulator/webhooks/{id}/activity", s.authed(hubemu.RoleRead, s.handleActivity))
	mux.Handle("GET /api/emulator/webhooks/{id}/deliveries/{delivery}", s.authed(hubemu.RoleRead, s.handleDelivery))
	mux.Handle("POST /api/emulator/webhooks/{id}/deliveries/{delivery}/replay", s.authed(hubemu.RoleWrite, s.handleReplay))
	mux.Handle("GET /api/emulator/webhooks/{id}/runs", s.authed(hubemu.RoleRead, s.handleJobRuns))
	mux.Handle("GET /api/emulator/runs/{run}", s.authed(hubemu.RoleRead, s.handleJobRun))
	mux.Handle("POST "+pathJobs, s.authed(hubemu.RoleWrite, s.handleCreateJob))
	mux.Handle("GET "+pathJobs, s.authed(hubemu.RoleRead, s.handleListJobs))
	mux.Handle("GET "+pathJobs+"/{id}", s.authed(hubemu.RoleRead, s.handleGetJob))
	return mux
}

// modelRoutes serves a model's files, which are at the root: their pattern overlaps
// /spaces/.../resolve/... and /datasets/.../resolve/... with neither more specific, so it has a mux
// of its own, which the middleware asks when no route of routes matches.
func (s *Server) modelRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /{owner}/{name}/resolve/{rev}/{path...}", s.public(s.models.handleResolve))
	return mux
}
