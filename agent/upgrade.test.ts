import { describe, expect, it } from 'vitest';
import { agentFileName, serviceManager } from './upgrade.js';

describe('agent upgrades', () => {
  it('ask the control plane for the executable named as build:agent names it, per platform', () => {
    expect(agentFileName('linux', 'x64')).toBe('kubelab-agent-linux-x64');
    expect(agentFileName('linux', 'arm64')).toBe('kubelab-agent-linux-arm64');
    expect(agentFileName('win32', 'x64')).toBe('kubelab-agent-windows-x64.exe');
    expect(agentFileName('darwin', 'arm64')).toBe('kubelab-agent-darwin-arm64');
  });

  it('know the service manager they run under from its environment', () => {
    expect(serviceManager({ INVOCATION_ID: 'abc' })?.restart).toEqual([
      'systemctl',
      'restart',
      'kubelab-agent',
    ]);
    expect(serviceManager({ XPC_SERVICE_NAME: 'io.kubelab.agent' })?.name).toBe('launchd');
    expect(serviceManager({})).toBeUndefined();
  });
});
