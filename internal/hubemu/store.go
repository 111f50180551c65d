package hubemu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// MemoryDSN is an in-memory database: everything is lost when the store closes. For tests.
const MemoryDSN = ":memory:"

// Store is what the hub keeps: internal/hubemu/store keeps it in SQLite. Reads outside Update see
// what committed transactions wrote; Update runs one write transaction, committed when fn returns
// nil and rolled back otherwise. A change the disk refuses (full, read-only, failing) is an error
// that wraps a *DiskError.
type Store interface {
	Reads
	Update(ctx context.Context, fn func(Tx) error) error
	// Database names the database (a file path, or MemoryDSN) for messages.
	Database() string
	Close() error
}

// Tx is one write transaction: it reads what it wrote before.
type Tx interface {
	Reads

	CreateUser(ctx context.Context, u User) error
	CreateToken(ctx context.Context, t Token) error

	// InsertWebhook, UpdateWebhook (every field of w: URL, JobID, Watched, Domains, Secret,
	// Disabled, UpdatedAt), MergeWebhookSecrets and ClearWebhookSecrets keep the webhook's API
	// record current. MergeWebhookSecrets sets the secrets given, and removes those of value "".
	InsertWebhook(ctx context.Context, w *Webhook) error
	UpdateWebhook(ctx context.Context, w *Webhook) error
	MergeWebhookSecrets(ctx context.Context, webhookID string, secrets map[string]string) error
	ClearWebhookSecrets(ctx context.Context, webhookID string) error
	// DeleteWebhook deletes a webhook of userID with its deliveries, activity and runs: ErrNotFound
	// when userID has no such webhook.
	DeleteWebhook(ctx context.Context, userID, id string) error

	InsertSourceJob(ctx context.Context, j *SourceJob, secrets map[string]string) error

	// InsertRepo adds a repo; UpdateRepo writes its name, owner, visibility, head and discussion
	// count; both return an error wrapping ErrExists when another repo has its type and name.
	InsertRepo(ctx context.Context, r *Repo) error
	UpdateRepo(ctx context.Context, r *Repo) error
	DeleteRepo(ctx context.Context, repoID string) error
	InsertSpace(ctx context.Context, repoID string, st SpaceState) error
	UpdateSpace(ctx context.Context, repoID string, st SpaceState) error

	InsertEvent(ctx context.Context, ev Event) error
	InsertDelivery(ctx context.Context, d NewDelivery) error

	PutDiscussion(ctx context.Context, repoID string, d *Discussion) error
	InsertDiscussionEvent(ctx context.Context, ev DiscussionEvent) error
	SetDiscussionEventData(ctx context.Context, id string, data []byte) error

	// ReleaseLeases makes the deliveries a stopped Run had claimed pending again, and marks the job
	// runs it left running as interrupted with reason.
	ReleaseLeases(ctx context.Context, reason string, at time.Time) error
	// ClaimDeliveries leases up to n pending deliveries of kind (DeliveryURL or DeliveryJob) due at
	// now, oldest due first.
	ClaimDeliveries(ctx context.Context, kind string, n int, now time.Time) ([]Claim, error)
	// SkipDelivery ends a delivery unsent.
	SkipDelivery(ctx context.Context, deliveryID, reason string, at time.Time) error
	// RecordAttempt stores an attempt and the delivery's new state; an attempt of a delivery that
	// was deleted meanwhile is dropped.
	RecordAttempt(ctx context.Context, a AttemptRecord) error
	StartJobRun(ctx context.Context, r JobRun) error
	FinishJobRun(ctx context.Context, runID string, end RunEnd) error
}

