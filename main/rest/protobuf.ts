/**
 * Kubernetes' protobuf request bodies (`application/vnd.kubernetes.protobuf`), read into the
 * JSON shape the rest of the REST door works on. kubectl 1.31 and later send protobuf for the
 * writes made through client-go's typed clients and do not fall back to JSON on a 415:
 * `kubectl create namespace`, `create configmap`, `create secret`, `create deployment`,
 * `create job` and `create cronjob`, the DeleteOptions and Eviction of
 * `kubectl drain`, the reviews of `kubectl auth can-i`. The messages read are those, with the field numbers of k8s.io/api's
 * generated.proto; every other kind's protobuf body gets a 415 asking for JSON, which is what
 * kubectl's dynamic client (`get`, `apply`, `run`, `patch`…) sends anyway.
 *
 * A pod template is read strictly: a field not modelled here that carries a value is refused
 * (with the field's number and path), never silently dropped.
 *
 * The envelope is 4 magic bytes ("k8s\0") and a runtime.Unknown: its TypeMeta names the
 * apiVersion and kind, its `raw` holds the object. Limits: the body is already bounded by
 * readBody; the schema is not recursive, so the depth is bounded by it; values are counted
 * against the parse limits as they are read.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { ApiError, echo } from '../../client/api/errors.js';
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from '../../client/parse/limits.js';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Scalar = 'string' | 'int64' | 'int32' | 'bool' | 'bytes';

interface Field {
  name: string;
  type: Scalar | Message;
  repeated?: true;
  /** A map<string, string> (or map<string, bytes>, as base64 like JSON): entries of key 1 and value 2. */
  map?: true;
  /** A pointer in Go: present even at its zero value (0 grace seconds means "now"). */
  presence?: true;
  /** Turns the decoded message into its JSON form (IntOrString's union into 1 or "25%"). */
  convert?: (decoded: Record<string, unknown>) => unknown;
}

type Message = { [fieldNumber: number]: Field };

/**
 * Messages read strictly: a field not modelled here that carries a value is refused rather than
 * dropped, so a pod template never loses what the user asked for. (Go's encoder writes zero
 * values of plain fields, so those are skipped.)
 */
const STRICT = new WeakSet<Message>();
const strict = (m: Message): Message => (STRICT.add(m), m);

const typeMeta: Message = { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } };
const unknown: Message = {
  1: { name: 'typeMeta', type: typeMeta },
  2: { name: 'raw', type: 'bytes' },
  3: { name: 'contentEncoding', type: 'string' },
  4: { name: 'contentType', type: 'string' },
};
const ownerReference: Message = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool', presence: true },
  7: { name: 'blockOwnerDeletion', type: 'bool', presence: true },
};
const objectMeta: Message = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  11: { name: 'labels', type: 'string', map: true },
  12: { name: 'annotations', type: 'string', map: true },
  13: { name: 'ownerReferences', type: ownerReference, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};
const deleteOptions: Message = {
  1: { name: 'gracePeriodSeconds', type: 'int64', presence: true },
  2: {
    name: 'preconditions',
    type: {
      1: { name: 'uid', type: 'string', presence: true },
      2: { name: 'resourceVersion', type: 'string', presence: true },
    },
  },
  3: { name: 'orphanDependents', type: 'bool', presence: true },
  4: { name: 'propagationPolicy', type: 'string', presence: true },
  5: { name: 'dryRun', type: 'string', repeated: true },
};
const resourceAttributes: Message = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};
const nonResourceAttributes: Message = {
  1: { name: 'path', type: 'string' },
  2: { name: 'verb', type: 'string' },
};

