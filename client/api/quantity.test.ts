import { describe, expect, it } from 'vitest';
import {
  ERR_FORMAT_WRONG,
  ERR_NUMERIC,
  ERR_SUFFIX,
  Quantity,
  QuantityError,
  addQuantities,
  formatBytes,
  formatCPUMillis,
  formatQuantity,
  humanizeBytes,
  isValidQuantity,
  parseQuantity,
  toQuantity,
} from './quantity.js';

describe('parseQuantity', () => {
  // input, value() (rounded up), milliValue() (rounded up), canonical string, format
  it.each<[string, number, number, string, string]>([
    ['0', 0, 0, '0', 'DecimalSI'],
    ['100m', 1, 100, '100m', 'DecimalSI'],
    ['250m', 1, 250, '250m', 'DecimalSI'],
    ['1.5', 2, 1500, '1500m', 'DecimalSI'],
    ['2', 2, 2000, '2', 'DecimalSI'],
    ['512Mi', 536870912, 536870912000, '512Mi', 'BinarySI'],
    ['1Ki', 1024, 1024000, '1Ki', 'BinarySI'],
    ['1.5Ki', 1536, 1536000, '1536', 'BinarySI'],
    ['1.5Gi', 1610612736, 1610612736000, '1536Mi', 'BinarySI'],
    ['0.5Gi', 536870912, 536870912000, '512Mi', 'BinarySI'],
    ['1024Mi', 1073741824, 1073741824000, '1Gi', 'BinarySI'],
    ['1G', 1e9, 1e12, '1G', 'DecimalSI'],
    ['1000M', 1e9, 1e12, '1G', 'DecimalSI'],
    ['1000', 1000, 1e6, '1k', 'DecimalSI'],
    ['1e3', 1000, 1e6, '1e3', 'DecimalExponent'],
    ['1E3', 1000, 1e6, '1e3', 'DecimalExponent'],
    ['1e+3', 1000, 1e6, '1e3', 'DecimalExponent'],
    ['1e-3', 1, 1, '1e-3', 'DecimalExponent'],
    ['1.5e3', 1500, 1.5e6, '1500', 'DecimalExponent'],
    ['-1', -1, -1000, '-1', 'DecimalSI'],
    ['-1.5', -2, -1500, '-1500m', 'DecimalSI'],
    ['+1', 1, 1000, '1', 'DecimalSI'],
    ['1n', 1, 1, '1n', 'DecimalSI'],
    ['1u', 1, 1, '1u', 'DecimalSI'],
    ['1k', 1000, 1e6, '1k', 'DecimalSI'],
    ['1T', 1e12, 1e15, '1T', 'DecimalSI'],
    ['1P', 1e15, 1e18, '1P', 'DecimalSI'],
    ['1E', 1e18, 1e21, '1E', 'DecimalSI'],
    ['1Ti', 2 ** 40, 2 ** 40 * 1000, '1Ti', 'BinarySI'],
    ['1Pi', 2 ** 50, 2 ** 50 * 1000, '1Pi', 'BinarySI'],
    ['1Ei', 2 ** 60, 2 ** 60 * 1000, '1Ei', 'BinarySI'],
    ['007', 7, 7000, '7', 'DecimalSI'],
    ['0.0', 0, 0, '0', 'DecimalSI'],
    // Things written by trolls (Kubernetes' own test table).
    ['.001', 1, 1, '1m', 'DecimalSI'],
    ['.0001k', 1, 100, '100m', 'DecimalSI'],
    ['1.', 1, 1000, '1', 'DecimalSI'],
    ['1.G', 1e9, 1e12, '1G', 'DecimalSI'],
    // Finer than a nano-unit rounds up (away from zero), and a tiny binary value turns decimal.
    ['0.000000000001Ki', 1, 1, '2n', 'DecimalSI'],
    ['0.1n', 1, 1, '1n', 'DecimalSI'],
    ['-0.1n', -1, -1, '-1n', 'DecimalSI'],
    ['1e-20', 1, 1, '1e-9', 'DecimalExponent'],
    ['0.5Ki', 512, 512000, '512', 'BinarySI'],
    ['12E', 12e18, 12e21, '12E', 'DecimalSI'],
    ['1000E', 1e21, 1e24, '1000E', 'DecimalSI'],
  ])('%j → value %d, milli %d, %j (%s)', (input, value, milli, canonical, format) => {
    const q = parseQuantity(input);
    expect(q.value()).toBe(value);
    expect(q.milliValue()).toBe(milli);
    expect(q.toString()).toBe(canonical);
    expect(q.format).toBe(format);
    expect(isValidQuantity(input)).toBe(true);
    // The canonical form parses back to the same amount.
    expect(parseQuantity(canonical).cmp(q)).toBe(0);
  });

  it.each<[string, string]>([
    ['', ERR_FORMAT_WRONG],
    ['1.5.5', ERR_FORMAT_WRONG],
    ['1.1.M', ERR_FORMAT_WRONG],
    ['1+1.0M', ERR_FORMAT_WRONG],
    ['Mi', ERR_FORMAT_WRONG],
    ['-', ERR_FORMAT_WRONG],
    ['+', ERR_FORMAT_WRONG],
    ['aoeu', ERR_FORMAT_WRONG],
    ['1Gb', ERR_FORMAT_WRONG],
    ['1KiB', ERR_FORMAT_WRONG],
    [' 1', ERR_FORMAT_WRONG],
    ['1 ', ERR_FORMAT_WRONG],
    ['1 Ki', ERR_FORMAT_WRONG],
    ['1,5', ERR_FORMAT_WRONG],
    ['0x10', ERR_FORMAT_WRONG],
    ['1e1.5', ERR_FORMAT_WRONG],
    ['1e3k', ERR_FORMAT_WRONG],
    ['1E3Ki', ERR_FORMAT_WRONG],
    ['1e+-3', ERR_FORMAT_WRONG],
    ['-3.01e-', ERR_SUFFIX],
    ['1-', ERR_SUFFIX],
    ['++1', ERR_FORMAT_WRONG],
    ['Inf', ERR_FORMAT_WRONG],
    ['NaN', ERR_FORMAT_WRONG],
    ['.', ERR_NUMERIC],
    ['0.1mi', ERR_SUFFIX],
    ['0.1am', ERR_FORMAT_WRONG],
    ['.5i', ERR_SUFFIX],
    ['1i', ERR_SUFFIX],
    ['-3.01i', ERR_SUFFIX],
    ['1e', ERR_SUFFIX],
    ['1K', ERR_SUFFIX],
    ['1ki', ERR_SUFFIX],
    ['1KI', ERR_FORMAT_WRONG],
    ['1Zi', ERR_FORMAT_WRONG],
    ['1mm', ERR_SUFFIX],
    ['1e9999999999', ERR_SUFFIX],
    ['1e60', 'quantity is too large'],
  ])('rejects %j (%s)', (input, reason) => {
    expect(isValidQuantity(input)).toBe(false);
    let err: unknown;
    try {
      parseQuantity(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QuantityError);
    expect((err as QuantityError).message).toBe(`invalid quantity ${JSON.stringify(input)}: ${reason}`);
    expect((err as QuantityError).input).toBe(input);
  });

  it('names the regular expression in the format error', () => {
    expect(() => parseQuantity('1.5.5')).toThrow(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
  });

  it('caps binary quantities at 2^63-1 like Kubernetes, but not decimal ones', () => {
    const max = (1n << 63n) - 1n;
    expect(parseQuantity('8Ei').bigValue()).toBe(max);
    expect(parseQuantity('-9Ei').bigValue()).toBe(-max);
    expect(parseQuantity('7Ei').bigValue()).toBe(7n << 60n);
    expect(parseQuantity('10E').bigValue()).toBe(10n ** 19n);
  });

  it('handles large exponents both ways without blowing up', () => {
    expect(parseQuantity('1e-999999999').nanos).toBe(1n);
    expect(parseQuantity('0e999999999').isZero()).toBe(true);
    expect(parseQuantity('1e59').bigValue()).toBe(10n ** 59n);
  });
});

describe('Quantity', () => {
  it('keeps exact nanos', () => {
    expect(parseQuantity('100m').nanos).toBe(100_000_000n);
    expect(parseQuantity('1.5Ki').nanos).toBe(1536n * 1_000_000_000n);
  });

  it('rounds value() and milliValue() away from zero', () => {
    expect(parseQuantity('1m').value()).toBe(1);
    expect(parseQuantity('1001m').value()).toBe(2);
    expect(parseQuantity('-1001m').value()).toBe(-2);
    expect(parseQuantity('1n').milliValue()).toBe(1);
    expect(parseQuantity('1000001n').milliValue()).toBe(2);
    expect(parseQuantity('1000000n').milliValue()).toBe(1);
    expect(parseQuantity('1500u').bigMilliValue()).toBe(2n);
  });

  it.each<[string, string, -1 | 0 | 1]>([
    ['1', '1000m', 0],
    ['1Ki', '1024', 0],
    ['1k', '1Ki', -1],
    ['1Gi', '1G', 1],
    ['-1', '0', -1],
    ['100m', '0.1', 0],
    ['1e3', '1k', 0],
    ['999m', '1', -1],
  ])('cmp(%j, %j) = %d', (a, b, want) => {
    expect(parseQuantity(a).cmp(parseQuantity(b))).toBe(want);
    expect(parseQuantity(b).cmp(parseQuantity(a))).toBe(want === 0 ? 0 : -want);
    expect(parseQuantity(a).equals(parseQuantity(b))).toBe(want === 0);
  });

  it('adds and subtracts exactly, keeping the first non-zero format', () => {
    const sum = parseQuantity('0.1').add(parseQuantity('0.2'));
    expect(sum.toString()).toBe('300m');
    expect(sum.cmp(parseQuantity('0.3'))).toBe(0);
    expect(parseQuantity('1Gi').add(parseQuantity('512Mi')).toString()).toBe('1536Mi');
    expect(Quantity.zero().add(parseQuantity('1Ki')).format).toBe('BinarySI');
    expect(parseQuantity('1k').add(parseQuantity('1Ki')).format).toBe('DecimalSI');
    expect(parseQuantity('1').sub(parseQuantity('250m')).toString()).toBe('750m');
    expect(parseQuantity('1').sub(parseQuantity('2')).toString()).toBe('-1');
    expect(parseQuantity('1Ki').neg().toString()).toBe('-1Ki');
    expect(parseQuantity('1Ki').sign()).toBe(1);
    expect(parseQuantity('-1m').sign()).toBe(-1);
    expect(parseQuantity('0').sign()).toBe(0);
  });

  it('builds from values and millis', () => {
    expect(Quantity.fromValue(2048, 'BinarySI').toString()).toBe('2Ki');
    expect(Quantity.fromValue(3n).toString()).toBe('3');
    expect(Quantity.fromMillis(1500).toString()).toBe('1500m');
    expect(Quantity.fromMillis(1500).value()).toBe(2);
    expect(() => Quantity.fromValue(1.5)).toThrow(RangeError);
    expect(() => Quantity.fromMillis(Number.NaN)).toThrow(RangeError);
  });

  it('prints canonical forms', () => {
    expect(new Quantity(0n, 'BinarySI').toString()).toBe('0');
    expect(Quantity.fromValue(1023, 'BinarySI').toString()).toBe('1023');
    expect(Quantity.fromValue(-2048, 'BinarySI').toString()).toBe('-2Ki');
    expect(Quantity.fromMillis(1500, 'BinarySI').toString()).toBe('1500m');
    expect(Quantity.fromValue(3000, 'DecimalExponent').toString()).toBe('3e3');
    expect(Quantity.fromValue(1n << 62n, 'BinarySI').toString()).toBe('4Ei');
    expect(Quantity.fromValue(1n << 70n, 'BinarySI').toString()).toBe('1024Ei');
    expect(parseQuantity('10000u').toString()).toBe('10m');
    expect(parseQuantity('100000u').toString()).toBe('100m');
    expect(parseQuantity('1e-4').toString()).toBe('100e-6');
    expect(parseQuantity('1e4').toString()).toBe('10e3');
    expect(JSON.stringify({ cpu: parseQuantity('0.5') })).toBe('{"cpu":"500m"}');
  });

  it('gives approximate floats for display', () => {
    expect(parseQuantity('250m').asApproximateFloat64()).toBe(0.25);
    expect(parseQuantity('-1.5').asApproximateFloat64()).toBe(-1.5);
    expect(parseQuantity('1Gi').asApproximateFloat64()).toBe(2 ** 30);
  });
});

describe('helpers', () => {
  it('addQuantities sums exactly', () => {
    expect(addQuantities().toString()).toBe('0');
    expect(addQuantities('0.1', '0.2', '0.3').toString()).toBe('600m');
    expect(
      addQuantities(
        '100m',
        '100m',
        '100m',
        '100m',
        '100m',
        '100m',
        '100m',
        '100m',
        '100m',
        '100m',
      ).toString(),
    ).toBe('1');
    expect(addQuantities('512Mi', parseQuantity('512Mi')).toString()).toBe('1Gi');
    expect(addQuantities('0', '1Ki').format).toBe('BinarySI');
    expect(() => addQuantities('1', 'nope')).toThrow(QuantityError);
  });

  it('toQuantity accepts every form', () => {
    const q = parseQuantity('1');
    expect(toQuantity(q)).toBe(q);
    expect(toQuantity('1k').value()).toBe(1000);
    expect(toQuantity(5).value()).toBe(5);
    expect(toQuantity(5n).value()).toBe(5);
  });

  it('formatQuantity canonicalises', () => {
    expect(formatQuantity('1.5')).toBe('1500m');
    expect(formatQuantity('0.5Gi')).toBe('512Mi');
    expect(formatQuantity(parseQuantity('2000m'))).toBe('2');
  });

  it.each<[number | bigint, string]>([
    [0, '0'],
    [512, '512'],
    [1024, '1Ki'],
    [1536, '1536'],
    [536870912, '512Mi'],
    [2 ** 30, '1Gi'],
    [3 * 2 ** 40, '3Ti'],
    [1n << 60n, '1Ei'],
    // Below 1024 a BinarySI quantity prints as DecimalSI, as in Kubernetes.
    [1000, '1k'],
    [1000000, '1000000'],
    [1025, '1025'],
  ])('formatBytes(%d) = %j', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
    expect(parseQuantity(text).bigValue()).toBe(BigInt(bytes));
  });

  it.each<[number | bigint, number, string]>([
    [0, 1, '0'],
    [1023, 1, '1023'],
    [1024, 1, '1Ki'],
    [1536, 1, '1.5Ki'],
    [1600, 2, '1.56Ki'],
    [1600, 0, '2Ki'],
    [2 ** 30, 1, '1Gi'],
    [1.25 * 2 ** 30, 1, '1.3Gi'],
    [1.25 * 2 ** 30, 2, '1.25Gi'],
    [2 ** 20 - 1, 1, '1Mi'],
    [-1536, 1, '-1.5Ki'],
    [5n << 60n, 1, '5Ei'],
  ])('humanizeBytes(%d, %d) = %j', (bytes, digits, text) => {
    expect(humanizeBytes(bytes, digits)).toBe(text);
  });

  it('rejects bad fraction digits', () => {
    expect(() => humanizeBytes(1, -1)).toThrow(RangeError);
  });

  it.each<[number, string]>([
    [0, '0'],
    [1, '1m'],
    [250, '250m'],
    [1000, '1'],
    [1500, '1500m'],
    [2000, '2'],
    [64000, '64'],
  ])('formatCPUMillis(%d) = %j', (millis, text) => {
    expect(formatCPUMillis(millis)).toBe(text);
    expect(parseQuantity(text).milliValue()).toBe(millis);
  });
});
