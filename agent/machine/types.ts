/**
 * What the agent needs to know of its machine. Real readers read it (Linux: /proc and statfs,
 * cheap enough for a 10 s loop; elsewhere: systeminformation); the hollow reader makes it up,
 * under a test's control.
 */

/** Facts that do not change while the agent runs (read once at start). */
export interface MachineInfo {
  hostname: string;
  /** Addresses to publish: InternalIP first. */
  internalIPs: string[];
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  /** e.g. "Debian GNU/Linux 12 (bookworm)". */
  osImage: string;
  /** Kubernetes GOOS names: linux, darwin, windows. */
  operatingSystem: string;
  /** Kubernetes GOARCH names: amd64, arm64, arm, ... */
  architecture: string;
  cpuCores: number;
  memoryTotalBytes: number;
  /** The filesystem holding the agent's data directory (nodefs). */
  nodefsCapacityBytes: number;
}

/** One reading, taken every 10 s. */
export interface MachineSample {
  /** When the reading was taken (ms since the epoch). */
  at: number;
  /** Memory available to new work (Linux: MemAvailable). */
  memoryAvailableBytes: number;
  memoryTotalBytes: number;
  nodefsAvailableBytes: number;
  nodefsCapacityBytes: number;
  /** Free and total inodes of nodefs; undefined where the platform does not report them. */
  nodefsInodesFree?: number;
  nodefsInodes?: number;
  /** Processes and threads running, and the most there may be; undefined where unknown. */
  processes?: number;
  processLimit?: number;
  /** CPU in use since the previous sample, in cores (e.g. 1.5 of 4). */
  cpuUsageCores: number;
  load1: number;
  load5: number;
  load15: number;
  /** Cumulative bytes received and sent on all interfaces but loopback. */
  networkReceiveBytes: number;
  networkTransmitBytes: number;
}

export interface MachineReader {
  info(): Promise<MachineInfo>;
  sample(): Promise<MachineSample>;
}
