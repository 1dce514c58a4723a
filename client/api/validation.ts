/**
 * Name, label and annotation validation with Kubernetes' rules and messages
 * (k8s.io/apimachinery/pkg/util/validation, .../api/validation/objectmeta.go,
 * .../util/validation/field). Pure and dependency-free: shared by the apiserver, the agent,
 * the CLI and the GUI so a user sees the same message wherever a value is checked.
 *
 * The `is*` functions return human-readable problems (empty array = valid), exactly like their
 * Go counterparts. Lengths are counted in UTF-8 bytes, as Go's len() does.
 */

// ---------------------------------------------------------------------------------------------
// Message helpers (validation.MaxLenError, RegexError, EmptyError)
// ---------------------------------------------------------------------------------------------

/** "must be no more than N characters" */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/**
 * Kubernetes' RegexError, byte for byte (including its double space before " or " when there is
 * more than one example), so messages match what users find when they search for them.
 */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

/** "must be non-empty" */
export function emptyError(): string {
  return 'must be non-empty';
}

/** Length of a string in UTF-8 bytes (Go's len()). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// DNS names
// ---------------------------------------------------------------------------------------------

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const DNS1035_LABEL_MAX_LENGTH = 63;

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRegexp = new RegExp(`^${dns1123LabelFmt}$`);

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRegexp = new RegExp(`^${dns1123SubdomainFmt}$`);

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelRegexp = new RegExp(`^${dns1035LabelFmt}$`);

/** A DNS label (RFC 1123): at most 63 characters of [a-z0-9-], alphanumeric at both ends. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRegexp.test(value)) {
    if (dns1123SubdomainRegexp.test(value)) {
      // A valid subdomain but not a valid label: since the length is checked above, it must be dots.
      errs.push('must not contain dots');
    } else {
      errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
    }
  }
  return errs;
}

/** A DNS subdomain (RFC 1123): at most 253 characters, dot-separated DNS labels. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRegexp.test(value)) {
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  }
  return errs;
}

/** A DNS label (RFC 1035): like a 1123 label but must start with a letter. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!dns1035LabelRegexp.test(value)) {
    errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Qualified names (label keys, annotation keys, finalizers) and label values
// ---------------------------------------------------------------------------------------------

export const QUALIFIED_NAME_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;

const qnameCharFmt = '[A-Za-z0-9]';
const qnameExtCharFmt = '[-A-Za-z0-9_.]';
const qualifiedNameFmt = `(${qnameCharFmt}${qnameExtCharFmt}*)?${qnameCharFmt}`;
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameRegexp = new RegExp(`^${qualifiedNameFmt}$`);

const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRegexp = new RegExp(`^${labelValueFmt}$`);

/**
 * A "qualified name" (label key, annotation key, finalizer): an optional DNS-subdomain prefix
 * and '/', then a name of at most 63 characters matching `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) {
      errs.push(`prefix part ${emptyError()}`);
    } else {
      for (const msg of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
    }
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) {
    errs.push(`name part ${emptyError()}`);
  } else if (utf8Length(name) > QUALIFIED_NAME_MAX_LENGTH) {
    errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  }
  if (!qualifiedNameRegexp.test(name)) {
    errs.push(
      `name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errs;
}

/** A label value: empty, or at most 63 characters like a qualified name's name part. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRegexp.test(value)) {
    errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/**
 * Kubernetes' maskTrailingDash: a generateName may end in '-' because a random suffix is
 * appended. Upstream replaces the last *two* characters with 'a' (a quirk reproduced verbatim
 * because it decides which prefixes validate).
 */
function maskTrailingDash(name: string): string {
  if (name.length > 1 && name.endsWith('-')) return `${name.slice(0, -2)}a`;
  return name;
}

/**
 * A `metadata.generateName` prefix, checked with the kind's name validator in "prefix" mode
 * (ValidateNameFunc(name, prefix=true)): a trailing '-' is allowed. The default validator is the
 * DNS subdomain rule most kinds use; pass `isDNS1123Label` for Namespaces.
 */
export function isValidGenerateName(
  value: string,
  nameValidator: (name: string) => string[] = isDNS1123Subdomain,
): string[] {
  return nameValidator(maskTrailingDash(value));
}

// ---------------------------------------------------------------------------------------------
// Field errors (k8s.io/apimachinery/pkg/util/validation/field)
// ---------------------------------------------------------------------------------------------

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueForbidden'
  | 'FieldValueUnknown'
  | 'FieldValueTypeInvalid'
  /** Server-side apply: another manager owns the field (its message names the manager). */
  | 'FieldManagerConflict';

export interface FieldError {
  /** Field path, e.g. `spec.containers[0].name`. */
  field: string;
  type: FieldErrorType;
  /** Detail: what is allowed or why the value is wrong (may be empty). */
  message: string;
  /** The offending value, when there is one worth showing. */
  value?: unknown;
}

