package cliapp

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// testApp has the shapes of robothub and robot-app-assistant: global flags, commands with flags,
// a command with subcommands, and one whose arguments are a command line.
func testApp(ran *[]string) *cli.App {
	record := func(c *cli.Context) error {
		*ran = append([]string{c.Command.Name}, c.Args().Slice()...)
		for _, name := range []string{"publish", "template", "yes", "token"} {
			if c.IsSet(name) {
				*ran = append(*ran, name+"="+c.String(name))
			}
		}
		return nil
	}
	return &cli.App{
		Name:  "tool",
		Flags: []cli.Flag{&cli.StringFlag{Name: "log-level"}},
		Commands: []*cli.Command{
			{Name: "create", Action: record, Flags: []cli.Flag{
				&cli.BoolFlag{Name: "publish"}, &cli.StringFlag{Name: "template", Aliases: []string{"t"}}}},
			{Name: "webhooks", Flags: []cli.Flag{&cli.StringFlag{Name: "token"}}, Subcommands: []*cli.Command{
				{Name: "delete", Aliases: []string{"rm"}, Action: record, Flags: []cli.Flag{
					&cli.BoolFlag{Name: "yes"}, &cli.StringFlag{Name: "token"}}},
			}},
			{Name: "job", Subcommands: []*cli.Command{
				{Name: "create", Action: record, Flags: []cli.Flag{&cli.StringSliceFlag{Name: "env"}}},
			}},
		},
	}
}

func TestInterspersed(t *testing.T) {
	var ran []string
	app := testApp(&ran)
	for _, tt := range []struct{ in, want string }{
		{"tool create my_app dest --publish --template conversation", "tool create --publish --template conversation my_app dest"},
		{"tool create --template=conversation my_app dest", "tool create --template=conversation my_app dest"},
		{"tool create my_app -t conversation dest", "tool create -t conversation my_app dest"},
		{"tool --log-level debug create path --publish", "tool --log-level debug create --publish path"},
		{"tool create path msg --publish -- --not-a-flag", "tool create --publish path msg -- --not-a-flag"},
		{"tool webhooks --token T delete ID --yes", "tool webhooks --token T delete --yes ID"},
		{"tool webhooks rm ID --token=T --yes", "tool webhooks rm --token=T --yes ID"},
		{"tool webhooks delete ID --bogus", "tool webhooks delete --bogus ID"}, // urfave/cli says it is not defined
		{"tool webhooks delete ID --token", "tool webhooks delete --token ID"}, // urfave/cli says it needs a value
		{"tool webhooks delete ID --yes --generate-bash-completion", "tool webhooks delete --yes ID --generate-bash-completion"},
		{"tool job create --env A=1 ./run.sh --fast -x", "tool job create --env A=1 ./run.sh --fast -x"},
		{"tool unknown a --b", "tool unknown a --b"},
		{"tool webhooks frobnicate --yes", "tool webhooks frobnicate --yes"},
		{"tool create - --publish", "tool create --publish -"},
		{"tool", "tool"},
	} {
		if got := strings.Join(Interspersed(app, strings.Fields(tt.in), "job create"), " "); got != tt.want {
			t.Errorf("Interspersed(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}

	// What the commands then see.
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"tool webhooks delete ID --yes", []string{"delete", "ID", "yes=true"}},
		{"tool create my_app dest -t conversation --publish", []string{"create", "my_app", "dest", "publish=true", "template=conversation"}},
		{"tool job create ./run.sh --fast", []string{"create", "./run.sh", "--fast"}},
	} {
		ran = nil
		if err := app.Run(Interspersed(app, strings.Fields(tt.in), "job create")); err != nil || !slices.Equal(ran, tt.want) {
			t.Errorf("%s: ran %q, %v; want %q", tt.in, ran, err, tt.want)
		}
	}
	ran = nil
	if err := app.Run(Interspersed(app, strings.Fields("tool webhooks delete ID --bogus"))); err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -bogus") {
		t.Errorf("an unknown flag after the arguments: %v (ran %q)", err, ran)
	}
}
