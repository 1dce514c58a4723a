/** Resource quantities ("1500m", "8Gi") as numbers and as text people read. */
import { humanizeBytes, parseQuantity } from '../../../client/api/quantity.js';

/** The quantity's value in base units (cores, bytes), or undefined when absent or unreadable. */
export function quantityValue(q: string | undefined): number | undefined {
  if (!q) return undefined;
  try {
    return parseQuantity(q).asApproximateFloat64();
  } catch {
    return undefined;
  }
}

export function formatCores(cores: number | undefined): string {
  if (cores === undefined) return '—';
  if (cores === 0) return '0';
  if (cores < 1) return `${Math.round(cores * 1000)}m`;
  return `${Number(cores.toFixed(2))}`;
}

export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '—';
  return `${humanizeBytes(Math.max(0, Math.round(bytes)))}B`.replace(/^(\d+)B$/, '$1 B');
}
