package hubemu

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Token roles.
const (
	RoleRead  = "read"  // may list and read
	RoleWrite = "write" // may also create, change and delete
)

// User is an account on the emulator. Organizations are users of kind "org"; they own repos but
// cannot sign in.
type User struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Kind      string    `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
}

// Principal is the caller of a request: a user through one of its tokens.
type Principal struct {
	User      User
	TokenName string
	Role      string
}

// CanWrite reports whether the token may change things.
func (p Principal) CanWrite() bool { return p.Role == RoleWrite }

func checkUserName(name string) error {
	if name == "" {
		return errorf(fault.Invalid, "user name is empty")
	}
	if len(name) > 64 {
		return errorf(fault.Invalid, "user name %q is longer than 64 characters", name)
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || (i > 0 && strings.ContainsRune("-_.", c))
		if !ok {
			return errorf(fault.Invalid, "user name %q may contain letters, digits, '-', '_' and '.', and starts with a letter or digit", name)
		}
	}
	return nil
}

// ensureUser returns the user called name, creating it (of the given kind) if there is none.
func ensureUser(ctx context.Context, tx Tx, name, kind string, now time.Time) (User, bool, error) {
	u, err := tx.UserByName(ctx, name)
	if err == nil {
		return u, false, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return u, false, err
	}
	if err := checkUserName(name); err != nil {
		return u, false, err
	}
	u = User{ID: NewID(now), Name: name, Kind: kind, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	return u, true, tx.CreateUser(ctx, u)
}

// CreateToken makes a new access token for the user called userName, creating the user if it does
// not exist, and returns the token. The token is shown only here: the store keeps its hash.
func (e *Emulator) CreateToken(ctx context.Context, userName, role, tokenName string) (string, User, error) {
	if role == "" {
		role = RoleWrite
	}
	if role != RoleRead && role != RoleWrite {
		return "", User{}, errorf(fault.Invalid, "token role %q: use %s or %s", role, RoleRead, RoleWrite)
	}
	if tokenName == "" {
		tokenName = "robothub"
	}
	token := newToken()
	var user User
	err := e.db.Update(ctx, func(tx Tx) error {
		now := e.now()
		u, _, err := ensureUser(ctx, tx, userName, "user", now)
		if err != nil {
			return err
		}
		if u.Kind != "user" {
			return errorf(fault.Invalid, "%s is an organization: tokens belong to users", userName)
		}
		user = u
		return tx.CreateToken(ctx, Token{Hash: tokenHash(token), UserID: u.ID, Name: tokenName, Role: role, CreatedAt: now})
	})
	if err != nil {
		return "", User{}, err
	}
	return token, user, nil
}

// Authenticate returns the principal of a token, or an fault.ErrUnauthenticated error.
func (e *Emulator) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, errorf(fault.Unauthenticated, "Authorization header is missing: send Authorization: Bearer <token>")
	}
	p, err := e.db.PrincipalByToken(ctx, tokenHash(token))
	if errors.Is(err, ErrNotFound) {
		return Principal{}, errorf(fault.Unauthenticated, "Invalid credentials in Authorization header")
	}
	return p, err
}

// Users returns every user, oldest first.
func (e *Emulator) Users(ctx context.Context) ([]User, error) { return e.db.Users(ctx) }
