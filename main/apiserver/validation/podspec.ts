/**
 * Pod spec validation (Kubernetes' ValidatePodSpec), shared by pods and pod templates.
 */
import { parseQuantity } from '../../../client/api/quantity.js';
import { configKeyErrors } from '../registry/configmap.js';
import { validatePodSecurityContext, validateSecurityContext } from './security.js';
import type {
  Container,
  NodeSelectorTerm,
  PodSpec,
  Probe,
  Toleration,
  Volume,
} from '../../../client/api/types.js';
import {
  duplicate,
  forbidden,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  notSupported,
  required,
  validateLabels,
  type FieldError,
} from '../../../client/api/validation.js';
import {
  isServiceName,
  validateEnum,
  validateMin,
  validatePortNumOrName,
  validateQuantities,
} from './common.js';

export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const STANDARD_RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pods'];
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** The pod fields an environment variable may take (the downward API; labels and annotations by key too). */
const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];

export function validatePodSpec(spec: PodSpec | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!spec) return [required(path)];
  const volumes = validateVolumes(spec.volumes, `${path}.volumes`, errors);
  const names = new Set<string>();
  if (!spec.containers?.length)
    errors.push(required(`${path}.containers`, 'a pod needs at least one container'));
  (spec.initContainers ?? []).forEach((c, i) =>
    validateContainer(c, `${path}.initContainers[${i}]`, names, volumes, errors, true),
  );
  (spec.containers ?? []).forEach((c, i) =>
    validateContainer(c, `${path}.containers[${i}]`, names, volumes, errors, false),
  );
  validateHostPorts(spec, path, errors);
  errors.push(...validatePodSecurityContext(spec.securityContext, `${path}.securityContext`));

  validateEnum(spec.restartPolicy, `${path}.restartPolicy`, RESTART_POLICIES, errors, false);
  validateEnum(
    spec.dnsPolicy,
    `${path}.dnsPolicy`,
    ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'],
    errors,
    false,
  );
  validateMin(spec.terminationGracePeriodSeconds, `${path}.terminationGracePeriodSeconds`, 0, errors);
  validateMin(spec.activeDeadlineSeconds, `${path}.activeDeadlineSeconds`, 1, errors);
  errors.push(...validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  if (spec.nodeName)
    for (const m of isDNS1123Subdomain(spec.nodeName))
      errors.push(invalid(`${path}.nodeName`, spec.nodeName, m));
  if (spec.hostname)
    for (const m of isDNS1123Label(spec.hostname)) errors.push(invalid(`${path}.hostname`, spec.hostname, m));
  if (spec.schedulerName)
    for (const m of isDNS1123Subdomain(spec.schedulerName))
      errors.push(invalid(`${path}.schedulerName`, spec.schedulerName, m));
  validateEnum(
    spec.preemptionPolicy,
    `${path}.preemptionPolicy`,
    ['PreemptLowerPriority', 'Never'],
    errors,
    false,
  );
  (spec.tolerations ?? []).forEach((t, i) => validateToleration(t, `${path}.tolerations[${i}]`, errors));
  validateNodeAffinity(spec, path, errors);
  validateReadinessGates(spec, path, errors);
  return errors;
}

