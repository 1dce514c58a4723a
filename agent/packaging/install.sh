#!/bin/sh
# kubelab-agent installer: joins this machine (Linux or macOS) to a kubelab control plane.
#   curl -fsSLk https://10.0.0.2:6443/install.sh | sudo KUBELAB_TOKEN='K10…::…' sh -s - --server https://10.0.0.2:6443
# Options: --server URL (required), --token T (prefer KUBELAB_TOKEN: a flag shows in `ps`),
#   --prefix DIR (install under DIR instead of /), --binary FILE (this agent executable instead
#   of downloading one), --uninstall, -- extra kubelab-agent flags.
# What it does: (1) downloads the cluster's CA certificate from <server>/cacerts and checks it
# against the hash the join token carries (K10<sha256>::…) — nothing downloaded is trusted before;
# (2) downloads kubelab-agent-<os>-<arch> and its .sha256 over TLS pinned to that CA, and checks
# the checksum; (3) installs it as <prefix>/usr/local/bin/kubelab-agent, its settings in
# <prefix>/etc/kubelab-agent (0600); (4) starts it as a systemd service (Linux) or a launchd
# daemon (macOS) — without one, it says how to start it. Run it again to upgrade in place: the
# node keeps its identity (its credential stays in <prefix>/var/lib/kubelab-agent).
set -eu

server="" token="${KUBELAB_TOKEN:-}" prefix="" binary="" uninstall=""
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server="${2:?--server needs a URL}"; shift 2 ;;
    --token) token="${2:?--token needs a value}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    --binary) binary="${2:?--binary needs a file}"; shift 2 ;;
    --uninstall) uninstall=1; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,14p' "$0" 2>/dev/null || echo "see https://github.com/kubelab/kubelab#adding-a-lab-machine-kubelab-agent"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
extra="$*"

fail() { echo "install.sh: $*" >&2; exit 1; }
prefix="${prefix%/}"
bin="$prefix/usr/local/bin/kubelab-agent"
etc="$prefix/etc/kubelab-agent"
data="$prefix/var/lib/kubelab-agent"
os="$(uname -s)"
unit=/etc/systemd/system/kubelab-agent.service
plist=/Library/LaunchDaemons/io.kubelab.agent.plist
# A service manager only for a system install (no --prefix).
manager=""
if [ -z "$prefix" ]; then
  if [ "$os" = Darwin ]; then manager=launchd
  elif [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then manager=systemd
  fi
fi

stop_service() {
  case "$manager" in
    systemd) systemctl disable --now kubelab-agent >/dev/null 2>&1 || true ;;
    launchd) launchctl bootout system "$plist" >/dev/null 2>&1 || true ;;
  esac
}

if [ -n "$uninstall" ]; then
  stop_service
  # Its pods run in process groups of their own, each led by a kubelab-wrapper whose files are
  # in this agent's data folder: stop them too (and no other agent's).
  for pid in $(pgrep -f "kubelab-wrapper $data/pods/" 2>/dev/null || true); do kill -TERM "-$pid" 2>/dev/null || true; done
  [ "$manager" = systemd ] && rm -f "$unit" && systemctl daemon-reload
  [ "$manager" = launchd ] && rm -f "$plist"
  rm -rf "$bin" "$etc" "$data"
  echo "kubelab-agent removed (delete its Node on the control plane: labctl delete node <name>)"
  exit 0
fi

sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum | cut -c1-64; else shasum -a 256 | cut -c1-64; fi; }
# A local executable with its checksum beside it (as `npm run build:agent` writes them) is
# checked before anything else happens.
if [ -n "$binary" ] && [ -f "$binary.sha256" ]; then
  [ "$(sha256 <"$binary")" = "$(cut -c1-64 "$binary.sha256")" ] || fail "$binary does not match its checksum in $binary.sha256: not installed"
fi
[ -n "$server" ] || fail "--server https://<control plane>:6443 is required"
server="${server%/}"
if [ -z "$prefix" ] && [ "$(id -u)" != 0 ]; then fail "run it as root (sudo), or install under a folder of yours with --prefix"; fi
[ -n "$token" ] || [ -e "$data/credentials.json" ] || fail "no join token: run it as KUBELAB_TOKEN='K10…::…' sudo -E sh install.sh --server $server (create one with \`kubelab token create\` on the control plane)"
command -v curl >/dev/null 2>&1 || fail "curl is needed: install it (apt install curl)"

b64decode() { if [ "$os" = Darwin ]; then base64 -D; else base64 -d; fi; }

umask 077
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$etc"

