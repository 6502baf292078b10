# Shared by .ci/run and .ci/test-on-node.sh: `toolgate_node MAJOR` prints the bin folder of the
# official Node MAJOR binary for this machine, as the npm registry's `node-<os>-<arch>` package ships
# it (no nodejs.org download), fetched once per run into $TOOLGATE_NODE_DIR (a temp folder by default).

toolgate_node() {
  local major=$1 platform dir
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=linux-x64 ;;
    Linux-aarch64) platform=linux-arm64 ;;
    Darwin-arm64) platform=darwin-arm64 ;;
    Darwin-x86_64) platform=darwin-x64 ;;
    *)
      echo "node $major: no node-<os>-<arch> package known for $(uname -s) $(uname -m)" >&2
      return 1
      ;;
  esac
  : "${TOOLGATE_NODE_DIR:=$(mktemp -d)}"
  export TOOLGATE_NODE_DIR
  dir=$TOOLGATE_NODE_DIR/$major
  if [[ ! -x $dir/node_modules/node-$platform/bin/node ]]; then
    # npm only downloads here (whichever Node runs it); nothing is built or tested with that Node.
    npm install --silent --no-audit --no-fund --no-save --prefix "$dir" "node-$platform@$major" </dev/null >&2 || {
      echo "node $major: could not install node-$platform@$major from the npm registry" >&2
      return 1
    }
  fi
  [[ -x $dir/node_modules/node-$platform/bin/node ]] || {
    echo "node $major: node-$platform@$major has no bin/node" >&2
    return 1
  }
  printf '%s\n' "$dir/node_modules/node-$platform/bin"
}
