/**
 * The one line that adds a machine, per platform, as `kubelab token create` and the GUI's Add
 * node page print it. The script is fetched from the control plane before its CA is known
 * (curl -k; PowerShell without validation for that one request): it is short and readable, and
 * the first thing it does is check the CA it then downloads against the hash in the token.
 */
export interface InstallCommand {
  os: string;
  line: string;
}

export function installCommands(server: string, token: string): InstallCommand[] {
  const url = server.replace(/\/+$/, '');
  return [
    {
      os: 'Linux (x64, arm64: Raspberry Pi OS 64-bit) and macOS',
      line: `curl -fsSLk ${url}/install.sh | sudo KUBELAB_TOKEN='${token}' sh -s - --server ${url}`,
    },
    {
      os: 'Windows (PowerShell as Administrator)',
      line: `$env:KUBELAB_TOKEN='${token}'; $env:KUBELAB_SERVER='${url}'; [Net.ServicePointManager]::ServerCertificateValidationCallback={$true}; iex (irm ${url}/install.ps1)`,
    },
  ];
}
