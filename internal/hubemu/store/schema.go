package store

// migrations are applied in order, each once, in its own transaction; PRAGMA user_version records
// how many have run. Append new ones; never edit one that has shipped.
var migrations = []string{
	// 1: users and tokens, repos, source jobs, webhooks, events, deliveries and their attempts, job runs.
	`
CREATE TABLE users (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	kind       TEXT NOT NULL DEFAULT 'user',          -- user | org
	created_at INTEGER NOT NULL
);
CREATE TABLE tokens (
	hash       TEXT PRIMARY KEY,                      -- sha256 of the token; the token is not stored
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name       TEXT NOT NULL,
	role       TEXT NOT NULL,                         -- read | write
	created_at INTEGER NOT NULL
);
CREATE TABLE repos (
	id               TEXT PRIMARY KEY,
	type             TEXT NOT NULL,                   -- model | dataset | space | bucket
	name             TEXT NOT NULL,                   -- owner/name
	owner_id         TEXT NOT NULL REFERENCES users(id),
	private          INTEGER NOT NULL DEFAULT 0,
	head_sha         TEXT NOT NULL DEFAULT '',
	discussion_count INTEGER NOT NULL DEFAULT 0,
	created_at       INTEGER NOT NULL,
	UNIQUE (type, name)
);
CREATE TABLE source_jobs (
	id          TEXT PRIMARY KEY,
	user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	command     TEXT NOT NULL,                        -- JSON array: program and arguments
	environment TEXT NOT NULL DEFAULT '{}',           -- JSON object
	secrets     TEXT NOT NULL DEFAULT '{}',           -- JSON object: the job's own; never copied to webhooks
	created_at  INTEGER NOT NULL
);
CREATE TABLE webhooks (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	url        TEXT NOT NULL DEFAULT '',
	job_id     TEXT REFERENCES source_jobs(id),
	watched    TEXT NOT NULL,                         -- JSON array of {type, name}
	domains    TEXT NOT NULL,                         -- JSON array
	secret     TEXT NOT NULL DEFAULT '',
	disabled   INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX webhooks_by_user ON webhooks (user_id, id);
CREATE TABLE webhook_watch (                          -- watched items, indexed for event matching
	webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	type       TEXT NOT NULL,
	name       TEXT NOT NULL
);
CREATE INDEX webhook_watch_by_item ON webhook_watch (type, name);
CREATE INDEX webhook_watch_by_webhook ON webhook_watch (webhook_id);
CREATE TABLE webhook_secrets (                        -- secrets handed to the runs of a job webhook
	webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	name       TEXT NOT NULL,
	value      TEXT NOT NULL,
	PRIMARY KEY (webhook_id, name)
);
CREATE TABLE events (
	id         TEXT PRIMARY KEY,
	repo_id    TEXT NOT NULL,
	scope      TEXT NOT NULL,
	action     TEXT NOT NULL,
	payload    TEXT NOT NULL,                         -- the v3 payload without its webhook field
	created_at INTEGER NOT NULL
);
CREATE TABLE deliveries (
	id              TEXT PRIMARY KEY,
	webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	event_id        TEXT NOT NULL REFERENCES events(id),
	replay_of       TEXT NOT NULL DEFAULT '',
	state           TEXT NOT NULL,                    -- pending | delivered | failed | skipped | rate_limited
	leased          INTEGER NOT NULL DEFAULT 0,       -- being sent by this process; cleared at start
	attempts        INTEGER NOT NULL DEFAULT 0,
	next_attempt_at INTEGER NOT NULL,
	last_status     INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (state, leased, next_attempt_at);
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, created_at);
CREATE TABLE attempts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	delivery_id TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
	at          INTEGER NOT NULL,
	target      TEXT NOT NULL,                        -- the URL it went to, or "job <source job ID>"
	status      INTEGER NOT NULL,                     -- HTTP status; 0 when there was no response
	latency_us  INTEGER NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	response    TEXT NOT NULL DEFAULT '',             -- the start of the receiver's answer
	job_run_id  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX attempts_by_delivery ON attempts (delivery_id);
CREATE TABLE job_runs (
	id            TEXT PRIMARY KEY,
	webhook_id    TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	delivery_id   TEXT NOT NULL,
	source_job_id TEXT NOT NULL,
	state         TEXT NOT NULL,                      -- running | completed | error
	exit_code     INTEGER,
	error         TEXT NOT NULL DEFAULT '',
	log           TEXT NOT NULL DEFAULT '',
	started_at    INTEGER NOT NULL,
	finished_at   INTEGER
);
CREATE INDEX job_runs_by_webhook ON job_runs (webhook_id, started_at);
`,
	// 2: each webhook's record as the API returns it, kept current by every write (writeRecord), so
	// that a list is one column per row; openStore fills it for webhooks written before.
	`ALTER TABLE webhooks ADD COLUMN record TEXT NOT NULL DEFAULT '';
CREATE INDEX webhooks_list ON webhooks (user_id, id, record);`,
	// 3: whether a delivery is an HTTP request or a job run, so that the delivery loop finds the due
	// deliveries of each kind through an index, however many of the other kind wait.
	`ALTER TABLE deliveries ADD COLUMN kind TEXT NOT NULL DEFAULT 'url';                 -- url | job
UPDATE deliveries SET kind = 'job' WHERE webhook_id IN (SELECT id FROM webhooks WHERE job_id IS NOT NULL);
CREATE INDEX deliveries_due_by_kind ON deliveries (state, leased, kind, next_attempt_at);`,
	// 4: spaces stored as git repositories (POST /api/repos/create). A repos row without a spaces row
	// is a repo that only emitted events have mentioned; it has no git data.
	`CREATE TABLE spaces (
	repo_id       TEXT PRIMARY KEY REFERENCES repos(id) ON DELETE CASCADE,
	sdk           TEXT NOT NULL,
	tags          TEXT NOT NULL DEFAULT '[]',         -- JSON array: README front matter tags at the head of main, then the sdk
	card_data     TEXT NOT NULL DEFAULT '{}',         -- JSON object: the README front matter
	files         TEXT NOT NULL DEFAULT '[]',         -- JSON array: the paths at the head of main
	last_modified INTEGER NOT NULL                    -- commit time of main's head; the creation time before the first push
);`,
	// 5: discussions as the events emitted on them left them, and their history (comments, status
	// and title changes), for the hub's discussion API and the state of the next event.
	`CREATE TABLE discussions (
	repo_id         TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
	num             INTEGER NOT NULL,
	title           TEXT NOT NULL,
	is_pull_request INTEGER NOT NULL,
	status          TEXT NOT NULL,                    -- open | closed | merged | draft
	author_id       TEXT NOT NULL,
	merge_commit_id TEXT NOT NULL DEFAULT '',
	deleted         INTEGER NOT NULL DEFAULT 0,
	created_at      INTEGER NOT NULL,
	PRIMARY KEY (repo_id, num)
);
CREATE TABLE discussion_events (
	id         TEXT PRIMARY KEY,
	repo_id    TEXT NOT NULL,
	num        INTEGER NOT NULL,
	type       TEXT NOT NULL,                         -- comment | status-change | title-change
	author_id  TEXT NOT NULL,
	data       TEXT NOT NULL,                         -- JSON, as the discussion's details show it
	created_at INTEGER NOT NULL,
	FOREIGN KEY (repo_id, num) REFERENCES discussions (repo_id, num) ON DELETE CASCADE
);
CREATE INDEX discussion_events_by_discussion ON discussion_events (repo_id, num, created_at);`,
	// 6: who caused each event and delivery, so that the trigger limit counts each emitting user's
	// deliveries on their own (an index serves the count). Rows from before have no emitter: they
	// count together, as one user.
	`ALTER TABLE events ADD COLUMN emitter_id TEXT NOT NULL DEFAULT '';
ALTER TABLE deliveries ADD COLUMN emitter_id TEXT NOT NULL DEFAULT '';
UPDATE deliveries SET emitter_id = (SELECT emitter_id FROM events WHERE events.id = deliveries.event_id);
CREATE INDEX deliveries_by_webhook_emitter ON deliveries (webhook_id, emitter_id, created_at);`,
	// 7: a user's webhooks in creation order (an index's entries end with the rowid, so this one is
	// ordered as creationOrder is): a list is read in order, where it was sorted in a temporary
	// b-tree. webhooks_list, which no query used once lists were in creation order, goes: it copied
	// every record, and every write rewrote it.
	`CREATE INDEX webhooks_in_creation_order ON webhooks (user_id, created_at);
DROP INDEX webhooks_list;`,
}