const labelSelector: Message = strict({
  1: { name: 'matchLabels', type: 'string', map: true },
  2: {
    name: 'matchExpressions',
    repeated: true,
    type: strict({
      1: { name: 'key', type: 'string' },
      2: { name: 'operator', type: 'string' },
      3: { name: 'values', type: 'string', repeated: true },
    }),
  },
});
/** k8s.io/apimachinery's IntOrString: {type, intVal, strVal} in protobuf, 1 or "25%" in JSON. */
const intOrString: Field['convert'] = (d) => (d.type === 1 ? (d.strVal ?? '') : (d.intVal ?? 0));
const intOrStringMessage: Message = strict({
  1: { name: 'type', type: 'int64' },
  2: { name: 'intVal', type: 'int32' },
  3: { name: 'strVal', type: 'string' },
});
/** The parts of a container `kubectl create deployment|job|cronjob` fills in. */
const container: Message = strict({
  1: { name: 'name', type: 'string' },
  2: { name: 'image', type: 'string' },
  3: { name: 'command', type: 'string', repeated: true },
  4: { name: 'args', type: 'string', repeated: true },
  5: { name: 'workingDir', type: 'string' },
  6: {
    name: 'ports',
    repeated: true,
    type: strict({
      1: { name: 'name', type: 'string' },
      2: { name: 'hostPort', type: 'int32' },
      3: { name: 'containerPort', type: 'int32' },
      4: { name: 'protocol', type: 'string' },
      5: { name: 'hostIP', type: 'string' },
    }),
  },
  7: {
    name: 'env',
    repeated: true,
    type: strict({ 1: { name: 'name', type: 'string' }, 2: { name: 'value', type: 'string' } }),
  },
  // ResourceRequirements: kubectl's generators send it empty.
  8: { name: 'resources', type: strict({}) },
  15: {
    name: 'securityContext',
    type: strict({
      1: {
        name: 'capabilities',
        type: strict({
          1: { name: 'add', type: 'string', repeated: true },
          2: { name: 'drop', type: 'string', repeated: true },
        }),
      },
      2: { name: 'privileged', type: 'bool', presence: true },
      4: { name: 'runAsUser', type: 'int64', presence: true },
      5: { name: 'runAsNonRoot', type: 'bool', presence: true },
      7: { name: 'allowPrivilegeEscalation', type: 'bool', presence: true },
      8: { name: 'runAsGroup', type: 'int64', presence: true },
    }),
  },
  13: { name: 'terminationMessagePath', type: 'string' },
  14: { name: 'imagePullPolicy', type: 'string' },
  20: { name: 'terminationMessagePolicy', type: 'string' },
});
const podSpec: Message = strict({
  2: { name: 'containers', type: container, repeated: true },
  3: { name: 'restartPolicy', type: 'string' },
  4: { name: 'terminationGracePeriodSeconds', type: 'int64', presence: true },
  5: { name: 'activeDeadlineSeconds', type: 'int64', presence: true },
  6: { name: 'dnsPolicy', type: 'string' },
  7: { name: 'nodeSelector', type: 'string', map: true },
  8: { name: 'serviceAccountName', type: 'string' },
  9: { name: 'serviceAccount', type: 'string' },
  10: { name: 'nodeName', type: 'string' },
  11: { name: 'hostNetwork', type: 'bool' },
  14: {
    name: 'securityContext',
    type: strict({
      2: { name: 'runAsUser', type: 'int64', presence: true },
      3: { name: 'runAsNonRoot', type: 'bool', presence: true },
      4: { name: 'supplementalGroups', type: 'int64', repeated: true },
      5: { name: 'fsGroup', type: 'int64', presence: true },
      6: { name: 'runAsGroup', type: 'int64', presence: true },
    }),
  },
  16: { name: 'hostname', type: 'string' },
  17: { name: 'subdomain', type: 'string' },
  19: { name: 'schedulerName', type: 'string' },
  20: { name: 'initContainers', type: container, repeated: true },
  24: { name: 'priorityClassName', type: 'string' },
  30: { name: 'enableServiceLinks', type: 'bool', presence: true },
  32: { name: 'priority', type: 'int32', presence: true },
});
const podTemplateSpec: Message = strict({
  1: { name: 'metadata', type: objectMeta },
  2: { name: 'spec', type: podSpec },
});

const jobSpec: Message = strict({
  1: { name: 'parallelism', type: 'int32', presence: true },
  2: { name: 'completions', type: 'int32', presence: true },
  3: { name: 'activeDeadlineSeconds', type: 'int64', presence: true },
  4: { name: 'selector', type: labelSelector },
  5: { name: 'manualSelector', type: 'bool', presence: true },
  6: { name: 'template', type: podTemplateSpec },
  7: { name: 'backoffLimit', type: 'int32', presence: true },
  8: { name: 'ttlSecondsAfterFinished', type: 'int32', presence: true },
  9: { name: 'completionMode', type: 'string' },
  10: { name: 'suspend', type: 'bool', presence: true },
});

