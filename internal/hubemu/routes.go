package hubemu

import "net/http"

// Paths of the emulator-only API (the public hub has no such routes).
const (
	pathEvents = "/api/emulator/events"
	pathJobs   = PathJobs
)

// Handler returns the emulator's HTTP API. Every route is here.
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
func (e *Emulator) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", handleHealth())
	mux.Handle("GET /api/whoami-v2", e.authed(RoleRead, e.handleWhoami))

	mux.Handle("POST /api/repos/create", e.authed(RoleWrite, e.handleCreateRepo))
	mux.Handle("DELETE /api/repos/delete", e.authed(RoleWrite, e.handleDeleteRepo))
	mux.Handle("GET /api/spaces", e.public(e.handleListSpaces))
	mux.Handle("GET /api/spaces/{owner}/{name}", e.public(e.handleSpaceInfo))
	mux.Handle("POST /api/{type}/{owner}/{name}/preupload/{rev...}", e.authed(RoleWrite, e.handlePreupload))
	mux.Handle("POST /api/{type}/{owner}/{name}/commit/{rev...}", e.authed(RoleWrite, e.handleCommit))
	mux.Handle("POST /api/validate-yaml", e.public(e.handleValidateYAML))
	mux.Handle("GET /api/{type}/{owner}/{name}/revision/{rev...}", e.public(e.handleSpaceRevision))
	mux.Handle("GET /api/{type}/{owner}/{name}/tree/{rev}", e.public(e.handleTree))
	mux.Handle("GET /api/{type}/{owner}/{name}/tree/{rev}/{path...}", e.public(e.handleTree))
	mux.Handle("GET /spaces/{owner}/{name}/resolve/{rev}/{path...}", e.public(e.handleResolve))
	mux.Handle("GET /api/{type}/{owner}/{name}/discussions", e.public(e.handleDiscussions))
	mux.Handle("GET /api/{type}/{owner}/{name}/discussions/{num}", e.public(e.handleDiscussion))
	mux.HandleFunc("GET /spaces/{owner}/{rest...}", e.handleGit)
	mux.HandleFunc("POST /spaces/{owner}/{rest...}", e.handleGit)

	mux.Handle("GET /api/settings/webhooks", e.authed(RoleRead, e.handleListWebhooks))
	mux.Handle("POST /api/settings/webhooks", e.authed(RoleWrite, e.handleCreateWebhook))
	mux.Handle("GET /api/settings/webhooks/{id}", e.authed(RoleRead, e.handleGetWebhook))
	mux.Handle("POST /api/settings/webhooks/{id}", e.authed(RoleWrite, e.handleUpdateWebhook))
	mux.Handle("DELETE /api/settings/webhooks/{id}", e.authed(RoleWrite, e.handleDeleteWebhook))
	mux.Handle("POST /api/settings/webhooks/{id}/enable", e.authed(RoleWrite, e.handleSetDisabled(false)))
	mux.Handle("POST /api/settings/webhooks/{id}/disable", e.authed(RoleWrite, e.handleSetDisabled(true)))

	mux.Handle("POST "+pathEvents, e.authed(RoleWrite, e.handleEmit))
	mux.Handle("GET /api/emulator/webhooks/{id}/activity", e.authed(RoleRead, e.handleActivity))
	mux.Handle("GET /api/emulator/webhooks/{id}/deliveries/{delivery}", e.authed(RoleRead, e.handleDelivery))
	mux.Handle("POST /api/emulator/webhooks/{id}/deliveries/{delivery}/replay", e.authed(RoleWrite, e.handleReplay))
	mux.Handle("GET /api/emulator/webhooks/{id}/runs", e.authed(RoleRead, e.handleJobRuns))
	mux.Handle("GET /api/emulator/runs/{run}", e.authed(RoleRead, e.handleJobRun))
	mux.Handle("POST "+pathJobs, e.authed(RoleWrite, e.handleCreateJob))
	mux.Handle("GET "+pathJobs, e.authed(RoleRead, e.handleListJobs))
	mux.Handle("GET "+pathJobs+"/{id}", e.authed(RoleRead, e.handleGetJob))
	return e.middleware(mux)
}
