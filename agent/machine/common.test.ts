import { describe, expect, it } from 'vitest';
import { goArch, goOS, internalIPs } from './common.js';

describe('Kubernetes names', () => {
  it('maps Node architectures to GOARCH', () => {
    expect(goArch('x64')).toBe('amd64');
    expect(goArch('arm64')).toBe('arm64');
    expect(goArch('arm')).toBe('arm');
    expect(goArch('ia32')).toBe('386');
    expect(goArch('ppc64', 'LE')).toBe('ppc64le');
    expect(goArch('ppc64', 'BE')).toBe('ppc64');
    expect(goArch('s390x')).toBe('s390x');
    expect(goArch('riscv64')).toBe('riscv64');
    expect(goArch('mipsel')).toBe('mipsle');
  });

  it('maps Node platforms to GOOS', () => {
    expect(goOS('linux')).toBe('linux');
    expect(goOS('darwin')).toBe('darwin');
    expect(goOS('win32')).toBe('windows');
    expect(goOS('freebsd')).toBe('freebsd');
    expect(goOS('sunos')).toBe('solaris');
  });
});

describe('internalIPs', () => {
  const a = (address: string, family: 'IPv4' | 'IPv6', internal = false) => ({
    address,
    family,
    internal,
    netmask: '',
    mac: '00:00:00:00:00:00',
    cidr: null,
    ...(family === 'IPv6' ? { scopeid: 0 } : {}),
  });

  it('publishes IPv4 first, link-local IPv4 after it, then IPv6 that is not link-local', () => {
    const ifaces = {
      lo: [a('127.0.0.1', 'IPv4', true), a('::1', 'IPv6', true)],
      eth0: [a('fe80::1', 'IPv6'), a('2001:db8::5', 'IPv6'), a('192.168.1.20', 'IPv4')],
      apipa: [a('169.254.3.4', 'IPv4')],
      wlan0: [a('10.0.0.7', 'IPv4'), a('FE80::2', 'IPv6'), a('fd00::7', 'IPv6'), a('192.168.1.20', 'IPv4')],
    } as unknown as Parameters<typeof internalIPs>[0];
    expect(internalIPs(ifaces)).toEqual([
      '192.168.1.20',
      '10.0.0.7',
      '169.254.3.4',
      '2001:db8::5',
      'fd00::7',
    ]);
    expect(internalIPs({})).toEqual([]);
  });
});
