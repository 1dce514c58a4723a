/**
 * The scale subresource of Deployments and ReplicaSets (`/apis/apps/v1/.../deployments/NAME/scale`),
 * as an autoscaling/v1 Scale: what `kubectl scale` reads and writes (a merge patch of
 * spec.replicas, or a PUT of the Scale when it has a precondition). Writes go to the object's
 * spec.replicas, pinned to the version the Scale was computed from.
 */
import { ApiError, invalid } from '../../client/api/errors.js';
import { invalid as invalidField } from '../../client/api/validation.js';
import type { KindInfo } from '../../client/api/kinds.js';
import type { Identity } from '../../client/api/local.js';
import { labelSelectorFromObject } from '../../client/api/selectors.js';
import type { Deployment, KubeObject, ReplicaSet } from '../../client/api/types.js';
import { retryOnConflict } from '../../client/util/retryonconflict.js';
import type { ApiServer } from '../apiserver/apiserver.js';
import { applyPatch, readPatch } from '../apiserver/patch.js';
import { readBody } from './body.js';
import { readOptionalObject } from './requestbody.js';
import { send } from './response.js';
import type { RestRequestMessage, RestResponse } from './handler.js';
import type { RestVerb } from './paths.js';

export const SCALABLE_KINDS = new Set(['Deployment', 'ReplicaSet']);

export interface ScaleRequest {
  api: ApiServer;
  id: Identity;
  info: KindInfo;
  verb: RestVerb;
  namespace: string | undefined;
  name: string;
  req: RestRequestMessage;
  res: RestResponse;
  patchType: string | undefined;
  dryRun: boolean;
}

interface Scale {
  apiVersion: 'autoscaling/v1';
  kind: 'Scale';
  metadata: Record<string, unknown>;
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

function scaleOf(obj: Deployment | ReplicaSet): Scale {
  const m = obj.metadata ?? {};
  let selector: string | undefined;
  try {
    selector = obj.spec?.selector ? labelSelectorFromObject(obj.spec.selector).toString() : undefined;
  } catch {
    selector = undefined;
  }
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: obj.spec?.replicas ?? 0 },
    status: { replicas: obj.status?.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

/** spec.replicas of a Scale a client sent: a whole number, 0 or more. */
function replicasOf(scale: unknown, name: string): number {
  const replicas = (scale as { spec?: { replicas?: unknown } } | null)?.spec?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0 || replicas > 2 ** 31 - 1)
    throw invalid('Scale', name, [
      invalidField('spec.replicas', replicas ?? null, 'must be a whole number greater than or equal to 0'),
    ]);
  return replicas;
}

export async function serveScale(r: ScaleRequest): Promise<void> {
  const { api, id, info, namespace, name } = r;
  const kind = info.kind as 'Deployment' | 'ReplicaSet';
  const read = async () => (await api.get(id, { kind, namespace, name })) as Deployment | ReplicaSet;
  const write = async (current: KubeObject, replicas: number) => {
    const { object } = await api.patchOrApply(id, {
      kind,
      namespace,
      name,
      patchType: 'merge',
      patch: JSON.stringify({
        metadata: { resourceVersion: current.metadata?.resourceVersion },
        spec: { replicas },
      }),
      dryRun: r.dryRun,
    });
    return scaleOf(object as Deployment);
  };
  switch (r.verb) {
    case 'get':
      api.authorizeUrl(id, 'get', kind, namespace, name, 'scale');
      return send(r.res, 200, JSON.stringify(scaleOf(await read())));
    case 'update': {
      // Authorized on the URL before a byte of the body is read.
      api.authorizeUrl(id, 'update', kind, namespace, name, 'scale');
      const body = await readOptionalObject(r.req, 'Scale');
      const replicas = replicasOf(body, name);
      const current = await read();
      const precondition = (body.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
      if (
        typeof precondition === 'string' &&
        precondition !== '' &&
        precondition !== current.metadata?.resourceVersion
      )
        throw new ApiError(
          'Conflict',
          `Operation cannot be fulfilled on ${info.plural}.${info.group} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      return send(r.res, 200, JSON.stringify(await write(current, replicas)));
    }
    case 'patch': {
      api.authorizeUrl(id, 'patch', kind, namespace, name, 'scale');
      if (!r.patchType || r.patchType === 'apply')
        throw new ApiError(
          'UnsupportedMediaType',
          'patch the scale subresource with a JSON merge patch, e.g. {"spec":{"replicas":3}}',
        );
      const patchType = r.patchType;
      const document = readPatch(patchType, await readBody(r.req));
      // A conflict means the object moved between the read and the write: compute again.
      const scaled = await retryOnConflict(3, async () => {
        const current = await read();
        const patched = applyPatch(patchType, scaleOf(current), document, 'Scale');
        return write(current, replicasOf(patched, name));
      });
      return send(r.res, 200, JSON.stringify(scaled));
    }
    default:
      throw new ApiError('NotImplemented', `${info.resource}/scale takes GET, PUT and PATCH only`);
  }
}