/** The kinds read from protobuf, by kind; each with the apiVersions it is sent as. */
const MESSAGES: Record<string, { apiVersions: string[]; message: Message }> = {
  Namespace: {
    apiVersions: ['v1'],
    message: {
      1: { name: 'metadata', type: objectMeta },
      2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
    },
  },
  ConfigMap: {
    apiVersions: ['v1'],
    message: {
      1: { name: 'metadata', type: objectMeta },
      2: { name: 'data', type: 'string', map: true },
      3: { name: 'binaryData', type: 'bytes', map: true },
      4: { name: 'immutable', type: 'bool', presence: true },
    },
  },
  Deployment: {
    apiVersions: ['apps/v1'],
    message: {
      1: { name: 'metadata', type: objectMeta },
      2: {
        name: 'spec',
        type: strict({
          1: { name: 'replicas', type: 'int32', presence: true },
          2: { name: 'selector', type: labelSelector },
          3: { name: 'template', type: podTemplateSpec },
          4: {
            name: 'strategy',
            type: strict({
              1: { name: 'type', type: 'string' },
              2: {
                name: 'rollingUpdate',
                type: strict({
                  1: { name: 'maxUnavailable', type: intOrStringMessage, convert: intOrString },
                  2: { name: 'maxSurge', type: intOrStringMessage, convert: intOrString },
                }),
              },
            }),
          },
          5: { name: 'minReadySeconds', type: 'int32' },
          6: { name: 'revisionHistoryLimit', type: 'int32', presence: true },
          7: { name: 'paused', type: 'bool' },
          9: { name: 'progressDeadlineSeconds', type: 'int32', presence: true },
        }),
      },
    },
  },
  Job: {
    apiVersions: ['batch/v1'],
    message: { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: jobSpec } },
  },
  CronJob: {
    apiVersions: ['batch/v1'],
    message: {
      1: { name: 'metadata', type: objectMeta },
      2: {
        name: 'spec',
        type: strict({
          1: { name: 'schedule', type: 'string' },
          2: { name: 'startingDeadlineSeconds', type: 'int64', presence: true },
          3: { name: 'concurrencyPolicy', type: 'string' },
          4: { name: 'suspend', type: 'bool', presence: true },
          5: {
            name: 'jobTemplate',
            type: strict({ 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: jobSpec } }),
          },
          6: { name: 'successfulJobsHistoryLimit', type: 'int32', presence: true },
          7: { name: 'failedJobsHistoryLimit', type: 'int32', presence: true },
          8: { name: 'timeZone', type: 'string', presence: true },
        }),
      },
    },
  },
  Secret: {
    apiVersions: ['v1'],
    message: {
      1: { name: 'metadata', type: objectMeta },
      2: { name: 'data', type: 'bytes', map: true },
      3: { name: 'type', type: 'string' },
      4: { name: 'stringData', type: 'string', map: true },
      5: { name: 'immutable', type: 'bool', presence: true },
    },
  },
  DeleteOptions: { apiVersions: ['v1', 'meta.k8s.io/v1', 'policy/v1'], message: deleteOptions },
  Eviction: {
    apiVersions: ['policy/v1', 'policy/v1beta1'],
    message: { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'deleteOptions', type: deleteOptions } },
  },
  SelfSubjectAccessReview: {
    apiVersions: ['authorization.k8s.io/v1'],
    message: {
      1: { name: 'metadata', type: objectMeta },
      2: {
        name: 'spec',
        type: {
          1: { name: 'resourceAttributes', type: resourceAttributes },
          2: { name: 'nonResourceAttributes', type: nonResourceAttributes },
        },
      },
    },
  },
  SelfSubjectRulesReview: {
    apiVersions: ['authorization.k8s.io/v1'],
    message: {
      1: { name: 'metadata', type: objectMeta },
      2: { name: 'spec', type: { 1: { name: 'namespace', type: 'string' } } },
    },
  },
};

function invalid(why: string): ApiError {
  return new ApiError(
    'BadRequest',
    `the request body is not a valid Kubernetes protobuf message (${why}); send it as application/json instead`,
  );
}

class Decoder {
  private values = 0;
  constructor(private readonly limits: ParseLimits) {}

  private count(): void {
    if (++this.values > this.limits.maxValues) throw invalid(`more than ${this.limits.maxValues} values`);
  }