/** What each type prints as (ErrorType.String()). */
const typeText: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
  FieldValueForbidden: 'Forbidden',
  FieldValueUnknown: 'Unknown field',
  FieldValueTypeInvalid: 'Invalid value',
  FieldManagerConflict: '',
};

export function required(field: string, msg = ''): FieldError {
  return { field, type: 'FieldValueRequired', message: msg };
}

export function invalid(field: string, value: unknown, msg: string): FieldError {
  return { field, type: 'FieldValueInvalid', message: msg, value };
}

/** `Unsupported value: "x": supported values: "a", "b"` */
export function notSupported(field: string, value: unknown, allowed: string[]): FieldError {
  const message =
    allowed.length > 0 ? `supported values: ${allowed.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return { field, type: 'FieldValueNotSupported', message, value };
}

export function duplicate(field: string, value: unknown): FieldError {
  return { field, type: 'FieldValueDuplicate', message: '', value };
}

export function forbidden(field: string, msg: string): FieldError {
  return { field, type: 'FieldValueForbidden', message: msg };
}

/** `Too long: may not be more than N bytes` (a negative max gives "value is too long"). */
export function tooLong(field: string, value: unknown, max: number): FieldError {
  const message =
    max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return { field, type: 'FieldValueTooLong', message, value };
}

/** A field the schema does not know (kubelab rejects unknown fields rather than dropping them). */
export function unknownField(field: string): FieldError {
  return { field, type: 'FieldValueUnknown', message: 'field is not supported' };
}

/** A value of the wrong JSON type; `expected` names the type, e.g. "string". */
export function typeInvalid(field: string, value: unknown, expected: string): FieldError {
  return { field, type: 'FieldValueTypeInvalid', message: `must be of type ${expected}`, value };
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      try {
        const json = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
        return json ?? String(value);
      } catch {
        return String(value);
      }
  }
}

/**
 * One error as Kubernetes prints it (field.Error.Error()):
 * `metadata.name: Invalid value: "Foo": a lowercase RFC 1123 ...`, `spec.x: Required value`.
 * The value is shown for Invalid/Unsupported/Duplicate/TypeInvalid errors that carry one.
 */
export function formatFieldError(err: FieldError): string {
  let body = typeText[err.type];
  const showsValue =
    err.type !== 'FieldValueRequired' &&
    err.type !== 'FieldValueForbidden' &&
    err.type !== 'FieldValueTooLong' &&
    err.type !== 'FieldValueUnknown' &&
    Object.prototype.hasOwnProperty.call(err, 'value');
  if (showsValue) body += `: ${formatValue(err.value)}`;
  if (err.message) body += body ? `: ${err.message}` : err.message;
  return err.field ? `${err.field}: ${body}` : body;
}

/** One line per error, in order. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map(formatFieldError).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Metadata helpers
// ---------------------------------------------------------------------------------------------

/** Total size limit of all annotation keys and values (256 KiB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

function sortedEntries(m: Record<string, string>): Array<[string, string]> {
  return Object.keys(m)
    .sort()
    .map((k) => [k, m[k]]);
}

/** metav1validation.ValidateLabels: keys are qualified names, values label values; errors at `path`. */
export function validateLabels(
  labels: Record<string, string> | undefined | null,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!labels) return errs;
  for (const [k, v] of sortedEntries(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(invalid(path, k, msg));
    if (typeof v !== 'string') {
      errs.push(typeInvalid(`${path}[${k}]`, v, 'string'));
      continue;
    }
    for (const msg of isValidLabelValue(v)) errs.push(invalid(path, v, msg));
  }
  return errs;
}

/**
 * ValidateAnnotations: keys are qualified names compared case-insensitively (lower-cased before
 * checking); the keys and values together may not exceed 256 KiB.
 */
export function validateAnnotations(
  annotations: Record<string, string> | undefined | null,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!annotations) return errs;
  let total = 0;
  for (const [k, v] of sortedEntries(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, msg));
    if (typeof v !== 'string') {
      errs.push(typeInvalid(`${path}[${k}]`, v, 'string'));
      continue;
    }
    total += utf8Length(k) + utf8Length(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    errs.push(tooLong(path, '', TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  }
  return errs;
}

/** Finalizers Kubernetes defines without a domain prefix. */
export const STANDARD_FINALIZERS: readonly string[] = ['kubernetes', 'orphan', 'foregroundDeletion'];

/**
 * A finalizer name: a qualified name, and, unless it is one of the standard finalizers,
 * domain-prefixed ("example.com/cleanup"). Like Kubernetes, both checks report independently.
 */
export function validateFinalizerName(name: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const msg of isQualifiedName(name)) errs.push(invalid(path, name, msg));
  if (!name.includes('/') && !STANDARD_FINALIZERS.includes(name)) {
    errs.push(invalid(path, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return errs;
}

/** Every finalizer's name, plus the rule that "orphan" and "foregroundDeletion" exclude each other. */
export function validateFinalizers(
  finalizers: readonly string[] | undefined | null,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!finalizers) return errs;
  for (const f of finalizers) errs.push(...validateFinalizerName(f, path));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(path, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}