// Reads are the queries of a Store and of a Tx.
type Reads interface {
	// UserByName, PrincipalByToken, Webhook, SourceJob, RepoByName, SpaceByName and Discussion
	// return an error wrapping ErrNotFound when there is none.
	UserByName(ctx context.Context, name string) (User, error)
	Users(ctx context.Context) ([]User, error)
	HasTokens(ctx context.Context) (bool, error)
	PrincipalByToken(ctx context.Context, tokenHash string) (Principal, error)

	// Webhook returns a webhook of userID ("" for any user's) with its source job and the names of
	// its secrets.
	Webhook(ctx context.Context, userID, id string) (*Webhook, error)
	// Webhooks returns userID's webhooks, oldest first.
	Webhooks(ctx context.Context, userID string) ([]*Webhook, error)
	// WebhookListJSON is userID's webhooks as the list API returns them: a JSON array of records.
	WebhookListJSON(ctx context.Context, userID string) ([]byte, error)
	WebhookSecrets(ctx context.Context, webhookID string) (map[string]string, error)
	// MatchingWebhooks returns the enabled webhooks that watch repo (by its type and name) or
	// owner, in domain; on a private repo, only those of its owner.
	MatchingWebhooks(ctx context.Context, repo *Repo, owner, domain string) ([]string, error)

	// SourceJob returns a source job of userID ("" for any user's).
	SourceJob(ctx context.Context, userID, id string) (*SourceJob, error)
	SourceJobs(ctx context.Context, userID string) ([]*SourceJob, error)
	// JobRuns returns a webhook's runs, newest first, without their logs; JobRun one of userID's
	// runs with its log.
	JobRuns(ctx context.Context, webhookID string, limit int) ([]JobRun, error)
	JobRun(ctx context.Context, userID, runID string) (*JobRun, error)

	RepoByName(ctx context.Context, repoType, name string) (*Repo, error)
	SpaceByName(ctx context.Context, name string) (*Space, error)
	// SpaceTags returns the tags of a stored space, and false for a repo that is not one.
	SpaceTags(ctx context.Context, repoID string) ([]string, bool, error)
	// Spaces returns the spaces viewerID may see ("" sees the public ones), of author when given,
	// most recently changed first.
	Spaces(ctx context.Context, viewerID, author string) ([]*Space, error)

	Discussion(ctx context.Context, repoID string, num int) (*Discussion, error)
	// LatestComment returns the ID and data of a discussion's latest comment, or ErrNotFound.
	LatestComment(ctx context.Context, repoID string, num int) (string, []byte, error)
	// Discussions lists a repo's discussions, newest first, with how many match in all.
	Discussions(ctx context.Context, repo *Repo, q DiscussionQuery) ([]DiscussionRecord, int, error)
	// DiscussionDetails returns one discussion (ErrNotFound when there is none, or it was deleted)
	// with its merge commit and its history.
	DiscussionDetails(ctx context.Context, repo *Repo, num int) (*DiscussionDetails, error)

	// TriggersSince counts the deliveries of a webhook since a time, rate-limited ones left out,
	// and says when the oldest of them was made; EmitterTriggersSince counts those of the events of
	// one emitting user.
	TriggersSince(ctx context.Context, webhookID string, since time.Time) (int, time.Time, error)
	EmitterTriggersSince(ctx context.Context, webhookID, emitterID string, since time.Time) (int, time.Time, error)
	// Deliveries returns deliveries of a webhook, newest first: one (deliveryID set) with its
	// payload as stored, or the latest limit without payloads. Each has its attempts.
	Deliveries(ctx context.Context, webhookID, deliveryID string, limit int) ([]Delivery, error)
	// DeliveryEvent returns the event of a delivery of a webhook.
	DeliveryEvent(ctx context.Context, webhookID, deliveryID string) (string, error)
	// NextDue says when the next pending, unleased delivery of kind is due (false: none waits).
	NextDue(ctx context.Context, kind string) (time.Time, bool, error)
}

// ErrNotFound and ErrExists are what a Store's errors wrap when a row is missing, or already there.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// DiskError is a change the database could not write because of its disk: full, read-only or
// failing. That is the operator's to fix, not a bug: it is of kind fault.Storage (the API answers
// 507 naming the database), and the change was rolled back.
type DiskError struct {
	Database string
	Err      error
}

func (e *DiskError) Error() string {
	return fmt.Sprintf("the hub cannot write its database %s: %v", e.Database, e.Err)
}

func (e *DiskError) Unwrap() error { return e.Err }

// Is makes a DiskError of kind fault.Storage for errors.Is, whatever error of sqlite's it wraps.
func (e *DiskError) Is(target error) bool { return target == fault.ErrStorage }

