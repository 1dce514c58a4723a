#!/usr/bin/env bash
# Installs kubelab-agent as a systemd service on a Linux lab machine.
#   KUBELAB_TOKEN='K10…::…' sudo --preserve-env=KUBELAB_TOKEN ./install.sh --server https://10.0.0.2:6443 [--binary ./kubelab-agent] [-- extra agent flags]
# The join token comes from KUBELAB_TOKEN (--token works too, but any user sees it in `ps`); it is
# only needed for the first start: the agent keeps its own credential afterwards.
set -euo pipefail

server="" token="${KUBELAB_TOKEN:-}" binary="$(dirname "$0")/kubelab-agent" extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server="$2"; shift 2 ;;
    --token) token="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$server" ] || { echo "install.sh: --server https://<control plane>:6443 is required" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "install.sh: run as root (sudo)" >&2; exit 1; }
# sudo passes on only the variables it is asked to: without the token the agent could not join.
[ -n "$token" ] || [ -e /var/lib/kubelab-agent/credentials.json ] || {
  echo "install.sh: no join token: run it as KUBELAB_TOKEN='K10…::…' sudo --preserve-env=KUBELAB_TOKEN $0 --server $server (create a token with \`kubelab token create\` on the control plane)" >&2
  exit 2
}
[ -x "$binary" ] || { echo "install.sh: no agent binary at $binary: build it with \`npm run build:agent\` (dist/agent/kubelab-agent) or pass --binary" >&2; exit 1; }
command -v systemctl >/dev/null || { echo "install.sh: systemd not found; run kubelab-agent under your service manager instead (see the README)" >&2; exit 1; }

install -m 0755 "$binary" /usr/local/bin/kubelab-agent
# Pods that name no user run as this unprivileged system user, never as root.
if ! id -u kubelab-pods >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin kubelab-pods
fi
case " ${extra[*]:-} " in
  *" --pod-user"*) ;;
  *) extra+=(--pod-user kubelab-pods) ;;
esac
install -d -m 0700 /etc/kubelab-agent /var/lib/kubelab-agent
umask 077
{
  echo "KUBELAB_SERVER=$server"
  [ -n "$token" ] && echo "KUBELAB_TOKEN=$token"
  echo "KUBELAB_AGENT_ARGS=${extra[*]:-}"
} > /etc/kubelab-agent/agent.env
install -m 0644 "$(dirname "$0")/kubelab-agent.service" /etc/systemd/system/kubelab-agent.service
systemctl daemon-reload
systemctl enable --now kubelab-agent
echo "kubelab-agent installed and started; follow it with: journalctl -u kubelab-agent -f"