  private scalar(r: BinaryReader, type: Scalar, wire: WireType): unknown {
    const expect = type === 'string' || type === 'bytes' ? WireType.LengthDelimited : WireType.Varint;
    if (wire !== expect) throw invalid(`a ${type} field sent with wire type ${wire}`);
    switch (type) {
      case 'string':
        return r.string();
      case 'bytes':
        return Buffer.from(r.bytes());
      case 'bool':
        return r.bool();
      case 'int64':
        return Number(r.int64());
      case 'int32':
        return r.int32();
    }
  }

  /** `path` names where the message sits, for errors ("spec.template.spec.containers"). */
  message(bytes: Uint8Array, schema: Message, path = ''): Record<string, unknown> {
    const r = new BinaryReader(bytes);
    const out: Record<string, unknown> = {};
    while (r.pos < r.len) {
      const [no, wire] = r.tag();
      this.count();
      const field = schema[no];
      if (!field) {
        const skipped = r.skip(wire, no);
        if (STRICT.has(schema) && !isZeroValue(skipped, wire))
          throw invalid(`field ${no} of ${path || 'the object'} is not read from protobuf here`);
        continue;
      }
      let value: unknown;
      if (field.map) {
        if (wire !== WireType.LengthDelimited)
          throw invalid(`the map ${field.name} sent with wire type ${wire}`);
        const entry = this.message(r.bytes(), {
          1: { name: 'key', type: 'string' },
          2: { name: 'value', type: field.type as Scalar, presence: true },
        });
        const map = (out[field.name] ??= {}) as Record<string, unknown>;
        const value = entry.value ?? '';
        // map<string, bytes> reads as JSON has it: base64.
        map[String(entry.key ?? '')] = Buffer.isBuffer(value) ? value.toString('base64') : value;
        continue;
      }
      if (typeof field.type === 'object') {
        if (wire !== WireType.LengthDelimited)
          throw invalid(`the message ${field.name} sent with wire type ${wire}`);
        const decoded = this.message(r.bytes(), field.type, path ? `${path}.${field.name}` : field.name);
        value = field.convert ? field.convert(decoded) : decoded;
      } else {
        value = this.scalar(r, field.type, wire);
        if (!field.presence && !field.repeated && (value === '' || value === 0 || value === false)) continue;
      }
      if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(value);
      else out[field.name] = value;
    }
    return out;
  }
}

/** A skipped field's bytes hold its type's zero value (an empty string or message, 0, false). */
function isZeroValue(skipped: Uint8Array, wire: WireType): boolean {
  // Skipped bytes start with the value: a length of 0, or a varint 0.
  if (wire === WireType.LengthDelimited || wire === WireType.Varint)
    return skipped.length > 0 && skipped.every((b) => b === 0);
  return false;
}

/** Whether a content type is Kubernetes' protobuf. */
export function isProtobuf(contentType: string): boolean {
  return contentType === PROTOBUF_CONTENT_TYPE;
}

/**
 * The object a protobuf body carries, as JSON would have it (apiVersion and kind included); a
 * kind not read from protobuf here gets a 415 asking for JSON.
 */
export function decodeKubeProtobuf(
  body: Buffer,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC))
    throw invalid('it does not start with the bytes "k8s\\0"');
  const decoder = new Decoder(limits);
  let envelope: Record<string, unknown>;
  try {
    envelope = decoder.message(body.subarray(MAGIC.length), unknown);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw invalid((err as Error).message);
  }
  const meta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const kind = meta.kind ?? '';
  const apiVersion = meta.apiVersion ?? '';
  const entry = Object.hasOwn(MESSAGES, kind) ? MESSAGES[kind] : undefined;
  if (!entry || !entry.apiVersions.includes(apiVersion))
    throw new ApiError(
      'UnsupportedMediaType',
      `a ${echo(kind || 'message without a kind', 60)} (${echo(apiVersion, 60)}) is not read from protobuf here; send it as application/json or application/yaml`,
    );
  if (envelope.contentEncoding)
    throw invalid(`the content encoding "${echo(String(envelope.contentEncoding), 40)}" is not supported`);
  let object: Record<string, unknown>;
  try {
    object = decoder.message((envelope.raw as Buffer | undefined) ?? Buffer.alloc(0), entry.message);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw invalid((err as Error).message);
  }
  return { apiVersion, kind, ...object };
}
