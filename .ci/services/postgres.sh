# A throwaway PostgreSQL server for the @toolgate/store-postgres tests: initdb into a temp dir, start
# on a free loopback port, export TOOLGATE_POSTGRES_URL, stop and delete it on exit.
#
# .ci/run sources this file (it provides `step` and `on_exit`). Locally, either run a command with a
# server beside it:
#   bash .ci/services/postgres.sh -- npx jest packages/store-postgres --maxWorkers=1
# or `source .ci/services/postgres.sh` in an interactive bash; the server stops when that shell exits.
#
# Also exported, for the tests that start and stop servers of their own (a restart mid-run):
# TOOLGATE_POSTGRES_BIN (the folder holding initdb and pg_ctl) and, when running as root,
# TOOLGATE_POSTGRES_USER (the unprivileged user the server runs as; postgres refuses to run as root).
# The server is for tests only: fsync is off.

# step, on_exit and toolgate_free_port.
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../standalone.sh"

# The folder with initdb, pg_ctl and postgres: pg_config's, then the newest Debian versioned folder,
# then PATH. Prints nothing and fails when none has them.
toolgate_postgres_bin() {
  local dir candidates=()
  if command -v pg_config >/dev/null 2>&1; then candidates+=("$(pg_config --bindir 2>/dev/null)"); fi
  while IFS= read -r dir; do candidates+=("$dir"); done < <(
    compgen -G '/usr/lib/postgresql/*/bin' | sort -V -r
  )
  if command -v initdb >/dev/null 2>&1; then candidates+=("$(dirname "$(command -v initdb)")"); fi
  for dir in "${candidates[@]}"; do
    if [[ -n $dir && -x $dir/initdb && -x $dir/pg_ctl && -x $dir/postgres ]]; then
      printf '%s\n' "$dir"
      return 0
    fi
  done
  return 1
}

# Stops the server in $1 (if it runs) and deletes the folder.
toolgate_postgres_stop() {
  local dir=$1 bin=$2 user=$3
  if [[ -f $dir/data/postmaster.pid ]]; then
    if [[ -n $user ]]; then
      runuser -u "$user" -- "$bin/pg_ctl" stop -D "$dir/data" -m fast -w -t 30 >/dev/null 2>&1 || true
    else
      "$bin/pg_ctl" stop -D "$dir/data" -m fast -w -t 30 >/dev/null 2>&1 || true
    fi
  fi
  rm -rf "$dir"
}

toolgate_postgres_start() {
  local bin user='' dir as=()
  if ! bin=$(toolgate_postgres_bin); then
    if [[ $(id -u) != 0 ]]; then
      echo 'postgres: initdb not found; install PostgreSQL (e.g. apt-get install postgresql) or put its bin folder on PATH' >&2
      return 1
    fi
    echo 'postgres: initdb not found; installing Debian'"'"'s postgresql'
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null ||
      return 1
    bin=$(toolgate_postgres_bin) || {
      echo 'postgres: still no initdb after installing postgresql' >&2
      return 1
    }
  fi
  if [[ $(id -u) == 0 ]]; then
    # postgres refuses to run as root.
    if id postgres >/dev/null 2>&1; then user=postgres; else user=nobody; fi
    as=(runuser -u "$user" --)
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-pg.XXXXXX") || return 1
  on_exit "toolgate_postgres_stop $(printf '%q %q %q' "$dir" "$bin" "$user")"
  if [[ -n $user ]]; then chown "$user" "$dir" || return 1; fi
  # postgres tools fail in a folder their user cannot read, as the checkout may be.
  pushd "$dir" >/dev/null || return 1
  toolgate_postgres_init "$dir" "$bin" "${as[@]}"
  local status=$?
  popd >/dev/null || true
  if ((status == 0)) && [[ -n $user ]]; then export TOOLGATE_POSTGRES_USER="$user"; fi
  return $status
}

# initdb in $1 with the binaries in $2, run through the command prefix in the rest (runuser or none).
toolgate_postgres_init() {
  local dir=$1 bin=$2 port attempt
  shift 2
  local as=("$@")

  "${as[@]}" "$bin/initdb" -D "$dir/data" -U toolgate --auth=trust --encoding=UTF8 --locale=C --no-sync \
    >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    return 1
  }
  # A port picked free can be taken before the server binds it: try a few.
  for attempt in 1 2 3; do
    port=$(toolgate_free_port) || return 1
    if "${as[@]}" "$bin/pg_ctl" start -D "$dir/data" -l "$dir/data/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='' -c fsync=off -c max_connections=200" \
      >/dev/null; then
      break
    fi
    port=''
  done
  if [[ -z $port ]]; then
    echo 'postgres: the server did not start:' >&2
    tail -n 20 "$dir/data/server.log" >&2
    return 1
  fi
  "$bin/createdb" -h 127.0.0.1 -p "$port" -U toolgate toolgate_test || return 1

  export TOOLGATE_POSTGRES_URL="postgres://toolgate@127.0.0.1:$port/toolgate_test"
  export TOOLGATE_POSTGRES_BIN="$bin"
  echo "postgres: $("$bin/postgres" --version) on 127.0.0.1:$port (TOOLGATE_POSTGRES_URL is set)"
}

step postgres toolgate_postgres_start

# Run directly: `bash .ci/services/postgres.sh -- <command...>` runs the command beside the server.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  [[ ${1:-} == -- ]] && shift
  if [[ -z ${TOOLGATE_POSTGRES_URL:-} ]]; then exit 1; fi
  if (($# > 0)); then "$@"; fi
fi
