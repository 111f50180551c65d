package main

import (
	"fmt"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/urfave/cli/v2"
)

// Shell completion scripts. Each asks robothub itself for the candidates (urfave/cli's hidden
// --generate-bash-completion flag), so commands, flags and webhook IDs are always current.
const bashCompletion = `# robothub completion for bash: eval "$(robothub completion bash)"
_robothub_complete() {
  local cur words
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == -* ]]; then
    words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:$COMP_CWORD-1}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:$COMP_CWORD-1}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${words//:*([^[:space:]])/}" -- "$cur"))
}
shopt -s extglob
complete -o bashdefault -o default -F _robothub_complete robothub
`

const zshCompletion = `#compdef robothub
# robothub completion for zsh: eval "$(robothub completion zsh)"
_robothub() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[1]} ${words[@]:1:#words[@]-2} $cur --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[1]} ${words[@]:1:#words[@]-2} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _robothub robothub
`

func completionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "completion",
		Usage: cliapp.RobothubUsageOf("completion"),
		UsageText: `robothub completion bash|zsh|fish

Examples:
  eval "$(robothub completion bash)"                            # in ~/.bashrc
  eval "$(robothub completion zsh)"                             # in ~/.zshrc
  robothub completion fish > ~/.config/fish/completions/robothub.fish

Webhook IDs complete too (robothub webhooks info <TAB>), read from the hub with your token.`,
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("completion takes one shell: bash, zsh or fish")
			}
			switch c.Args().First() {
			case "bash":
				_, err := fmt.Fprint(e.stdout, bashCompletion)
				return err
			case "zsh":
				_, err := fmt.Fprint(e.stdout, zshCompletion)
				return err
			case "fish":
				script, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				_, err = fmt.Fprint(e.stdout, script)
				return err
			}
			return usagef("completion %q: use bash, zsh or fish", c.Args().First())
		},
	}
}