function validateVolumes(volumes: Volume[] | undefined, path: string, errors: FieldError[]): Set<string> {
  const names = new Set<string>();
  (volumes ?? []).forEach((v, i) => {
    const p = `${path}[${i}]`;
    if (!v.name) errors.push(required(`${p}.name`));
    else {
      for (const m of isDNS1123Label(v.name)) errors.push(invalid(`${p}.name`, v.name, m));
      if (names.has(v.name)) errors.push(duplicate(`${p}.name`, v.name));
      names.add(v.name);
    }
    const sources = [v.hostPath, v.emptyDir, v.configMap, v.secret, v.projected, v.downwardAPI].filter(
      (s) => s !== undefined,
    ).length;
    if (sources === 0)
      errors.push(
        required(
          p,
          'must specify a volume type: configMap, secret, projected, downwardAPI, emptyDir or hostPath',
        ),
      );
    if (sources > 1) errors.push(forbidden(p, 'may not specify more than 1 volume type'));
    if (v.hostPath) {
      if (!v.hostPath.path) errors.push(required(`${p}.hostPath.path`));
      validateEnum(
        v.hostPath.type,
        `${p}.hostPath.type`,
        ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'],
        errors,
      );
    }
    if (v.emptyDir?.sizeLimit)
      validateQuantities({ sizeLimit: v.emptyDir.sizeLimit }, `${p}.emptyDir`, errors);
    validateEnum(v.emptyDir?.medium, `${p}.emptyDir.medium`, ['', 'Memory'], errors);
    if (v.configMap) {
      if (!v.configMap.name) errors.push(required(`${p}.configMap.name`));
      validateKeyToPaths(v.configMap.items, `${p}.configMap.items`, errors);
      validateFileMode(v.configMap.defaultMode, `${p}.configMap.defaultMode`, errors);
    }
    if (v.secret) {
      if (!v.secret.secretName) errors.push(required(`${p}.secret.secretName`));
      validateKeyToPaths(v.secret.items, `${p}.secret.items`, errors);
      validateFileMode(v.secret.defaultMode, `${p}.secret.defaultMode`, errors);
    }
    if (v.downwardAPI) {
      validateDownwardFiles(v.downwardAPI.items, `${p}.downwardAPI.items`, errors);
      validateFileMode(v.downwardAPI.defaultMode, `${p}.downwardAPI.defaultMode`, errors);
    }
    if (v.projected) {
      validateFileMode(v.projected.defaultMode, `${p}.projected.defaultMode`, errors);
      (v.projected.sources ?? []).forEach((s, j) => {
        const sp = `${p}.projected.sources[${j}]`;
        const kinds = [s.configMap, s.secret, s.downwardAPI].filter((x) => x !== undefined).length;
        if (kinds !== 1)
          errors.push(invalid(sp, '', 'must specify exactly one of configMap, secret or downwardAPI'));
        if (s.configMap) {
          if (!s.configMap.name) errors.push(required(`${sp}.configMap.name`));
          validateKeyToPaths(s.configMap.items, `${sp}.configMap.items`, errors);
        }
        if (s.secret) {
          if (!s.secret.name) errors.push(required(`${sp}.secret.name`));
          validateKeyToPaths(s.secret.items, `${sp}.secret.items`, errors);
        }
        if (s.downwardAPI) validateDownwardFiles(s.downwardAPI.items, `${sp}.downwardAPI.items`, errors);
      });
    }
  });
  return names;
}

/** Kubernetes' validateLocalDescendingPath: relative, no "..", not the writer's own "..name". */
function validateVolumePath(value: string | undefined, path: string, errors: FieldError[]): void {
  if (!value) {
    errors.push(required(path));
    return;
  }
  if (value.startsWith('/')) errors.push(invalid(path, value, 'must be a relative path'));
  if (value.split('/').includes('..')) errors.push(invalid(path, value, "must not contain '..'"));
  if (value.startsWith('..')) errors.push(invalid(path, value, "must not start with '..'"));
}

function validateFileMode(mode: number | undefined, path: string, errors: FieldError[]): void {
  if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o777))
    errors.push(invalid(path, String(mode), 'must be a number between 0 and 0777 (octal), both inclusive'));
}

function validateKeyToPaths(
  items: Array<{ key?: string; path?: string; mode?: number }> | undefined,
  path: string,
  errors: FieldError[],
): void {
  (items ?? []).forEach((item, i) => {
    const p = `${path}[${i}]`;
    if (!item.key) errors.push(required(`${p}.key`));
    else for (const m of configKeyErrors(item.key)) errors.push(invalid(`${p}.key`, item.key, m));
    validateVolumePath(item.path, `${p}.path`, errors);
    validateFileMode(item.mode, `${p}.mode`, errors);
  });
}

