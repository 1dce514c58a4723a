/**
 * The address a lab machine's agent should dial to reach this control plane, from where it
 * listens: the address itself when it names one, this machine's first LAN address when it
 * listens on every address, and — when it listens on loopback only — that no other machine
 * can reach it at all, which the banner and the GUI's Add node page say before anyone tries.
 */
import { hostname, networkInterfaces } from 'node:os';
import { isLoopback } from './grpc/server.js';

export interface AgentAddress {
  /** https://host:port */
  url: string;
  /** Other machines can reach it (false: the server listens on a loopback address). */
  reachable: boolean;
}

/** This machine's first non-loopback IPv4 address, or its hostname. */
export function lanAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return hostname();
}

export function agentAddress(listenHost: string, port: number, tls = true): AgentAddress {
  const scheme = tls ? 'https' : 'http';
  const host =
    listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '' ? lanAddress() : listenHost;
  return {
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    reachable: !isLoopback(listenHost),
  };
}
