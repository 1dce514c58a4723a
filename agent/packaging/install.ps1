# kubelab-agent installer for Windows: joins this machine to a kubelab control plane.
# In PowerShell as Administrator (the line `kubelab token create` and the GUI print):
#   $env:KUBELAB_TOKEN='K10…::…'; $env:KUBELAB_SERVER='https://10.0.0.2:6443'; [Net.ServicePointManager]::ServerCertificateValidationCallback={$true}; iex (irm https://10.0.0.2:6443/install.ps1)
# What it does: (1) trusts the control plane only if its CA certificate is the one the join token
# pins (K10<sha256>::…); (2) downloads kubelab-agent-windows-x64.exe and its .sha256 and checks
# the checksum; (3) installs it in %ProgramFiles%\kubelab, its settings and data in
# %ProgramData%\kubelab-agent (Administrators and SYSTEM only); (4) registers a scheduled task that
# starts it at boot as SYSTEM, and starts it. (A Node executable cannot answer the Windows service
# protocol, so it runs as a boot task rather than a service.) Run it again to upgrade in place;
# set $env:KUBELAB_UNINSTALL='1' to remove it all.
$ErrorActionPreference = 'Stop'
$server = ($env:KUBELAB_SERVER -replace '/+$', '')
$token = $env:KUBELAB_TOKEN
$bin = Join-Path $env:ProgramFiles 'kubelab'
$exe = Join-Path $bin 'kubelab-agent.exe'
$data = Join-Path $env:ProgramData 'kubelab-agent'
$task = 'kubelab-agent'

function Fail($message) { Write-Error "install.ps1: $message"; exit 1 }

$principal = New-Object Security.Principal.WindowsPrincipal([Security.Principal.WindowsIdentity]::GetCurrent())
if (-not $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)) { Fail 'run PowerShell as Administrator' }

if ($env:KUBELAB_UNINSTALL -eq '1') {
  Stop-ScheduledTask -TaskName $task -ErrorAction SilentlyContinue
  Unregister-ScheduledTask -TaskName $task -Confirm:$false -ErrorAction SilentlyContinue
  Get-Process kubelab-agent -ErrorAction SilentlyContinue | Stop-Process -Force
  Remove-Item -Recurse -Force $bin, $data -ErrorAction SilentlyContinue
  Write-Output 'kubelab-agent removed (delete its Node on the control plane: labctl delete node <name>)'
  exit 0
}

if (-not $server) { Fail "set `$env:KUBELAB_SERVER to the control plane's address, e.g. https://10.0.0.2:6443" }
if (-not $token -and -not (Test-Path (Join-Path $data 'credentials.json'))) { Fail 'no join token: set $env:KUBELAB_TOKEN (create one with `kubelab token create` on the control plane)' }

# (1) The CA pin: the token's hash, or the CA an earlier install checked.
New-Item -ItemType Directory -Force -Path $data | Out-Null
$caFile = Join-Path $data 'ca.crt'
if ($token) {
  if ($token -notmatch '^K10([0-9a-f]{64})::') { Fail 'the join token is malformed: it looks like K10<64 hex digits>::<id>.<secret>' }
  $pin = $Matches[1]
} elseif (Test-Path $caFile) {
  $known = New-Object Security.Cryptography.X509Certificates.X509Certificate2($caFile)
  $pin = ([BitConverter]::ToString([Security.Cryptography.SHA256]::Create().ComputeHash($known.RawData)) -replace '-', '').ToLower()
} else { Fail "no join token and no CA from an earlier install in $data" }

# Every connection from here on is trusted only if its chain ends at the pinned CA.
[Net.ServicePointManager]::SecurityProtocol = [Net.SecurityProtocolType]::Tls12
[Net.ServicePointManager]::ServerCertificateValidationCallback = {
  param($sender, $certificate, $chain, $errors)
  $root = $chain.ChainElements[$chain.ChainElements.Count - 1].Certificate
  $hash = ([BitConverter]::ToString([Security.Cryptography.SHA256]::Create().ComputeHash($root.RawData)) -replace '-', '').ToLower()
  return $hash -eq $pin
}
$web = New-Object Net.WebClient
try { $web.DownloadFile("$server/cacerts", $caFile) } catch { Fail "cannot reach $server, or its CA certificate does not match the join token: check the address, or get a fresh token ($($_.Exception.Message))" }

# (2) The executable, checked against its checksum.
$file = 'kubelab-agent-windows-x64.exe'
$download = Join-Path $env:TEMP "$file.download"
Write-Output "downloading $file from $server ..."
try {
  $web.DownloadFile("$server/agent/$file", $download)
  $want = ($web.DownloadString("$server/agent/$file.sha256").Substring(0, 64)).ToLower()
} catch { Fail "$server has no $file: build the agents there with ``npm run build:agent``" }
$got = (Get-FileHash -Algorithm SHA256 $download).Hash.ToLower()
if ($got -ne $want) { Remove-Item $download; Fail "the downloaded $file is not the one the control plane built (sha256 $got, expected $want): not installed" }

# (3) Installed, its settings readable by Administrators and SYSTEM only.
Stop-ScheduledTask -TaskName $task -ErrorAction SilentlyContinue
Get-Process kubelab-agent -ErrorAction SilentlyContinue | Stop-Process -Force
New-Item -ItemType Directory -Force -Path $bin | Out-Null
Move-Item -Force $download $exe
& icacls $data /inheritance:r /grant:r 'Administrators:(OI)(CI)F' 'SYSTEM:(OI)(CI)F' | Out-Null
$envFile = Join-Path $data 'agent.env'
$lines = @("KUBELAB_SERVER=$server")
if ($token) { $lines += "KUBELAB_TOKEN=$token" } elseif (Test-Path $envFile) { $lines += (Get-Content $envFile | Where-Object { $_ -like 'KUBELAB_TOKEN=*' }) }
Set-Content -Path $envFile -Value $lines

# (4) A boot task as SYSTEM: it reads the token from agent.env so no command line shows it.
$command = "Get-Content '$envFile' | ForEach-Object { `$k, `$v = `$_ -split '=', 2; Set-Item -Path env:`$k -Value `$v }; & '$exe' --server `$env:KUBELAB_SERVER --data-dir '$data'"
$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument "-NoProfile -WindowStyle Hidden -Command `"$command`""
$trigger = New-ScheduledTaskTrigger -AtStartup
$settings = New-ScheduledTaskSettingsSet -RestartCount 999 -RestartInterval (New-TimeSpan -Minutes 1) -ExecutionTimeLimit ([TimeSpan]::Zero)
Register-ScheduledTask -TaskName $task -Action $action -Trigger $trigger -Settings $settings -User 'SYSTEM' -RunLevel Highest -Force | Out-Null
Start-ScheduledTask -TaskName $task
Write-Output "kubelab-agent installed and started (scheduled task '$task'); it starts again at every boot"