/** The pod fields a downwardAPI volume file may hold. */
const VOLUME_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'metadata.labels',
  'metadata.annotations',
];

function validateDownwardFiles(
  items:
    | Array<{ path?: string; fieldRef?: { fieldPath?: string }; resourceFieldRef?: unknown; mode?: number }>
    | undefined,
  path: string,
  errors: FieldError[],
): void {
  (items ?? []).forEach((item, i) => {
    const p = `${path}[${i}]`;
    validateVolumePath(item.path, `${p}.path`, errors);
    validateFileMode(item.mode, `${p}.mode`, errors);
    if (item.resourceFieldRef !== undefined)
      errors.push(
        forbidden(
          `${p}.resourceFieldRef`,
          "is not supported by kubelab's agent: use fieldRef (metadata.name, metadata.namespace, metadata.uid, metadata.labels, metadata.annotations)",
        ),
      );
    else if (!item.fieldRef?.fieldPath) errors.push(required(`${p}.fieldRef.fieldPath`));
    else if (
      !VOLUME_FIELD_PATHS.includes(item.fieldRef.fieldPath) &&
      !/^metadata\.(labels|annotations)\['.+'\]$/.test(item.fieldRef.fieldPath)
    )
      errors.push(notSupported(`${p}.fieldRef.fieldPath`, item.fieldRef.fieldPath, VOLUME_FIELD_PATHS));
  });
}

