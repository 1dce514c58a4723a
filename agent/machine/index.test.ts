import { describe, expect, it } from 'vitest';
import { LinuxMachineReader, PortableMachineReader, defaultMachineReader } from './index.js';

describe('defaultMachineReader', () => {
  it('reads /proc on Linux and goes through systeminformation elsewhere', () => {
    expect(defaultMachineReader('/tmp/kubelab', 'linux')).toBeInstanceOf(LinuxMachineReader);
    expect(defaultMachineReader('/tmp/kubelab', 'darwin')).toBeInstanceOf(PortableMachineReader);
    expect(defaultMachineReader('C:\\kubelab', 'win32')).toBeInstanceOf(PortableMachineReader);
    expect(defaultMachineReader('/tmp/kubelab')).toBeInstanceOf(
      process.platform === 'linux' ? LinuxMachineReader : PortableMachineReader,
    );
  });
});
