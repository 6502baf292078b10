# Shared by the scripts in .ci/services. Under .ci/run they use its `step` and `on_exit`; run on
# their own (`bash .ci/services/<name>.sh -- <command>`), they get these stand-ins instead.

if ! declare -F step >/dev/null; then
  step() {
    local name=$1
    shift
    printf '\n==> %s\n' "$name"
    "$@" || {
      echo "$name: failed" >&2
      return 1
    }
  }
fi
if ! declare -F on_exit >/dev/null; then
  toolgate_cleanups=()
  on_exit() { toolgate_cleanups+=("$1"); }
  toolgate_run_cleanups() {
    local c
    for c in "${toolgate_cleanups[@]}"; do eval "$c" || true; done
  }
  trap toolgate_run_cleanups EXIT
fi

# A free TCP port on loopback, for a throwaway server.
toolgate_free_port() {
  node -e '
    const server = require("net").createServer();
    server.listen(0, "127.0.0.1", () => { console.log(server.address().port); server.close(); });
  '
}