function validateContainer(
  c: Container,
  path: string,
  names: Set<string>,
  volumes: Set<string>,
  errors: FieldError[],
  init: boolean,
): void {
  if (!c.name) errors.push(required(`${path}.name`));
  else {
    for (const m of isDNS1123Label(c.name)) errors.push(invalid(`${path}.name`, c.name, m));
    if (names.has(c.name)) errors.push(duplicate(`${path}.name`, c.name));
    names.add(c.name);
  }
  if (!c.image && !c.command?.length) {
    errors.push(required(`${path}.command`, 'set command (the program the agent runs) or image'));
  }
  validateEnum(
    c.imagePullPolicy,
    `${path}.imagePullPolicy`,
    ['Always', 'IfNotPresent', 'Never'],
    errors,
    false,
  );
  validateEnum(
    c.terminationMessagePolicy,
    `${path}.terminationMessagePolicy`,
    ['File', 'FallbackToLogsOnError'],
    errors,
    false,
  );
  const portNames = new Set<string>();
  (c.ports ?? []).forEach((port, i) => {
    const p = `${path}.ports[${i}]`;
    if (port.containerPort === undefined) errors.push(required(`${p}.containerPort`));
    else if (port.containerPort < 1 || port.containerPort > 65535)
      errors.push(
        invalid(`${p}.containerPort`, port.containerPort, 'must be between 1 and 65535, inclusive'),
      );
    if (port.hostPort !== undefined && (port.hostPort < 0 || port.hostPort > 65535))
      errors.push(invalid(`${p}.hostPort`, port.hostPort, 'must be between 0 and 65535, inclusive'));
    validateEnum(port.protocol, `${p}.protocol`, ['TCP', 'UDP', 'SCTP'], errors, false);
    if (port.name) {
      if (!isServiceName(port.name))
        errors.push(
          invalid(
            `${p}.name`,
            port.name,
            'must be at most 15 lowercase letters, digits or "-", with at least one letter',
          ),
        );
      if (portNames.has(port.name)) errors.push(duplicate(`${p}.name`, port.name));
      portNames.add(port.name);
    }
  });
  (c.env ?? []).forEach((e, i) => {
    const p = `${path}.env[${i}]`;
    if (!e.name) errors.push(required(`${p}.name`));
    else if (!ENV_NAME.test(e.name))
      errors.push(
        invalid(
          `${p}.name`,
          e.name,
          'a valid environment variable name must consist of alphabetic characters, digits, "_", "-" or ".", and must not start with a digit',
        ),
      );
    if (e.value !== undefined && e.value !== '' && e.valueFrom)
      errors.push(invalid(`${p}.valueFrom`, '', 'may not be specified when `value` is not empty'));
    if (e.valueFrom) {
      const from = e.valueFrom;
      const sources = [from.fieldRef, from.resourceFieldRef, from.configMapKeyRef, from.secretKeyRef].filter(
        Boolean,
      ).length;
      if (sources !== 1)
        errors.push(
          invalid(
            `${p}.valueFrom`,
            '',
            'may not have more than one field specified at a time: fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef',
          ),
        );
      for (const [field, ref] of [
        ['configMapKeyRef', from.configMapKeyRef],
        ['secretKeyRef', from.secretKeyRef],
      ] as const) {
        if (!ref) continue;
        if (!ref.name) errors.push(required(`${p}.valueFrom.${field}.name`));
        if (!ref.key) errors.push(required(`${p}.valueFrom.${field}.key`));
        else
          for (const m of configKeyErrors(ref.key))
            errors.push(invalid(`${p}.valueFrom.${field}.key`, ref.key, m));
      }
      const fieldPath = e.valueFrom.fieldRef?.fieldPath;
      if (e.valueFrom.fieldRef && !fieldPath) errors.push(required(`${p}.valueFrom.fieldRef.fieldPath`));
      else if (
        fieldPath &&
        !ENV_FIELD_PATHS.includes(fieldPath) &&
        !/^metadata\.(labels|annotations)\['.+'\]$/.test(fieldPath)
      )
        errors.push(notSupported(`${p}.valueFrom.fieldRef.fieldPath`, fieldPath, ENV_FIELD_PATHS));
      if (e.valueFrom.resourceFieldRef && !e.valueFrom.resourceFieldRef.resource)
        errors.push(required(`${p}.valueFrom.resourceFieldRef.resource`));
    }
  });
  (c.envFrom ?? []).forEach((f, i) => {
    const p = `${path}.envFrom[${i}]`;
    if (!!f.configMapRef === !!f.secretRef)
      errors.push(invalid(p, '', 'must specify exactly one of configMapRef or secretRef'));
    if (f.configMapRef && !f.configMapRef.name) errors.push(required(`${p}.configMapRef.name`));
    if (f.secretRef && !f.secretRef.name) errors.push(required(`${p}.secretRef.name`));
    if (f.prefix && !/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(f.prefix))
      errors.push(
        invalid(
          `${p}.prefix`,
          f.prefix,
          'a valid environment variable name must consist of alphabetic characters, digits, "_", "-" or ".", and must not start with a digit',
        ),
      );
  });
  errors.push(...validateSecurityContext(c.securityContext, `${path}.securityContext`));
  validateResources(c, `${path}.resources`, errors);
  const mountPaths = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, i) => {
    const p = `${path}.volumeMounts[${i}]`;
    if (!m.name) errors.push(required(`${p}.name`));
    else if (!volumes.has(m.name)) errors.push(notSupported(`${p}.name`, m.name, [...volumes]));
    if (!m.mountPath) errors.push(required(`${p}.mountPath`));
    else if (!m.mountPath.startsWith('/'))
      errors.push(invalid(`${p}.mountPath`, m.mountPath, 'must be an absolute path'));
    else if (mountPaths.has(m.mountPath))
      errors.push(invalid(`${p}.mountPath`, m.mountPath, 'must be unique'));
    if (m.mountPath) mountPaths.add(m.mountPath);
    if (m.subPath) {
      if (m.subPath.startsWith('/'))
        errors.push(invalid(`${p}.subPath`, m.subPath, 'must be a relative path'));
      if (m.subPath.split('/').includes('..'))
        errors.push(invalid(`${p}.subPath`, m.subPath, "must not contain '..'"));
    }
  });
  if (init) {
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
      if (c[probe]) errors.push(forbidden(`${path}.${probe}`, 'may not be set for init containers'));
    }
  } else {
    validateProbe(c.livenessProbe, `${path}.livenessProbe`, errors, true);
    validateProbe(c.readinessProbe, `${path}.readinessProbe`, errors, false);
    validateProbe(c.startupProbe, `${path}.startupProbe`, errors, true);
  }
}