// StoreError is the failure that stops Run: the database refused a read or a write. Nothing is lost
// by the stop (see Run), so the fix is the operator's: make room or make the disk writable, and
// start the hub again.
type StoreError struct {
	Database string // the database file (or MemoryDSN)
	Doing    string // what Run was doing, such as "recording deliveries"
	Err      error
}

func (e *StoreError) Error() string {
	var de *DiskError
	if errors.As(e.Err, &de) {
		return fmt.Sprintf("the hub cannot write its database %s (%s): %v", e.Database, e.Doing, de.Err)
	}
	return fmt.Sprintf("the hub database %s failed (%s): %v", e.Database, e.Doing, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// Token is a stored access token: the hash of the token, never the token.
type Token struct {
	Hash      string
	UserID    string
	Name      string
	Role      string
	CreatedAt time.Time
}

// Repo is a repo the hub knows: a stored space, or a repo that emitted events named.
type Repo struct {
	ID          string
	Type        string // model, dataset, space, bucket
	Name        string // owner/name
	OwnerID     string
	Private     bool
	HeadSha     string
	Discussions int // how many discussions it has had
	CreatedAt   time.Time
}

// Space is a space stored on the emulator as a git repository.
type Space struct {
	RepoID       string
	Name         string // owner/name
	Owner        string
	OwnerID      string
	Private      bool
	SDK          string
	HeadSha      string   // the head of main; "" before the first push to main
	Tags         []string // the README's front matter tags at the head of main, then the sdk
	CardData     map[string]any
	Files        []string // the paths at the head of main
	LastModified time.Time
	CreatedAt    time.Time
}

// SpaceState is what the hub stores of a space's head of main.
type SpaceState struct {
	SDK      string
	Tags     []string
	CardData map[string]any
	Files    []string
	Modified time.Time
}

// Event is an emitted event, with its payload without the webhook field.
type Event struct {
	ID        string
	RepoID    string
	EmitterID string // the user who caused it
	Scope     string
	Action    string
	Payload   []byte
	CreatedAt time.Time
}

// Delivery kinds: an HTTP request, or a job run.
const (
	DeliveryURL = "url"
	DeliveryJob = "job"
)

// NewDelivery is a delivery to record. Its kind follows its webhook's.
type NewDelivery struct {
	ID        string
	WebhookID string
	EventID   string
	ReplayOf  string
	EmitterID string // the user whose event (or replay) it is: the trigger limit counts per emitter
	State     string
	LastError string
	CreatedAt time.Time
}

// Claim is a delivery leased for an attempt, with what the attempt needs, read when it was claimed
// so that it goes to the webhook's current URL with its current secret.
type Claim struct {
	DeliveryID string
	WebhookID  string
	Attempts   int // made before this one
	URL        string
	Secret     string
	JobID      string
	Disabled   bool
	Payload    string // the event's, without the webhook field
}

// AttemptRecord is an attempt to store and the state it leaves its delivery in.
type AttemptRecord struct {
	DeliveryID    string
	At            time.Time
	Target        string
	Status        int
	Latency       time.Duration
	Error         string
	Response      string
	JobRunID      string
	State         string // the delivery's new state
	Attempts      int    // the delivery's attempts, this one included
	NextAttemptAt time.Time
	UpdatedAt     time.Time
}

// RunEnd is how a job run ended. It is recorded with the delivery's attempt, in one transaction:
// if the disk refuses that write, neither is kept, and the next Run marks the run interrupted and
// runs the delivery again.
type RunEnd struct {
	State    string
	ExitCode *int
	Err      string
	Log      string
	At       time.Time
}

// DiscussionQuery filters and pages a listing of discussions.
type DiscussionQuery struct {
	PullRequests *bool  // only pull requests (true) or only discussions (false)
	Status       string // "", open (open or draft), closed (closed or merged)
	Author       string // the author's name
	Offset       int
	Limit        int
}

// DiscussionDetails is one discussion with its history.
type DiscussionDetails struct {
	DiscussionRecord
	MergeCommitID string
	Events        []DiscussionEventRecord
}
