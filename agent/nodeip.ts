/**
 * --node-ip, checked as the kubelet's validateNodeIP checks --node-ip: the address other
 * machines will use to reach this node must be one of this machine's own, and one they can
 * reach — not loopback, multicast, link-local or all zeros. A wrong one would otherwise be
 * published as InternalIP without a word, and pods' hostIP with it. Pure: the caller passes
 * the interfaces (os.networkInterfaces() by default).
 */
import { isIP } from 'node:net';
import os from 'node:os';
import { internalIPs } from './machine/common.js';

type Interfaces = NodeJS.Dict<os.NetworkInterfaceInfo[]>;

/** The address as bytes (4 for IPv4, 16 for IPv6), or undefined when it is no IP address. */
export function ipBytes(address: string): number[] | undefined {
  // A zone ("fe80::1%eth0") names an interface; it is not part of the address.
  const bare = address.trim().replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return bare.split('.').map(Number);
  if (family !== 6) return undefined;
  let text = bare.toLowerCase();
  // A trailing dotted quad ("::ffff:192.0.2.2") is the last two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groupsOf = (part: string | undefined) => (part ? part.split(':') : []);
  const groups =
    tail === undefined
      ? groupsOf(head)
      : [
          ...groupsOf(head),
          ...Array<string>(8 - groupsOf(head).length - groupsOf(tail).length).fill('0'),
          ...groupsOf(tail),
        ];
  const bytes = groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 255];
  });
  // An IPv4-mapped IPv6 address is that IPv4 address (as Go's net.IP has it).
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255;
  return mapped ? bytes.slice(12) : bytes;
}

/** What kind of address no node may publish `bytes` is, or undefined for an ordinary one. */
function unusable(bytes: number[]): string | undefined {
  const allZero = bytes.every((b) => b === 0);
  if (bytes.length === 4) {
    if (bytes[0] === 127) return 'a loopback address, which only this machine can reach';
    if (bytes[0] >= 224 && bytes[0] <= 239) return "a multicast address, which is no machine's own";
    if (bytes[0] === 169 && bytes[1] === 254)
      return 'a link-local address (169.254.0.0/16), which routers do not forward';
    if (allZero) return "the unspecified address (all zeros), which is no machine's own";
    return undefined;
  }
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1)
    return 'a loopback address, which only this machine can reach';
  if (bytes[0] === 0xff) return "a multicast address, which is no machine's own";
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0x80)
    return 'a link-local address (fe80::/10), which routers do not forward';
  if (allZero) return "the unspecified address (all zeros), which is no machine's own";
  return undefined;
}

function sameAddress(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Why `ip` cannot be this node's --node-ip, as one sentence naming the flag and what to do
 * instead; undefined when it can.
 */
export function nodeIPProblem(
  ip: string,
  interfaces: Interfaces = os.networkInterfaces(),
): string | undefined {
  // What to offer instead: the addresses the agent would publish by itself (the first of them
  // without --node-ip), less those this check refuses (it keeps a link-local one as a last resort).
  const published = internalIPs(interfaces);
  const usable = published.filter((a) => {
    const b = ipBytes(a);
    return b !== undefined && unusable(b) === undefined;
  });
  const instead = usable.length
    ? `use one of this machine's addresses (${usable.join(', ')}), or leave --node-ip out to publish ${published[0]}`
    : 'this machine has no other address to offer: connect it to the network the control plane is on, or leave --node-ip out';
  const bytes = ipBytes(ip);
  if (!bytes) return `--node-ip "${ip}" is not an IP address: ${instead}`;
  const kind = unusable(bytes);
  if (kind) return `--node-ip ${ip} is ${kind}: ${instead}`;
  const assigned = Object.values(interfaces)
    .flatMap((addrs) => addrs ?? [])
    .some((a) => {
      const b = ipBytes(a.address);
      return b !== undefined && sameAddress(b, bytes);
    });
  if (assigned) return undefined;
  return `--node-ip ${ip} is not an address of any of this machine's network interfaces: ${instead}`;
}

/** Throws when `ip` cannot be this node's --node-ip (see nodeIPProblem). */
export function checkNodeIP(ip: string, interfaces?: Interfaces): void {
  const problem = nodeIPProblem(ip, interfaces);
  if (problem) throw new Error(problem);
}
