# A throwaway Redis server for the @toolgate/store-redis tests: on a free loopback port, no
# persistence, in a temp dir; exports TOOLGATE_REDIS_URL and stops and deletes it on exit.
#
# .ci/run sources this file (it provides `step` and `on_exit`). Locally, either run a command with a
# server beside it:
#   bash .ci/services/redis.sh -- npx jest packages/store-redis --maxWorkers=1
# or `source .ci/services/redis.sh` in an interactive bash; the server stops when that shell exits.
# Also exported: TOOLGATE_REDIS_SERVER (the redis-server binary), for tests that start their own.

# step, on_exit and toolgate_free_port.
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../standalone.sh"

# Stops the server whose pidfile is in $1, then deletes the folder.
toolgate_redis_stop() {
  local dir=$1 pid
  if [[ -f $dir/redis.pid ]]; then
    pid=$(cat "$dir/redis.pid")
    if [[ -n $pid ]] && kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
  fi
  rm -rf "$dir"
}

# Answers 0 once the server on port $1 answers PING, within about 10 seconds.
toolgate_redis_wait() {
  local port=$1 attempt
  for attempt in $(seq 1 100); do
    if [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]; then return 0; fi
    sleep 0.1
  done
  return 1
}

toolgate_redis_start() {
  local dir port attempt
  if ! command -v redis-server >/dev/null 2>&1; then
    if [[ $(id -u) != 0 ]]; then
      echo 'redis: redis-server not found; install it (e.g. apt-get install redis-server) or put it on PATH' >&2
      return 1
    fi
    echo 'redis: redis-server not found; installing Debian'"'"'s redis-server'
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null ||
      return 1
    command -v redis-server >/dev/null 2>&1 || {
      echo 'redis: still no redis-server after installing it' >&2
      return 1
    }
  fi
  # Debian's package may start a system server on 6379; this one is ours, on its own port.
  dir=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-redis.XXXXXX") || return 1
  on_exit "toolgate_redis_stop $(printf '%q' "$dir")"
  # A port picked free can be taken before the server binds it: try a few.
  for attempt in 1 2 3; do
    port=$(toolgate_free_port) || return 1
    if redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
      --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >/dev/null &&
      toolgate_redis_wait "$port"; then
      break
    fi
    toolgate_redis_stop "$dir"
    mkdir -p "$dir"
    port=''
  done
  if [[ -z $port ]]; then
    echo 'redis: the server did not start:' >&2
    tail -n 20 "$dir/redis.log" >&2 2>/dev/null
    return 1
  fi
  export TOOLGATE_REDIS_URL="redis://127.0.0.1:$port"
  export TOOLGATE_REDIS_SERVER
  TOOLGATE_REDIS_SERVER=$(command -v redis-server)
  echo "redis: $(redis-server --version | cut -d ' ' -f 1-3) on 127.0.0.1:$port (TOOLGATE_REDIS_URL is set)"
}

step redis toolgate_redis_start

# Run directly: `bash .ci/services/redis.sh -- <command...>` runs the command beside the server.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  [[ ${1:-} == -- ]] && shift
  if [[ -z ${TOOLGATE_REDIS_URL:-} ]]; then exit 1; fi
  if (($# > 0)); then "$@"; fi
fi
