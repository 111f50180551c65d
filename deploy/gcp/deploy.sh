#!/usr/bin/env bash
# Deploy robothub's webhook receiver (functions/gcf) as a Google Cloud Function (2nd gen).
#
#   deploy/gcp/deploy.sh [--dry-run] [--project ID] [--region REGION] [--name NAME]
#                        [--routes SPEC] [--secret-name NAME] [--memory SIZE]
#
# The routes come from --routes or ROBOTHUB_ROUTES (e.g. 'hello=log;relay=forward:https://...').
# The webhook secret lives in Secret Manager under --secret-name (robothub-webhook-secret): if
# WEBHOOK_SECRET is set, it is stored there as a new version first; the function reads it as
# WEBHOOK_SECRET through --set-secrets. --dry-run prints every gcloud command instead of running
# it, and keeps the staged source for inspection. GCLOUD names the gcloud command (default gcloud).
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "deploy.sh: $*" >&2; exit 2; }

dry_run=0 project="" region="us-central1" name="robothub-webhooks" routes="${ROBOTHUB_ROUTES:-}"
secret_name="robothub-webhook-secret" memory="256Mi"
entry_point="RobothubWebhooks"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1 ;;
    --project) project="${2:?--project needs a value}"; shift ;;
    --region) region="${2:?--region needs a value}"; shift ;;
    --name) name="${2:?--name needs a value}"; shift ;;
    --routes) routes="${2:?--routes needs a value}"; shift ;;
    --secret-name) secret_name="${2:?--secret-name needs a value}"; shift ;;
    --memory) memory="${2:?--memory needs a value}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
  shift
done
[ -n "${routes//[[:space:];]/}" ] || die "no routes: pass --routes 'hello=log' or set ROBOTHUB_ROUTES"
gcloud="${GCLOUD:-gcloud}"
project_flag=()
[ -n "$project" ] && project_flag=(--project "$project")

# run prints a command, shell-quoted, then runs it unless this is a dry run.
run() {
  printf '+'; printf ' %q' "$@"; printf '\n'
  [ "$dry_run" = 1 ] || "$@"
}

# Google's Go buildpack builds the package at the root of the uploaded source. The repository
# has none, so the staged copy gets one that imports the function package (whose init registers
# the entry point). The module, go.mod and go.sum stay the repository's.
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/robothub-gcf-XXXXXX")"
if [ "$dry_run" = 0 ]; then trap 'rm -rf "$work"' EXIT; fi
stage="$work/source"
mkdir -p "$stage"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$stage"
cat > "$stage/function.go" <<'GO'
// Package robothub is the root package of the robothub Cloud Function's source, written by
// deploy/gcp/deploy.sh: Google's Go buildpack builds the package at the root of the source, and
// this one imports the package whose init registers the function.
package robothub

import _ "github.com/robothub/robothub/functions/gcf"
GO
printf '%s\n' bin/ .git/ '*.zip' '*.test' > "$stage/.gcloudignore"

# Environment variables go through a file: routes hold ';', ',' and spaces that --set-env-vars
# would split. YAML single quotes escape a quote by doubling it.
env_file="$work/env.yaml"
printf "ROBOTHUB_ROUTES: '%s'\n" "${routes//\'/\'\'}" > "$env_file"

echo "# staged source: $stage"
echo "# environment ($env_file):"
sed 's/^/#   /' "$env_file"

if [ -n "${WEBHOOK_SECRET:-}" ]; then
  echo "# storing WEBHOOK_SECRET in Secret Manager as $secret_name (its value is never printed)"
  if [ "$dry_run" = 1 ] || ! "$gcloud" secrets describe "$secret_name" "${project_flag[@]}" >/dev/null 2>&1; then
    run "$gcloud" secrets create "$secret_name" --replication-policy=automatic "${project_flag[@]}"
  fi
  printf '+ printf %%s "$WEBHOOK_SECRET" |'; printf ' %q' "$gcloud" secrets versions add "$secret_name" --data-file=- "${project_flag[@]}"; printf '\n'
  if [ "$dry_run" = 0 ]; then
    printf %s "$WEBHOOK_SECRET" | "$gcloud" secrets versions add "$secret_name" --data-file=- "${project_flag[@]}"
  fi
else
  echo "# WEBHOOK_SECRET is not set: the function uses the existing secret $secret_name"
fi
echo "# the function's service account needs roles/secretmanager.secretAccessor on $secret_name"

run "$gcloud" functions deploy "$name" --gen2 --runtime go126 --trigger-http --allow-unauthenticated \
  --region "$region" "${project_flag[@]}" --source "$stage" --entry-point "$entry_point" \
  --env-vars-file "$env_file" --set-secrets "WEBHOOK_SECRET=$secret_name:latest" \
  --memory "$memory" --timeout 60s

if [ "$dry_run" = 1 ]; then
  echo "# dry run: nothing was deployed; the staged source is kept in $work"
else
  echo "# the hub webhook's URL: the function's URL (gcloud functions describe $name --gen2 --region $region) + /webhooks/<name>"
fi