function validateResources(c: Container, path: string, errors: FieldError[]): void {
  const { limits, requests } = c.resources ?? {};
  for (const [which, map] of [
    ['limits', limits],
    ['requests', requests],
  ] as const) {
    validateQuantities(map, `${path}.${which}`, errors);
    for (const name of Object.keys(map ?? {})) {
      if (!STANDARD_RESOURCES.includes(name) && (!name.includes('/') || isQualifiedName(name).length)) {
        errors.push(
          notSupported(
            `${path}.${which}[${name}]`,
            name,
            STANDARD_RESOURCES.concat('<domain>/<name> extended resources'),
          ),
        );
      }
    }
  }
  for (const [name, req] of Object.entries(requests ?? {})) {
    const lim = limits?.[name];
    if (lim === undefined) continue;
    try {
      if (parseQuantity(req).cmp(parseQuantity(lim)) > 0) {
        errors.push(
          invalid(`${path}.requests[${name}]`, req, `must be less than or equal to ${name} limit of ${lim}`),
        );
      }
    } catch {
      // Already reported as an invalid quantity.
    }
  }
}

function validateProbe(
  probe: Probe | undefined,
  path: string,
  errors: FieldError[],
  successMustBeOne: boolean,
): void {
  if (!probe) return;
  const handlers = [probe.exec, probe.httpGet, probe.tcpSocket].filter((h) => h !== undefined).length;
  if (handlers === 0) errors.push(required(path, 'must specify a handler type: exec, httpGet or tcpSocket'));
  if (handlers > 1) errors.push(forbidden(path, 'may not specify more than 1 handler type'));
  if (probe.exec && !probe.exec.command?.length) errors.push(required(`${path}.exec.command`));
  if (probe.httpGet) {
    validatePortNumOrName(probe.httpGet.port, `${path}.httpGet.port`, errors);
    validateEnum(probe.httpGet.scheme, `${path}.httpGet.scheme`, ['HTTP', 'HTTPS'], errors, false);
  }
  if (probe.tcpSocket) validatePortNumOrName(probe.tcpSocket.port, `${path}.tcpSocket.port`, errors);
  validateMin(probe.initialDelaySeconds, `${path}.initialDelaySeconds`, 0, errors);
  validateMin(probe.timeoutSeconds, `${path}.timeoutSeconds`, 1, errors);
  validateMin(probe.periodSeconds, `${path}.periodSeconds`, 1, errors);
  validateMin(probe.successThreshold, `${path}.successThreshold`, 1, errors);
  validateMin(probe.failureThreshold, `${path}.failureThreshold`, 1, errors);
  if (successMustBeOne && probe.successThreshold !== undefined && probe.successThreshold !== 1) {
    errors.push(invalid(`${path}.successThreshold`, probe.successThreshold, 'must be 1'));
  }
}

function validateHostPorts(spec: PodSpec, path: string, errors: FieldError[]): void {
  const seen = new Set<string>();
  (spec.containers ?? []).forEach((c, ci) =>
    (c.ports ?? []).forEach((p, pi) => {
      if (!p.hostPort) return;
      const id = `${p.protocol ?? 'TCP'}/${p.hostIP ?? ''}/${p.hostPort}`;
      if (seen.has(id)) errors.push(duplicate(`${path}.containers[${ci}].ports[${pi}].hostPort`, p.hostPort));
      seen.add(id);
    }),
  );
}

