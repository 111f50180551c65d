package webhook

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrNotJSON is wrapped by Parse errors for a body that is not a JSON object at all.
var ErrNotJSON = errors.New("body is not a JSON object")

// FieldError is a JSON body that is not a valid payload: a required field is missing or a field has
// the wrong type. Field is the dotted path of the field, as the hub spells it ("event.action").
type FieldError struct {
	Field   string
	Problem string // "is missing", "must be a string", ...
}

func (e *FieldError) Error() string { return "payload field " + e.Field + " " + e.Problem }

// Parse decodes raw bytes into a Payload and checks that they are one: an object with event.action,
// event.scope, and a repo with a type and a name. Other fields are optional, so payloads from newer
// hub versions still parse; unknown fields stay available through Payload.Raw, which shares raw.
//
// The error wraps ErrNotJSON when raw is not a JSON object, and is a *FieldError when it is one but
// not a payload.
func Parse(raw []byte) (*Payload, error) {
	if kind := firstByte(raw); kind != '{' {
		return nil, fmt.Errorf("%w: it is %s", ErrNotJSON, describeJSON(kind))
	}
	p := new(Payload)
	if err := decodePayload(raw, p); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			if jsontext.Value(raw).IsValid() {
				return nil, fe
			}
			// A broken document is reported as such, not as a mistyped field: say where it breaks.
			var v jsontext.Value
			err = json.Unmarshal(raw, &v)
		}
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.Raw = raw
	return p, nil
}

func firstByte(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

func describeJSON(c byte) string {
	switch {
	case c == 0:
		return "empty"
	case c == '[':
		return "a JSON array"
	case c == '"':
		return "a JSON string"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a JSON boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a JSON number"
	default:
		return fmt.Sprintf("not JSON (it starts with %q)", c)
	}
}

func (p *Payload) validate() error {
	switch {
	case p.Event.Action == "" && p.Event.Scope == "":
		return &FieldError{Field: "event", Problem: "is missing"}
	case p.Event.Action == "":
		return &FieldError{Field: "event.action", Problem: "is missing"}
	case p.Event.Scope == "":
		return &FieldError{Field: "event.scope", Problem: "is missing"}
	case p.Repo.Type == "" && p.Repo.Name == "" && p.Repo.ID == "":
		return &FieldError{Field: "repo", Problem: "is missing"}
	case p.Repo.Type == "":
		return &FieldError{Field: "repo.type", Problem: "is missing"}
	case p.Repo.Name == "":
		return &FieldError{Field: "repo.name", Problem: "is missing"}
	}
	for i, r := range p.UpdatedRefs {
		if r.Ref == "" {
			return &FieldError{Field: fmt.Sprintf("updatedRefs[%d].ref", i), Problem: "is missing"}
		}
	}
	if len(p.UpdatedConfig) > 0 && p.UpdatedConfig[0] != '{' && string(p.UpdatedConfig) != "null" {
		return &FieldError{Field: "updatedConfig", Problem: "must be an object"}
	}
	return nil
}
