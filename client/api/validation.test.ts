import { describe, expect, it } from 'vitest';
import {
  duplicate,
  forbidden,
  formatFieldError,
  formatFieldErrors,
  invalid,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidGenerateName,
  isValidLabelValue,
  maxLenError,
  notSupported,
  regexError,
  required,
  tooLong,
  typeInvalid,
  unknownField,
  utf8Length,
  validateAnnotations,
  validateFinalizerName,
  validateFinalizers,
  validateLabels,
  TOTAL_ANNOTATION_SIZE_LIMIT_BYTES,
} from './validation.js';

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('message helpers', () => {
  it('formats like Kubernetes', () => {
    expect(maxLenError(63)).toBe('must be no more than 63 characters');
    expect(regexError('msg', 'fmt')).toBe("msg (regex used for validation is 'fmt')");
    expect(regexError('msg', 'fmt', 'a')).toBe("msg (e.g. 'a', regex used for validation is 'fmt')");
    expect(regexError('msg', 'fmt', 'a', 'b')).toBe(
      "msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')",
    );
  });

  it.each([
    ['', 0],
    ['abc', 3],
    ['é', 2],
    ['€', 3],
    ['😀', 4],
  ])('utf8Length(%j) = %d', (s, n) => {
    expect(utf8Length(s)).toBe(n);
  });
});

describe('isDNS1123Label', () => {
  it.each(['a', '0', 'my-name', '123-abc', 'a'.repeat(63), '1-2-3', 'a--b'])('accepts %j', (v) => {
    expect(isDNS1123Label(v)).toEqual([]);
  });

  it.each<[string, string[]]>([
    ['', [LABEL_MSG]],
    ['A', [LABEL_MSG]],
    ['my_name', [LABEL_MSG]],
    ['-abc', [LABEL_MSG]],
    ['abc-', [LABEL_MSG]],
    ['a b', [LABEL_MSG]],
    ['my.name', ['must not contain dots']],
    ['a'.repeat(64), ['must be no more than 63 characters']],
    ['A'.repeat(64), ['must be no more than 63 characters', LABEL_MSG]],
  ])('rejects %j', (v, errs) => {
    expect(isDNS1123Label(v)).toEqual(errs);
  });
});

describe('isDNS1123Subdomain', () => {
  it.each(['a', 'example.com', 'a.b.c', 'a-b.c-d', `${'a'.repeat(63)}.${'b'.repeat(63)}`, 'x'.repeat(253)])(
    'accepts %j',
    (v) => {
      expect(isDNS1123Subdomain(v)).toEqual([]);
    },
  );

  it.each<[string, string[]]>([
    ['', [SUBDOMAIN_MSG]],
    ['.a', [SUBDOMAIN_MSG]],
    ['a.', [SUBDOMAIN_MSG]],
    ['a..b', [SUBDOMAIN_MSG]],
    ['a.-b', [SUBDOMAIN_MSG]],
    ['Example.com', [SUBDOMAIN_MSG]],
    ['a_b.com', [SUBDOMAIN_MSG]],
    ['x'.repeat(254), ['must be no more than 253 characters']],
  ])('rejects %j', (v, errs) => {
    expect(isDNS1123Subdomain(v)).toEqual(errs);
  });
});

describe('isDNS1035Label', () => {
  it('requires a leading letter', () => {
    expect(isDNS1035Label('abc-123')).toEqual([]);
    expect(isDNS1035Label('123-abc')).toHaveLength(1);
    expect(isDNS1035Label('123-abc')[0]).toMatch(/^a DNS-1035 label must consist/);
  });
});

describe('isQualifiedName', () => {
  it.each([
    'simple',
    'now-with-dashes',
    '1-starts-with-num',
    '1234',
    'simple/simple',
    'now-with-dashes/simple',
    'now-with-dashes/now-with-dashes',
    'now.with.dots/simple',
    'now-with.dashes-and.dots/simple',
    '1-num.2-num/3-num',
    '1234/5678',
    '1.2.3.4/5678',
    'Uppercase_Is_OK_123',
    'example.com/Uppercase_Is_OK_123',
    'requests.storage-foo',
    'a'.repeat(63),
    `${'a'.repeat(253)}/${'b'.repeat(63)}`,
    'kubernetes.io/hostname',
  ])('accepts %j', (v) => {
    expect(isQualifiedName(v)).toEqual([]);
  });

  it.each<[string, string[]]>([
    ['', ['name part must be non-empty', NAME_PART_MSG]],
    ['/', ['prefix part must be non-empty', 'name part must be non-empty', NAME_PART_MSG]],
    ['/simple', ['prefix part must be non-empty']],
    ['example.com/', ['name part must be non-empty', NAME_PART_MSG]],
    ['-starts-with-dash', [NAME_PART_MSG]],
    ['ends-with-dash-', [NAME_PART_MSG]],
    ['.starts.with.dot', [NAME_PART_MSG]],
    ['nospecialchars%^=@', [NAME_PART_MSG]],
    ['cantendwithadash-', [NAME_PART_MSG]],
    ['Example.com/name', [`prefix part ${SUBDOMAIN_MSG}`]],
    ['a'.repeat(64), ['name part must be no more than 63 characters']],
    [`${'a'.repeat(254)}/abc`, ['prefix part must be no more than 253 characters']],
  ])('rejects %j', (v, errs) => {
    expect(isQualifiedName(v)).toEqual(errs);
  });

  it('rejects more than one slash with the whole-name message', () => {
    const errs = isQualifiedName('a/b/c');
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^a qualified name must consist of alphanumeric characters/);
    expect(errs[0]).toMatch(
      /with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/,
    );
  });
});

