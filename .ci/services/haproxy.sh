# A throwaway HAProxy (Debian's package) balancing round-robin, request by request, over loopback
# backends: for the gateway's scale-out test (several gateway processes, no affinity). On a free
# loopback port, in a temp dir; stopped by its PID and deleted on exit.
#
# The backends come from TOOLGATE_HAPROXY_BACKENDS, comma-separated loopback host:port pairs, e.g.
#   TOOLGATE_HAPROXY_BACKENDS=127.0.0.1:4101,127.0.0.1:4102,127.0.0.1:4103 \
#     bash .ci/services/haproxy.sh -- <command...>
# runs the command beside the balancer with TOOLGATE_HAPROXY_URL (http://127.0.0.1:PORT) set.
# .ci/run sources this file with no backends: it then only makes sure haproxy is installed and exports
# TOOLGATE_HAPROXY (the binary), for tests that start their backends first and this script after.

# step, on_exit and toolgate_free_port.
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../standalone.sh"

toolgate_haproxy_install() {
  if ! command -v haproxy >/dev/null 2>&1 && [[ ! -x /usr/sbin/haproxy ]]; then
    if [[ $(id -u) != 0 ]]; then
      echo 'haproxy: haproxy not found; install it (e.g. apt-get install haproxy) or put it on PATH' >&2
      return 1
    fi
    echo 'haproxy: haproxy not found; installing Debian'"'"'s haproxy'
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >/dev/null ||
      return 1
  fi
  export TOOLGATE_HAPROXY
  TOOLGATE_HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
  echo "haproxy: $("$TOOLGATE_HAPROXY" -v | head -n 1 | cut -d ' ' -f 1-3) (TOOLGATE_HAPROXY is set)"
}

# Stops the balancer whose pidfile is in $1, then deletes the folder.
toolgate_haproxy_stop() {
  local dir=$1 pid
  if [[ -f $dir/haproxy.pid ]]; then
    pid=$(head -n 1 "$dir/haproxy.pid")
    if [[ -n $pid ]] && kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
  fi
  rm -rf "$dir"
}

# Answers 0 once something accepts connections on 127.0.0.1:$1, within about 10 seconds.
toolgate_haproxy_wait() {
  local port=$1
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

toolgate_haproxy_start() {
  local backends=${TOOLGATE_HAPROXY_BACKENDS:-} dir port attempt backend index=0 servers=''
  local -a list
  toolgate_haproxy_install || return 1
  IFS=',' read -r -a list <<<"$backends"
  if ((${#list[@]} == 0)); then
    echo 'haproxy: TOOLGATE_HAPROXY_BACKENDS is empty; give it host:port pairs, e.g. 127.0.0.1:4101,127.0.0.1:4102' >&2
    return 1
  fi
  for backend in "${list[@]}"; do
    if [[ ! $backend =~ ^(127\.0\.0\.1|localhost):[0-9]{1,5}$ ]]; then
      echo "haproxy: backend '$backend' is not a loopback host:port (127.0.0.1:PORT); this balancer serves tests only" >&2
      return 1
    fi
    servers+="  server b$index $backend"$'\n'
    index=$((index + 1))
  done
  dir=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-haproxy.XXXXXX") || return 1
  on_exit "toolgate_haproxy_stop $(printf '%q' "$dir")"
  # A port picked free can be taken before the balancer binds it: try a few.
  for attempt in 1 2 3; do
    port=$(toolgate_free_port) || return 1
    # Per-request round-robin (HTTP mode balances each request); the long tunnel timeout keeps SSE
    # streams (subscriptions/listen) open.
    cat >"$dir/haproxy.cfg" <<EOF
global
  maxconn 512
defaults
  mode http
  timeout connect 5s
  timeout client 120s
  timeout server 120s
  timeout tunnel 300s
frontend mcp
  bind 127.0.0.1:$port
  default_backend gateways
backend gateways
  balance roundrobin
$servers
EOF
    if "$TOOLGATE_HAPROXY" -q -f "$dir/haproxy.cfg" -D -p "$dir/haproxy.pid" >"$dir/haproxy.log" 2>&1 &&
      toolgate_haproxy_wait "$port"; then
      break
    fi
    toolgate_haproxy_stop "$dir"
    mkdir -p "$dir"
    port=''
  done
  if [[ -z $port ]]; then
    echo 'haproxy: the balancer did not start:' >&2
    tail -n 20 "$dir/haproxy.log" >&2 2>/dev/null
    return 1
  fi
  export TOOLGATE_HAPROXY_URL="http://127.0.0.1:$port"
  echo "haproxy: round-robin over ${#list[@]} backends on $TOOLGATE_HAPROXY_URL (TOOLGATE_HAPROXY_URL is set)" >&2
}

if [[ -n ${TOOLGATE_HAPROXY_BACKENDS:-} ]]; then
  step haproxy toolgate_haproxy_start
else
  step haproxy toolgate_haproxy_install
fi

# Run directly: `bash .ci/services/haproxy.sh -- <command...>` runs the command beside the balancer.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  [[ ${1:-} == -- ]] && shift
  if [[ -n ${TOOLGATE_HAPROXY_BACKENDS:-} && -z ${TOOLGATE_HAPROXY_URL:-} ]]; then exit 1; fi
  if [[ -z ${TOOLGATE_HAPROXY:-} ]]; then exit 1; fi
  if (($# > 0)); then "$@"; fi
fi
