/**
 * Kubernetes resource quantities ("100m", "512Mi", "1.5", "1e3"), after
 * k8s.io/apimachinery/pkg/api/resource. Values are held exactly as a BigInt count of
 * nano-units, the finest precision Kubernetes keeps: parsing rounds any finer fraction up
 * (away from zero) to the next nano-unit, exactly as ParseQuantity does, and sums never drift.
 *
 * Grammar:
 *   <quantity>        ::= <signedNumber><suffix>
 *   <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
 *   <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
 *   <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
 *   <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
 *   <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
 */

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

export const ERR_FORMAT_WRONG = `quantities must match the regular expression '${SPLIT_RE}'`;
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
export const ERR_SUFFIX = "unable to parse quantity's suffix";

/** Thrown by parseQuantity; `input` is the offending string. */
export class QuantityError extends Error {
  readonly input: string;
  constructor(input: string, reason: string) {
    super(`invalid quantity ${JSON.stringify(input)}: ${reason}`);
    this.name = 'QuantityError';
    this.input = input;
  }
}

const NANO = 1_000_000_000n;
const MAX_INT64 = (1n << 63n) - 1n;
/** BinarySI quantities are capped at 2^63-1 base units, as in Kubernetes. */
const MAX_BINARY_NANOS = MAX_INT64 * NANO;
/**
 * Decimal quantities are not capped by Kubernetes; we refuse magnitudes above 10^60 base units
 * so that a hostile "1e999999999" cannot make us build a gigantic integer.
 */
const MAX_DECIMAL_DIGITS = 60;

const decimalSuffixes: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const binarySuffixes: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const decimalSuffixByExponent = new Map<number, string>(
  Object.entries(decimalSuffixes).map(([s, e]) => [e, s]),
);
const binarySuffixByPower = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

/** Integer division rounding the magnitude up (away from zero), like inf.RoundUp. */
function divAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  if (q * d === n) return q;
  return n < 0n ? q - 1n : q + 1n;
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

interface Interpreted {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

function interpretSuffix(suffix: string): Interpreted | undefined {
  if (Object.prototype.hasOwnProperty.call(decimalSuffixes, suffix)) {
    return { base: 10, exponent: decimalSuffixes[suffix], format: 'DecimalSI' };
  }
  if (Object.prototype.hasOwnProperty.call(binarySuffixes, suffix)) {
    return { base: 2, exponent: binarySuffixes[suffix], format: 'BinarySI' };
  }
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const rest = suffix.slice(1);
    if (!/^[+-]?[0-9]+$/.test(rest)) return undefined;
    const exp = BigInt(rest);
    // Kubernetes parses the exponent as an int64 and keeps it as an int32.
    if (exp > 2147483647n || exp < -2147483648n) return undefined;
    return { base: 10, exponent: Number(exp), format: 'DecimalExponent' };
  }
  return undefined;
}

/**
 * An exact, immutable resource quantity. `format` is the suffix family it was written in and
 * is used again when it is printed (canonical form), like Kubernetes' Quantity.Format.
 */
export class Quantity {
  /** The value in nano-units (value × 10^9), exact. */
  readonly nanos: bigint;
  readonly format: QuantityFormat;

  constructor(nanos: bigint, format: QuantityFormat = 'DecimalSI') {
    this.nanos = nanos;
    this.format = format;
  }

  static zero(format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(0n, format);
  }

  /** A whole number of base units (bytes, cores, pods). */
  static fromValue(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(toBigInt(value, 'value') * NANO, format);
  }

  /** A whole number of milli-units (e.g. millicores). */
  static fromMillis(millis: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(toBigInt(millis, 'millis') * 1_000_000n, format);
  }

  /** Base units rounded up (away from zero) to an integer, like Quantity.Value(). */
  bigValue(): bigint {
    return divAwayFromZero(this.nanos, NANO);
  }

  /** Milli-units rounded up (away from zero) to an integer, like Quantity.MilliValue(). */
  bigMilliValue(): bigint {
    return divAwayFromZero(this.nanos, 1_000_000n);
  }

  /** Base units rounded up to an integer, as a number (exact up to 2^53). */
  value(): number {
    return Number(this.bigValue());
  }

  /** Milli-units rounded up to an integer, as a number (exact up to 2^53). */
  milliValue(): number {
    return Number(this.bigMilliValue());
  }

  /** An approximate floating-point value in base units (for ratios and display only). */
  asApproximateFloat64(): number {
    const whole = this.nanos / NANO;
    const frac = this.nanos % NANO;
    return Number(whole) + Number(frac) / 1e9;
  }

  isZero(): boolean {
    return this.nanos === 0n;
  }

