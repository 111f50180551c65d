package aws

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fleet"
)

// policyResources reads an AWS IoT policy and returns its Allow statements' resources by action,
// with the policy variable and placeholders filled in for robot and space.
func policyResources(t *testing.T, file, robot, space string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version   string
		Statement []struct {
			Effect   string
			Action   json.RawMessage
			Resource json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if doc.Version != "2012-10-17" {
		t.Fatalf("%s: Version %q", file, doc.Version)
	}
	list := func(raw json.RawMessage) []string {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			return []string{one}
		}
		var many []string
		if err := json.Unmarshal(raw, &many); err != nil {
			t.Fatalf("%s: %s is neither a string nor a list", file, raw)
		}
		return many
	}
	fill := strings.NewReplacer("${iot:Connection.Thing.ThingName}", robot, "OWNER/NAME", space)
	out := map[string][]string{}
	for _, st := range doc.Statement {
		if st.Effect != "Allow" {
			t.Fatalf("%s: effect %q", file, st.Effect)
		}
		for _, action := range list(st.Action) {
			for _, r := range list(st.Resource) {
				_, rest, ok := strings.Cut(r, ":iot:*:*:")
				if !ok {
					t.Fatalf("%s: resource %s is not an IoT ARN of any region and account", file, r)
				}
				out[action] = append(out[action], fill.Replace(rest))
			}
		}
	}
	return out
}

// The policies name the topics core/fleet uses (AWS IoT takes + and # in a policy literally, so a
// topicfilter resource must be exactly the filter the robot subscribes to).
func TestIoTPoliciesNameTheFleetsTopics(t *testing.T) {
	topics := fleet.Topics{}
	robot := policyResources(t, "iot-robot-policy.json", "robot-1", "")
	if got, want := robot["iot:Connect"], []string{"client/robot-1"}; !slices.Equal(got, want) {
		t.Errorf("robot policy: connect %v, want %v", got, want)
	}
	own := []string{"topic/" + topics.Status("robot-1"), "topic/" + topics.Online("robot-1")}
	for _, action := range []string{"iot:Publish", "iot:RetainPublish"} {
		if got := robot[action]; !slices.Equal(got, own) {
			t.Errorf("robot policy: %s on %v, want only its own status and presence %v", action, got, own)
		}
	}
	// The base policy hears only the app store's change notices; spaces come from their thing groups.
	if got, want := robot["iot:Subscribe"], []string{"topicfilter/" + topics.Catalog()}; !slices.Equal(got, want) {
		t.Errorf("robot policy: subscribe to %v, want only the catalog %v", got, want)
	}
	if got, want := robot["iot:Receive"], []string{"topic/" + topics.Catalog()}; !slices.Equal(got, want) {
		t.Errorf("robot policy: receive %v, want only the catalog %v", got, want)
	}

	space := policyResources(t, "iot-space-policy.json", "", "alice/catalog_app")
	if got, want := space["iot:Subscribe"], []string{"topicfilter/" + topics.Waves("alice/catalog_app")}; !slices.Equal(got, want) {
		t.Errorf("space policy: subscribe %v, want %v", got, want)
	}
	if got, want := space["iot:Receive"], []string{"topic/" + strings.TrimSuffix(topics.Wave("alice/catalog_app", 0), "0") + "*"}; !slices.Equal(got, want) {
		t.Errorf("space policy: receive %v, want %v", got, want)
	}
	if len(space["iot:Publish"]) != 0 {
		t.Errorf("space policy lets robots publish on %v", space["iot:Publish"])
	}

	// Every robot hears the daemon's releases (a thing group of the whole fleet has this policy);
	// each checks a release's signature before it installs it.
	daemon := policyResources(t, "iot-daemon-policy.json", "", "")
	if got, want := daemon["iot:Subscribe"], []string{"topicfilter/" + topics.DaemonWaves()}; !slices.Equal(got, want) {
		t.Errorf("daemon policy: subscribe %v, want %v", got, want)
	}
	if got, want := daemon["iot:Receive"], []string{"topic/" + strings.TrimSuffix(topics.DaemonWave(0), "0") + "*"}; !slices.Equal(got, want) {
		t.Errorf("daemon policy: receive %v, want %v", got, want)
	}
	if len(daemon["iot:Publish"]) != 0 {
		t.Errorf("daemon policy lets robots publish on %v", daemon["iot:Publish"])
	}

	receiver := policyResources(t, "iot-receiver-policy.json", "receiver", "")
	var wantFilters []string
	for _, f := range (&fleet.Publisher{}).Filters() {
		wantFilters = append(wantFilters, "topicfilter/"+f)
	}
	if got := receiver["iot:Subscribe"]; !slices.Equal(got, wantFilters) {
		t.Errorf("receiver policy: subscribe %v, want the publisher's filters %v", got, wantFilters)
	}
	if got := receiver["iot:RetainPublish"]; !slices.Equal(got, []string{"topic/" + fleet.DefaultPrefix + "/spaces/*", "topic/" + fleet.DefaultPrefix + "/daemon/*"}) {
		t.Errorf("receiver policy: retained publish on %v", got)
	}
}