export function validateToleration(t: Toleration, path: string, errors: FieldError[]): void {
  if (t.key) for (const m of isQualifiedName(t.key)) errors.push(invalid(`${path}.key`, t.key, m));
  const op = t.operator || 'Equal';
  validateEnum(op, `${path}.operator`, ['Equal', 'Exists'], errors, false);
  if (!t.key && op !== 'Exists')
    errors.push(
      invalid(
        `${path}.operator`,
        t.operator ?? '',
        'operator must be Exists when `key` is empty, which means "match all values and all keys"',
      ),
    );
  if (op === 'Exists' && t.value)
    errors.push(invalid(`${path}.operator`, t.operator, 'value must be empty when `operator` is "Exists"'));
  validateEnum(t.effect, `${path}.effect`, TAINT_EFFECTS, errors);
  if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
    errors.push(
      invalid(`${path}.effect`, t.effect ?? '', 'effect must be "NoExecute" when `tolerationSeconds` is set'),
    );
  }
}

function validateNodeAffinity(spec: PodSpec, path: string, errors: FieldError[]): void {
  const na = spec.affinity?.nodeAffinity;
  if (!na) return;
  const p = `${path}.affinity.nodeAffinity`;
  const req = na.requiredDuringSchedulingIgnoredDuringExecution;
  if (req) {
    if (!req.nodeSelectorTerms?.length)
      errors.push(
        required(
          `${p}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`,
          'must have at least one node selector term',
        ),
      );
    (req.nodeSelectorTerms ?? []).forEach((term, i) =>
      validateTerm(
        term,
        `${p}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[${i}]`,
        errors,
      ),
    );
  }
  (na.preferredDuringSchedulingIgnoredDuringExecution ?? []).forEach((pref, i) => {
    const pp = `${p}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    if (pref.weight === undefined || pref.weight < 1 || pref.weight > 100)
      errors.push(invalid(`${pp}.weight`, pref.weight, 'must be in the range 1-100'));
    if (!pref.preference) errors.push(required(`${pp}.preference`));
    else validateTerm(pref.preference, `${pp}.preference`, errors);
  });
}

export function validateTerm(term: NodeSelectorTerm, path: string, errors: FieldError[]): void {
  (term.matchExpressions ?? []).forEach((r, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    if (!r.key) errors.push(required(`${p}.key`));
    else for (const m of isQualifiedName(r.key)) errors.push(invalid(`${p}.key`, r.key, m));
    const n = r.values?.length ?? 0;
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (n === 0)
          errors.push(required(`${p}.values`, 'must be specified when `operator` is "In" or "NotIn"'));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (n > 0)
          errors.push(
            forbidden(`${p}.values`, 'may not be specified when `operator` is "Exists" or "DoesNotExist"'),
          );
        break;
      case 'Gt':
      case 'Lt':
        if (n !== 1 || !/^-?\d+$/.test(r.values![0]))
          errors.push(required(`${p}.values`, 'must be a single integer when `operator` is "Gt" or "Lt"'));
        break;
      default:
        errors.push(
          notSupported(`${p}.operator`, r.operator ?? '', [
            'In',
            'NotIn',
            'Exists',
            'DoesNotExist',
            'Gt',
            'Lt',
          ]),
        );
    }
  });
  (term.matchFields ?? []).forEach((r, i) => {
    const p = `${path}.matchFields[${i}]`;
    if (r.key !== 'metadata.name') errors.push(notSupported(`${p}.key`, r.key ?? '', ['metadata.name']));
    if (r.operator !== 'In' && r.operator !== 'NotIn')
      errors.push(notSupported(`${p}.operator`, r.operator ?? '', ['In', 'NotIn']));
    else if ((r.values?.length ?? 0) !== 1)
      errors.push(required(`${p}.values`, 'must have exactly one value for metadata.name'));
  });
}

/** Each gate names a condition type, a qualified name (Kubernetes' validateReadinessGates). */
function validateReadinessGates(spec: PodSpec, path: string, errors: FieldError[]): void {
  (spec.readinessGates ?? []).forEach((gate, i) => {
    const field = `${path}.readinessGates[${i}].conditionType`;
    if (!gate.conditionType)
      errors.push(required(field, 'name the pod condition that must be True for the pod to be Ready'));
    else
      for (const m of isQualifiedName(gate.conditionType)) errors.push(invalid(field, gate.conditionType, m));
  });
}
