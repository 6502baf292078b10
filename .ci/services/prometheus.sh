# A throwaway Prometheus for the gateway's metrics test: on a free loopback port, its data in a temp
# dir, scraping every second whatever targets a test writes as JSON files into
# $TOOLGATE_PROMETHEUS_TARGETS (file-based service discovery, so a gateway on a port picked at run
# time can be scraped). Exports TOOLGATE_PROMETHEUS_URL and stops it and deletes the dir on exit.
#
# .ci/run sources this file (it provides `step` and `on_exit`). Locally, either run a command with a
# server beside it:
#   bash .ci/services/prometheus.sh -- npx jest packages/gateway/test/prometheus.test.ts --maxWorkers=1
# or `source .ci/services/prometheus.sh` in an interactive bash; the server stops when that shell exits.
# Also exported: TOOLGATE_PROMTOOL (Debian's promtool, shipped with prometheus), for the rules check.

# step, on_exit and toolgate_free_port.
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../standalone.sh"

# Stops the server whose pid is in $1/prometheus.pid, then deletes the folder.
toolgate_prometheus_stop() {
  toolgate_prometheus_kill "$1"
  rm -rf "$1"
}

# Stops the server whose pid is in $1/prometheus.pid.
toolgate_prometheus_kill() {
  local dir=$1 pid
  if [[ -f $dir/prometheus.pid ]]; then
    pid=$(cat "$dir/prometheus.pid")
    if [[ -n $pid ]] && kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/prometheus.pid"
  fi
}

# Answers 0 once the server on port $1 says it is ready, within about 20 seconds.
toolgate_prometheus_wait() {
  local port=$1 pid=$2
  for _ in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || return 1
    if curl -fsS "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

toolgate_prometheus_start() {
  local dir port attempt pid
  if ! command -v prometheus >/dev/null 2>&1; then
    if [[ $(id -u) != 0 ]]; then
      echo 'prometheus: prometheus not found; install it (e.g. apt-get install prometheus) or put it on PATH' >&2
      return 1
    fi
    echo 'prometheus: prometheus not found; installing Debian'"'"'s prometheus'
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null ||
      return 1
    command -v prometheus >/dev/null 2>&1 || {
      echo 'prometheus: still no prometheus after installing it' >&2
      return 1
    }
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-prometheus.XXXXXX") || return 1
  on_exit "toolgate_prometheus_stop $(printf '%q' "$dir")"
  mkdir -p "$dir/targets" "$dir/data"
  cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: toolgate
    file_sd_configs:
      - files: ['$dir/targets/*.json']
        refresh_interval: 1s
EOF
  # Debian's package may start a system server on 9090; this one is ours, on its own port.
  for attempt in 1 2 3; do
    port=$(toolgate_free_port) || return 1
    prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
      --web.listen-address="127.0.0.1:$port" --log.level=warn >"$dir/prometheus.log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/prometheus.pid"
    if toolgate_prometheus_wait "$port" "$pid"; then break; fi
    toolgate_prometheus_kill "$dir"
    port=''
  done
  if [[ -z $port ]]; then
    echo 'prometheus: the server did not start:' >&2
    tail -n 20 "$dir/prometheus.log" >&2 2>/dev/null
    return 1
  fi
  export TOOLGATE_PROMETHEUS_URL="http://127.0.0.1:$port"
  export TOOLGATE_PROMETHEUS_TARGETS="$dir/targets"
  export TOOLGATE_PROMTOOL
  TOOLGATE_PROMTOOL=$(command -v promtool || true)
  echo "prometheus: $(prometheus --version 2>&1 | head -n 1 | cut -d ' ' -f 1-3) on 127.0.0.1:$port (TOOLGATE_PROMETHEUS_URL is set)"
}

step prometheus toolgate_prometheus_start

# Run directly: `bash .ci/services/prometheus.sh -- <command...>` runs the command beside the server.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  [[ ${1:-} == -- ]] && shift
  if [[ -z ${TOOLGATE_PROMETHEUS_URL:-} ]]; then exit 1; fi
  if (($# > 0)); then "$@"; fi
fi
