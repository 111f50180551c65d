package apps

import (
	"net/url"
	"regexp"

	"github.com/robothub/robothub/core/hub"
)

// RedactURL hides the credentials of a URL by the rule of hub.RedactUserinfo (the whole user
// information becomes "xxxxx"), for logs, API answers and errors. An scp-style git address
// (git@host:path) keeps its user: an SSH login name, not a credential.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err != nil {
		return RedactText(raw)
	} else if u.User != nil {
		return hub.RedactUserinfo(u)
	}
	return raw
}

// urlWithUserinfo finds URLs with credentials in text, to the authority's last @ (passwords hold @).
var urlWithUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s?#'"]*@`)

// RedactText hides the credentials of every URL in s, whole, as RedactURL does.
func RedactText(s string) string {
	return urlWithUserinfo.ReplaceAllString(s, "${1}xxxxx@")
}