describe('isValidLabelValue', () => {
  it.each([
    '',
    'simple',
    'now-with-dashes',
    '1-starts-with-num',
    'end-with-num-1',
    '1234',
    'a'.repeat(63),
    'my_value',
    'MyValue',
    'a.b',
  ])('accepts %j', (v) => {
    expect(isValidLabelValue(v)).toEqual([]);
  });

  it.each<[string, string[]]>([
    ['nospecialchars%^=@', [LABEL_VALUE_MSG]],
    ['Tama-nui-te-rā.is.Māori.sun', [LABEL_VALUE_MSG]],
    ['\\backslashes\\are\\bad', [LABEL_VALUE_MSG]],
    ['-starts-with-dash', [LABEL_VALUE_MSG]],
    ['ends-with-dash-', [LABEL_VALUE_MSG]],
    ['.starts.with.dot', [LABEL_VALUE_MSG]],
    ['has/slash', [LABEL_VALUE_MSG]],
    ['has space', [LABEL_VALUE_MSG]],
    ['a'.repeat(64), ['must be no more than 63 characters']],
  ])('rejects %j', (v, errs) => {
    expect(isValidLabelValue(v)).toEqual(errs);
  });
});

describe('isValidGenerateName', () => {
  it.each(['web-', 'web', 'a-', 'ab.c-', 'my.app-'])('accepts %j as a subdomain prefix', (v) => {
    expect(isValidGenerateName(v)).toEqual([]);
  });

  it.each(['-', 'Web-', 'we_b-', '.web-', 'web..x-', 'web'.repeat(90)])('rejects %j', (v) => {
    expect(isValidGenerateName(v)).not.toEqual([]);
  });

  it('reproduces the upstream quirk: the two last characters are replaced by "a"', () => {
    // Kubernetes checks "web_-" as "weba", so it passes although "web_-xxxxx" is no valid name.
    expect(isValidGenerateName('web_-')).toEqual([]);
  });

  it('uses the given name validator', () => {
    expect(isValidGenerateName('ns.x-', isDNS1123Label)).toEqual(['must not contain dots']);
    expect(isValidGenerateName('ns-x-', isDNS1123Label)).toEqual([]);
  });
});

describe('field errors', () => {
  it.each([
    [required('spec.containers[0].name'), 'spec.containers[0].name: Required value'],
    [
      required('spec.nodeName', 'a node must be chosen'),
      'spec.nodeName: Required value: a node must be chosen',
    ],
    [invalid('metadata.name', 'Foo', 'bad'), 'metadata.name: Invalid value: "Foo": bad'],
    [
      invalid('spec.replicas', -1, 'must be greater than or equal to 0'),
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ],
    [invalid('spec.x', undefined, 'missing'), 'spec.x: Invalid value: null: missing'],
    [invalid('spec.flag', true, 'nope'), 'spec.flag: Invalid value: true: nope'],
    [
      invalid('metadata.finalizers', ['a', 'b'], 'conflict'),
      'metadata.finalizers: Invalid value: ["a","b"]: conflict',
    ],
    [
      notSupported('spec.restartPolicy', 'Sometimes', ['Always', 'OnFailure', 'Never']),
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ],
    [notSupported('spec.x', 'y', []), 'spec.x: Unsupported value: "y"'],
    [duplicate('spec.containers[1].name', 'web'), 'spec.containers[1].name: Duplicate value: "web"'],
    [forbidden('spec.nodeName', 'may not be changed'), 'spec.nodeName: Forbidden: may not be changed'],
    [
      tooLong('metadata.annotations', '', 262144),
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ],
    [tooLong('x', 'ab', 1), 'x: Too long: may not be more than 1 byte'],
    [tooLong('x', 'ab', -1), 'x: Too long: value is too long'],
    [unknownField('spec.frobnicate'), 'spec.frobnicate: Unknown field: field is not supported'],
    [
      typeInvalid('spec.replicas', 'three', 'integer'),
      'spec.replicas: Invalid value: "three": must be of type integer',
    ],
    [{ field: '', type: 'FieldValueRequired' as const, message: '' }, 'Required value'],
  ])('formats %j', (err, text) => {
    expect(formatFieldError(err)).toBe(text);
  });

  it('sets types and values', () => {
    expect(invalid('f', 'v', 'm')).toEqual({
      field: 'f',
      type: 'FieldValueInvalid',
      message: 'm',
      value: 'v',
    });
    expect(required('f')).toEqual({ field: 'f', type: 'FieldValueRequired', message: '' });
    expect(typeInvalid('f', 1, 'string').type).toBe('FieldValueTypeInvalid');
    expect(unknownField('f').type).toBe('FieldValueUnknown');
  });

  it('formats a list one line per error', () => {
    expect(formatFieldErrors([])).toBe('');
    expect(formatFieldErrors([required('a'), forbidden('b', 'no')])).toBe(
      'a: Required value\nb: Forbidden: no',
    );
  });
});

