/**
 * int-or-percent values (maxSurge, maxUnavailable) scaled against a total
 * (intstr.GetScaledValueFromIntOrPercent): the DaemonSet rounds both up; the Deployment rounds
 * maxSurge up and maxUnavailable down.
 */
/** `value` scaled against `total`, rounded up unless asked otherwise. Invalid values throw, naming the field. */
export function scaledValue(value: unknown, total: number, field: string, roundUp = true): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const m = /^(\d+)%$/.exec(value);
    if (m) {
      const exact = (Number(m[1]) * total) / 100;
      return roundUp ? Math.ceil(exact) : Math.floor(exact);
    }
    if (/^\d+$/.test(value)) return Number(value);
  }
  throw new Error(`${field}: ${JSON.stringify(value)} is neither a whole number nor a percentage like "10%"`);
}
