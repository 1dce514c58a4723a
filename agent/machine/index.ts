/**
 * The machine readers: Linux reads /proc and statfs, other platforms go through
 * systeminformation, hollow nodes make their readings up.
 */
import { LinuxMachineReader } from './linux.js';
import { PortableMachineReader } from './portable.js';
import type { MachineReader } from './types.js';

export type { MachineInfo, MachineReader, MachineSample } from './types.js';
export { LinuxMachineReader, type LinuxMachineReaderOptions } from './linux.js';
export { PortableMachineReader, type PortableMachineReaderOptions } from './portable.js';
export { HollowMachineReader, type HollowMachineReaderOptions } from './hollow.js';
export { goArch, goOS, internalIPs } from './common.js';

/** The reader for this machine: Linux's on Linux, the portable one elsewhere. */
export function defaultMachineReader(dataDir: string, platform: string = process.platform): MachineReader {
  return platform === 'linux' ? new LinuxMachineReader({ dataDir }) : new PortableMachineReader({ dataDir });
}