describe('validateLabels', () => {
  it('accepts valid labels and nothing', () => {
    expect(validateLabels(undefined, 'metadata.labels')).toEqual([]);
    expect(validateLabels({}, 'metadata.labels')).toEqual([]);
    expect(validateLabels({ app: 'web', 'kubernetes.io/os': 'linux', empty: '' }, 'metadata.labels')).toEqual(
      [],
    );
  });

  it('reports bad keys and values at the path, sorted by key', () => {
    const errs = validateLabels({ 'z/': 'ok', 'bad key': 'bad value' }, 'metadata.labels');
    expect(errs.map(formatFieldError)).toEqual([
      `metadata.labels: Invalid value: "bad key": ${NAME_PART_MSG}`,
      `metadata.labels: Invalid value: "bad value": ${LABEL_VALUE_MSG}`,
      'metadata.labels: Invalid value: "z/": name part must be non-empty',
      `metadata.labels: Invalid value: "z/": ${NAME_PART_MSG}`,
    ]);
  });

  it('rejects a non-string value', () => {
    const errs = validateLabels({ a: 1 as unknown as string }, 'metadata.labels');
    expect(errs).toEqual([typeInvalid('metadata.labels[a]', 1, 'string')]);
  });
});

describe('validateAnnotations', () => {
  it('accepts any value and case-insensitive keys', () => {
    expect(
      validateAnnotations(
        { 'Example.COM/Note': 'anything, even spaces / and = signs', a: '' },
        'metadata.annotations',
      ),
    ).toEqual([]);
    expect(validateAnnotations(undefined, 'metadata.annotations')).toEqual([]);
  });

  it('rejects bad keys', () => {
    const errs = validateAnnotations({ 'a b': 'x' }, 'metadata.annotations');
    expect(errs).toEqual([invalid('metadata.annotations', 'a b', NAME_PART_MSG)]);
  });

  it('enforces the total size of keys and values', () => {
    const limit = TOTAL_ANNOTATION_SIZE_LIMIT_BYTES;
    expect(limit).toBe(262144);
    expect(validateAnnotations({ k: 'x'.repeat(limit - 1) }, 'metadata.annotations')).toEqual([]);
    expect(validateAnnotations({ k: 'x'.repeat(limit) }, 'metadata.annotations')).toEqual([
      tooLong('metadata.annotations', '', limit),
    ]);
    // Counted in UTF-8 bytes: "é" is two.
    expect(validateAnnotations({ k: 'é'.repeat(limit / 2) }, 'metadata.annotations')).toHaveLength(1);
    expect(validateAnnotations({ a: 'x'.repeat(limit / 2), b: 'x'.repeat(limit / 2) }, 'm')).toHaveLength(1);
  });
});

describe('finalizers', () => {
  it.each(['kubernetes', 'orphan', 'foregroundDeletion', 'example.com/cleanup', 'kubelab.io/pod-gc'])(
    'accepts %j',
    (f) => {
      expect(validateFinalizerName(f, 'metadata.finalizers')).toEqual([]);
    },
  );

  it('requires a domain prefix for non-standard names', () => {
    expect(validateFinalizerName('cleanup', 'metadata.finalizers')).toEqual([
      invalid(
        'metadata.finalizers',
        'cleanup',
        'name is neither a standard finalizer name nor is it fully qualified',
      ),
    ]);
  });

  it('reports an invalid name with both checks', () => {
    const errs = validateFinalizerName('bad name', 'metadata.finalizers').map((e) => e.message);
    expect(errs).toEqual([
      NAME_PART_MSG,
      'name is neither a standard finalizer name nor is it fully qualified',
    ]);
    expect(validateFinalizerName('Example.com/x', 'f')).toHaveLength(1);
  });

  it('forbids orphan together with foregroundDeletion', () => {
    expect(validateFinalizers(['orphan', 'example.com/x'], 'metadata.finalizers')).toEqual([]);
    expect(validateFinalizers(undefined, 'metadata.finalizers')).toEqual([]);
    const errs = validateFinalizers(['orphan', 'foregroundDeletion'], 'metadata.finalizers');
    expect(errs.map(formatFieldError)).toEqual([
      'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
    ]);
  });
});
