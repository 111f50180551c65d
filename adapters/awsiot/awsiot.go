// Package awsiot publishes core/fleet's messages through AWS IoT Core's HTTPS data plane
// (POST /topics/{topic}?qos=1&retain=true, signed with SigV4 by aws-sdk-go-v2's signer), so a
// receiver on AWS Lambda announces pushes to a fleet on AWS IoT Core with its execution role alone:
// no broker of ours, no connection to keep. It only publishes: canary waves, which follow the
// robots' statuses, need an MQTT connection (adapters/mqtt).
package awsiot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fleet"
)

// SigningName is the data plane's name in SigV4 credential scopes.
const SigningName = "iotdata"

// Link is a publish-only fleet link to one account's IoT data endpoint.
type Link struct {
	Endpoint    string // https://<prefix>-ats.iot.<region>.amazonaws.com (aws iot describe-endpoint --endpoint-type iot:Data-ATS)
	Region      string
	Credentials aws.CredentialsProvider
	Client      *http.Client // default: 10 s timeout
	Now         func() time.Time
}

// FromEnv makes a Link for target (awsiot://ENDPOINT[?region=R]) with the credentials and region
// Lambda gives a function's execution role (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION).
func FromEnv(target *url.URL, getenv func(string) string) (*Link, error) {
	if target.Scheme != "awsiot" || target.Host == "" {
		return nil, fmt.Errorf("awsiot: want awsiot://ENDPOINT (the account's iot:Data-ATS endpoint), got %s://%s", target.Scheme, target.Host)
	}
	if target.User != nil || (target.Path != "" && target.Path != "/") {
		return nil, errors.New("awsiot: the URL is awsiot://ENDPOINT[?region=REGION], with no user or path")
	}
	region := target.Query().Get("region")
	if region == "" {
		region = getenv("AWS_REGION")
	}
	if region == "" {
		return nil, errors.New("awsiot: no region: set AWS_REGION or add ?region=REGION")
	}
	creds := aws.Credentials{AccessKeyID: getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: getenv("AWS_SESSION_TOKEN"), Source: "environment"}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return nil, errors.New("awsiot: no credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (Lambda sets them from the execution role)")
	}
	return &Link{Endpoint: "https://" + target.Host, Region: region, Credentials: credentialsValue{creds}}, nil
}

type credentialsValue struct{ c aws.Credentials }

func (v credentialsValue) Retrieve(context.Context) (aws.Credentials, error) { return v.c, nil }

// Publish sends payload to topic with QoS 1 (retained when retain), and returns once the data plane
// accepted it. A refusal names the topic and the service's reason.
func (l *Link) Publish(ctx context.Context, topic string, payload []byte, retain bool) error {
	q := url.Values{"qos": {"1"}}
	if retain {
		q.Set("retain", "true")
	}
	// The topic is one path segment: its slashes are escaped.
	u := strings.TrimRight(l.Endpoint, "/") + "/topics/" + url.PathEscape(topic) + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("awsiot: %w", err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	creds, err := l.Credentials.Retrieve(ctx)
	if err != nil {
		return fault.New(fault.Unavailable, "awsiot: credentials: %v", err)
	}
	sum := sha256.Sum256(payload)
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), SigningName, l.Region, now()); err != nil {
		return fmt.Errorf("awsiot: signing: %w", err)
	}
	client := l.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fault.New(fault.Unavailable, "AWS IoT data plane %s: publish on %s: %v", l.Endpoint, topic, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	reason := strings.TrimSpace(string(body))
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return fault.New(fault.Forbidden, "AWS IoT refused to publish on %s (%d): %s", topic, resp.StatusCode, reason)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fault.New(fault.Unavailable, "AWS IoT did not take the publish on %s (%d): %s", topic, resp.StatusCode, reason)
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		return fault.New(fault.TooLarge, "AWS IoT refused to publish on %s: too large: %s", topic, reason)
	}
	return fault.New(fault.Upstream, "AWS IoT refused to publish on %s (%d): %s", topic, resp.StatusCode, reason)
}

// Subscribe is not possible over the data plane.
func (l *Link) Subscribe(context.Context, ...string) error {
	return errors.New("awsiot: the HTTPS data plane only publishes; subscribe through MQTT (mqtts://ENDPOINT:8883)")
}

// Unsubscribe is not possible over the data plane.
func (l *Link) Unsubscribe(context.Context, ...string) error {
	return errors.New("awsiot: the HTTPS data plane only publishes")
}

// FleetDialer is the fleet link through the data plane, for a receiver to register under the
// scheme awsiot (internal/actions' Config.FleetDialers): awsiot://ENDPOINT, with the credentials
// FromEnv reads through getenv. The link only publishes, so a rollout in canary waves, which must
// hear the robots' statuses, is refused.
func FleetDialer(getenv func(string) string) fleet.Dialer {
	return func(_ context.Context, req fleet.LinkRequest) (fleet.Link, error) {
		if req.Statuses != nil {
			return nil, fmt.Errorf("canary waves need an MQTT broker the receiver subscribes to; %s:// only publishes", req.Target.Scheme)
		}
		return FromEnv(req.Target, getenv)
	}
}