  sign(): -1 | 0 | 1 {
    return this.nanos < 0n ? -1 : this.nanos > 0n ? 1 : 0;
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`. */
  cmp(other: Quantity): -1 | 0 | 1 {
    return this.nanos < other.nanos ? -1 : this.nanos > other.nanos ? 1 : 0;
  }

  equals(other: Quantity): boolean {
    return this.nanos === other.nanos;
  }

  /** Sum; keeps this quantity's format unless this is zero (then takes other's), like Add(). */
  add(other: Quantity): Quantity {
    return new Quantity(this.nanos + other.nanos, this.isZero() ? other.format : this.format);
  }

  /** Difference; format chosen as for add(). */
  sub(other: Quantity): Quantity {
    return new Quantity(this.nanos - other.nanos, this.isZero() ? other.format : this.format);
  }

  neg(): Quantity {
    return new Quantity(-this.nanos, this.format);
  }

  withFormat(format: QuantityFormat): Quantity {
    return new Quantity(this.nanos, format);
  }

  /**
   * Canonical form, as Kubernetes serialises it: no fractional digits, the largest suffix that
   * loses no precision, the sign only when negative. "1.5" → "1500m", "1.5Gi" → "1536Mi",
   * "1000" → "1k", "1e3" → "1e3"; BinarySI values below 1024 in magnitude or not a whole
   * number of bytes print as DecimalSI.
   */
  toString(): string {
    if (this.nanos === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      if (abs(this.nanos) < 1024n * NANO || this.nanos % NANO !== 0n) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let mantissa = this.nanos / NANO;
      let power = 0;
      while (power < 6 && mantissa % 1024n === 0n) {
        mantissa /= 1024n;
        power++;
      }
      return `${mantissa}${binarySuffixByPower[power]}`;
    }
    // Move all factors of ten into the exponent, then lower it to a multiple of three.
    let mantissa = this.nanos;
    let exponent = -9;
    while (mantissa % 10n === 0n) {
      mantissa /= 10n;
      exponent++;
    }
    while (exponent % 3 !== 0) {
      mantissa *= 10n;
      exponent--;
    }
    if (format === 'DecimalExponent') return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
    if (exponent > 18) {
      mantissa *= pow10(exponent - 18);
      exponent = 18;
    }
    return `${mantissa}${decimalSuffixByExponent.get(exponent) ?? ''}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

function toBigInt(v: number | bigint, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (!Number.isSafeInteger(v)) throw new RangeError(`${what} must be a safe integer, got ${v}`);
  return BigInt(v);
}

/** A quantity string taken apart: what parseQuantity computes its value from. */
interface ScannedQuantity {
  negative: boolean;
  /** The digits before and after the point, leading zeros dropped ("" for zero). */
  digits: string;
  fracLength: number;
  interp: NonNullable<ReturnType<typeof interpretSuffix>>;
}

/**
 * Takes a quantity string apart and checks it, with no big-number arithmetic: an error's
 * message (QuantityError's reason) when it is not a quantity.
 */
function scanQuantity(s: string): ScannedQuantity | string {
  if (typeof s !== 'string' || s.length === 0) return ERR_FORMAT_WRONG;
  const end = s.length;
  let pos = 0;
  let negative = false;
  if (s[0] === '-' || s[0] === '+') {
    negative = s[0] === '-';
    pos++;
  }
  const intStart = pos;
  while (pos < end && isDigit(s[pos])) pos++;
  const intDigits = s.slice(intStart, pos);
  let fracDigits = '';
  let sawDot = false;
  if (pos < end && s[pos] === '.') {
    sawDot = true;
    pos++;
    const fracStart = pos;
    while (pos < end && isDigit(s[pos])) pos++;
    fracDigits = s.slice(fracStart, pos);
  }
  if (intDigits.length === 0 && fracDigits.length === 0) {
    // "Mi", "-", "": no number at all. A lone "." matches the split regex but is no number.
    return sawDot ? ERR_NUMERIC : ERR_FORMAT_WRONG;
  }

  // The suffix: letters from [eEinumkKMGTP], an optional sign, then digits, then the end.
  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(s[pos])) pos++;
  if (pos < end && (s[pos] === '-' || s[pos] === '+')) pos++;
  while (pos < end && isDigit(s[pos])) pos++;
  if (pos !== end) return ERR_FORMAT_WRONG;
  const interp = interpretSuffix(s.slice(suffixStart));
  if (!interp) return ERR_SUFFIX;

  const digits = (intDigits + fracDigits).replace(/^0+/, '');
  if (digits.length > 0 && interp.base === 10) {
    const shift = interp.exponent - fracDigits.length + 9;
    if (shift >= 0 && digits.length + shift - 9 > MAX_DECIMAL_DIGITS) return 'quantity is too large';
  }
  return { negative, digits, fracLength: fracDigits.length, interp };
}

/** Parses a quantity string; throws QuantityError when it is not one. */
export function parseQuantity(s: string): Quantity {
  const scanned = scanQuantity(s);
  if (typeof scanned === 'string') throw new QuantityError(String(s), scanned);
  const { negative, digits, fracLength, interp } = scanned;
  const mantissa = digits.length === 0 ? 0n : BigInt(digits);
  let format = interp.format;
  let nanos: bigint;
  if (mantissa === 0n) {
    nanos = 0n;
  } else if (interp.base === 10) {
    // value = mantissa × 10^(exponent - fracDigits); in nanos shift by 9 more.
    const shift = interp.exponent - fracLength + 9;
    if (shift >= 0) nanos = mantissa * pow10(shift);
    else if (-shift > digits.length) {
      nanos = 1n; // below one nano-unit: rounds up to the smallest representable value
    } else {
      nanos = divAwayFromZero(mantissa, pow10(-shift));
    }
  } else {
    nanos = divAwayFromZero(mantissa * (1n << BigInt(interp.exponent)) * NANO, pow10(fracLength));
    if (nanos > MAX_BINARY_NANOS) nanos = MAX_BINARY_NANOS;
    // A binary quantity strictly between 0 and 1 is treated as decimal, like Kubernetes.
    if (nanos < NANO) format = 'DecimalSI';
  }
  return new Quantity(negative ? -nanos : nanos, format);
}

/** True when `s` parses as a quantity (checked without computing its value). */
export function isValidQuantity(s: string): boolean {
  return typeof scanQuantity(s) !== 'string';
}

/** Accepts a Quantity, a quantity string, or a number of base units. */
export function toQuantity(q: Quantity | string | number | bigint): Quantity {
  if (q instanceof Quantity) return q;
  if (typeof q === 'string') return parseQuantity(q);
  return Quantity.fromValue(q);
}

/** Exact sum. The result keeps the format of the first non-zero term (Kubernetes' Add). */
export function addQuantities(...qs: Array<Quantity | string>): Quantity {
  let acc: Quantity | undefined;
  for (const q of qs) {
    const next = toQuantity(q);
    acc = acc === undefined ? next : acc.add(next);
  }
  return acc ?? Quantity.zero();
}

/** Canonical string of a quantity (or of a quantity string: "1.5" → "1500m"). */
export function formatQuantity(q: Quantity | string): string {
  return toQuantity(q).toString();
}

/**
 * Bytes in canonical BinarySI form, exact and re-parseable, as Kubernetes prints them:
 * 536870912 → "512Mi", 1536 → "1536" (not a whole number of Ki), 0 → "0". As in Kubernetes,
 * a value below 1024 prints in decimal form (1000 → "1k"). Use humanizeBytes for display.
 */
export function formatBytes(bytes: number | bigint): string {
  return Quantity.fromValue(bytes, 'BinarySI').toString();
}

/**
 * Bytes for people: the largest binary unit not above the value, with at most
 * `fractionDigits` decimals (trailing zeros dropped): 1536 → "1.5Ki", 1073741824 → "1Gi",
 * 512 → "512". Approximate; use formatBytes for a value that must round-trip.
 */
export function humanizeBytes(bytes: number | bigint, fractionDigits = 1): string {
  if (!Number.isInteger(fractionDigits) || fractionDigits < 0) {
    throw new RangeError(`fractionDigits must be a non-negative integer, got ${fractionDigits}`);
  }
  const n = toBigInt(bytes, 'bytes');
  const mag = abs(n);
  let power = 0;
  while (power < 6 && mag >= 1n << BigInt(10 * (power + 1))) power++;
  if (power === 0) return n.toString();
  const scale = pow10(fractionDigits);
  // Round half away from zero at the requested precision, in exact arithmetic; a value that
  // rounds up to 1024 of a unit moves to the next unit ("1024Ki" → "1Mi").
  const round = (p: number): bigint => {
    const unit = 1n << BigInt(10 * p);
    return (mag * scale * 2n + unit) / (unit * 2n);
  };
  let scaled = round(power);
  if (power < 6 && scaled >= 1024n * scale) scaled = round(++power);
  const whole = scaled / scale;
  let frac = fractionDigits > 0 ? (scaled % scale).toString().padStart(fractionDigits, '0') : '';
  frac = frac.replace(/0+$/, '');
  return `${n < 0n ? '-' : ''}${whole}${frac ? `.${frac}` : ''}${binarySuffixByPower[power]}`;
}

/** CPU in canonical form from millicores: 250 → "250m", 2000 → "2", 1500 → "1500m". */
export function formatCPUMillis(millis: number | bigint): string {
  return Quantity.fromMillis(millis).toString();
}