# (1) The CA: checked against the token's hash (of the certificate's DER bytes), or the one an
# earlier install checked.
if [ -n "$token" ]; then
  pin="$(printf '%s' "$token" | sed -n 's/^K10\([0-9a-f]\{64\}\)::.*$/\1/p')"
  [ -n "$pin" ] || fail "the join token is malformed: it looks like K10<64 hex digits>::<id>.<secret>; copy it again from \`kubelab token create\`"
  curl -fsSk "$server/cacerts" -o "$work/ca.crt" || fail "cannot reach $server (is the control plane running, and is the address right?)"
  got="$(sed -n '/-----BEGIN CERTIFICATE-----/,/-----END CERTIFICATE-----/p' "$work/ca.crt" | sed '1d;$d' | b64decode | sha256)"
  [ "$got" = "$pin" ] || fail "the CA certificate $server sent does not match the join token (the token pins sha256 $pin, the server sent $got): check that --server is your control plane, or get a fresh token"
  cp "$work/ca.crt" "$etc/ca.crt"
elif [ ! -s "$etc/ca.crt" ]; then
  fail "no join token and no CA from an earlier install in $etc: pass KUBELAB_TOKEN"
fi
fetch() { curl -fsSL --cacert "$etc/ca.crt" "$server/$1" -o "$2"; }

# (2) The executable, checked against its checksum.
if [ -n "$binary" ]; then
  [ -f "$binary" ] || fail "no agent executable at $binary"
  cp "$binary" "$work/kubelab-agent"
else
  case "$os" in Linux) goos=linux ;; Darwin) goos=darwin ;; *) fail "$os is not supported: use install.ps1 on Windows" ;; esac
  case "$(uname -m)" in
    x86_64|amd64) arch=x64 ;;
    aarch64|arm64) arch=arm64 ;;
    *) fail "$(uname -m) machines are not supported yet (kubelab builds x64 and arm64 agents)" ;;
  esac
  file="kubelab-agent-$goos-$arch"
  echo "downloading $file from $server …"
  if ! fetch "agent/$file" "$work/kubelab-agent"; then
    [ "$goos" = darwin ] && fail "$server has no $file: kubelab builds no macOS executable (macOS needs it re-signed, which only a Mac can do); run the agent with Node there (see the README)"
    fail "$server has no $file: build the agents there with \`npm run build:agent\`"
  fi
  fetch "agent/$file.sha256" "$work/sum" || fail "$server has no checksum for $file"
  want="$(cut -c1-64 "$work/sum")"
  got="$(sha256 <"$work/kubelab-agent")"
  [ "$got" = "$want" ] || fail "the downloaded $file is not the one the control plane built (sha256 $got, expected $want): not installed"
fi
chmod 0755 "$work/kubelab-agent"
"$work/kubelab-agent" --version >/dev/null 2>&1 || fail "the agent executable does not run on this machine ($(uname -sm))"

# (3) Installed: replaced in one step (a running agent keeps its old file until it restarts).
stop_service
mkdir -p "$(dirname "$bin")" "$data"
chmod 0700 "$etc" "$data"
cp "$work/kubelab-agent" "$bin.new" && mv -f "$bin.new" "$bin"
args="--data-dir $data"
# Pods that name no user run as an unprivileged user, never as root (a system install makes it).
if [ -z "$prefix" ] && [ "$os" = Linux ] && ! id -u kubelab-pods >/dev/null 2>&1 && command -v useradd >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin kubelab-pods
fi
if id -u kubelab-pods >/dev/null 2>&1; then
  case " $extra " in *" --pod-user"*) ;; *) args="$args --pod-user kubelab-pods" ;; esac
fi
{
  echo "KUBELAB_SERVER=$server"
  if [ -n "$token" ]; then echo "KUBELAB_TOKEN=$token"; else grep '^KUBELAB_TOKEN=' "$etc/agent.env" 2>/dev/null || true; fi
  echo "KUBELAB_AGENT_ARGS=\"$args${extra:+ $extra}\""
} >"$work/agent.env"
mv -f "$work/agent.env" "$etc/agent.env"

# (4) Started.
start_line="sh -c 'set -a; . $etc/agent.env; exec $bin --server \"\$KUBELAB_SERVER\" \$KUBELAB_AGENT_ARGS'"
case "$manager" in
  systemd)
    fetch agent/kubelab-agent.service "$work/unit" || fail "$server has no kubelab-agent.service"
    install -m 0644 "$work/unit" "$unit"
    systemctl daemon-reload
    systemctl enable --now kubelab-agent
    echo "kubelab-agent installed and started; follow it with: journalctl -u kubelab-agent -f"
    ;;
  launchd)
    cat >"$plist" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
  <key>Label</key><string>io.kubelab.agent</string>
  <key>ProgramArguments</key><array><string>/bin/sh</string><string>-c</string><string>set -a; . $etc/agent.env; exec $bin --server "\$KUBELAB_SERVER" \$KUBELAB_AGENT_ARGS</string></array>
  <key>RunAtLoad</key><true/><key>KeepAlive</key><true/>
  <key>StandardErrorPath</key><string>/var/log/kubelab-agent.log</string>
</dict></plist>
PLIST
    chmod 0644 "$plist"
    launchctl bootstrap system "$plist"
    echo "kubelab-agent installed and started; its log: /var/log/kubelab-agent.log"
    ;;
  *)
    echo "kubelab-agent installed in $bin; no service manager here, so start it yourself (and at every boot):"
    echo "  $start_line"
    ;;
esac
