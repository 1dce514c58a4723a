import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { checkNodeIP, ipBytes, nodeIPProblem } from './nodeip.js';

function addr(address: string, internal = false): NetworkInterfaceInfo {
  const v6 = address.includes(':');
  return {
    address,
    netmask: v6 ? 'ffff:ffff:ffff:ffff::' : '255.255.255.0',
    family: v6 ? 'IPv6' : 'IPv4',
    mac: '02:00:00:00:00:01',
    internal,
    cidr: `${address}/${v6 ? 64 : 24}`,
    ...(v6 ? { scopeid: 0 } : {}),
  } as NetworkInterfaceInfo;
}

/** A lab machine: loopback, one wired interface with IPv4, ULA and link-local IPv6. */
const machine = {
  lo: [addr('127.0.0.1', true), addr('::1', true)],
  eth0: [addr('192.168.1.20'), addr('fd00::20'), addr('fe80::fc:ff:fe00:1')],
};

describe('ipBytes', () => {
  it('reads IPv4, IPv6 in every spelling, and IPv4-mapped IPv6 as IPv4', () => {
    expect(ipBytes('192.168.1.20')).toEqual([192, 168, 1, 20]);
    expect(ipBytes('fd00::20')).toEqual(ipBytes('FD00:0:0:0:0:0:0:20'));
    expect(ipBytes('fd00::20')).toHaveLength(16);
    expect(ipBytes('::')).toEqual(Array(16).fill(0));
    expect(ipBytes('::ffff:192.168.1.20')).toEqual([192, 168, 1, 20]);
    expect(ipBytes('fe80::1%eth0')).toEqual(ipBytes('fe80::1'));
    for (const bad of ['', 'lab-1', '10.0.0.300', '10.0.0', 'fd00:::1']) expect(ipBytes(bad)).toBeUndefined();
  });
});

describe("nodeIPProblem (the kubelet's validateNodeIP)", () => {
  it("accepts an address of one of the machine's interfaces, however it is spelt", () => {
    for (const ip of ['192.168.1.20', 'fd00::20', 'FD00:0::20', '::ffff:192.168.1.20']) {
      expect(nodeIPProblem(ip, machine), ip).toBeUndefined();
    }
    expect(() => checkNodeIP('192.168.1.20', machine)).not.toThrow();
  });

  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.4.5.6', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['224.0.0.1', 'a multicast address'],
    ['239.255.255.250', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['0.0.0.0', 'the unspecified address'],
    ['::', 'the unspecified address'],
    ['169.254.10.1', 'a link-local address'],
    ['fe80::fc:ff:fe00:1', 'a link-local address'],
  ])('refuses %s: %s, even when an interface has it', (ip, kind) => {
    const problem = nodeIPProblem(ip, machine);
    expect(problem).toContain(`--node-ip ${ip} is ${kind}`);
    expect(problem).toContain(
      "use one of this machine's addresses (192.168.1.20, fd00::20), or leave --node-ip out to publish 192.168.1.20",
    );
  });

  it('refuses an address no interface has, and what is not an address', () => {
    expect(nodeIPProblem('192.168.1.21', machine)).toBe(
      "--node-ip 192.168.1.21 is not an address of any of this machine's network interfaces: use one of this machine's addresses (192.168.1.20, fd00::20), or leave --node-ip out to publish 192.168.1.20",
    );
    expect(nodeIPProblem('fd00::21', machine)).toContain('is not an address of any');
    expect(nodeIPProblem('lab-1', machine)).toContain('--node-ip "lab-1" is not an IP address');
    expect(() => checkNodeIP('10.9.9.9', machine)).toThrow(/--node-ip 10\.9\.9\.9 is not an address/);
  });

  it('says so when the machine has no address to offer', () => {
    expect(nodeIPProblem('10.0.0.5', { lo: machine.lo })).toContain(
      'this machine has no other address to offer: connect it to the network the control plane is on, or leave --node-ip out',
    );
  });
});
