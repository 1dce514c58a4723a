/**
 * The subresources of a pod that are not its status: `log` (GET, streamed from the node's agent
 * through the reverse tunnel, as `labctl logs` is), `eviction` (POST a policy/v1 Eviction:
 * `kubectl drain`) and `binding` (POST a Binding: a scheduler's write). Each reads the request,
 * calls the apiserver with the caller's identity, and answers as Kubernetes does.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import type { ApiServer } from '../apiserver/apiserver.js';
import type { RestRequestMessage, RestResponse } from './handler.js';
import type { RestVerb } from './paths.js';
import { deleteOptions, flag, intParam } from './query.js';
import { readOptionalObject } from './requestbody.js';
import { NO_CACHE, send } from './response.js';

export const POD_SUBRESOURCES = ['log', 'eviction', 'binding'] as const;
export type PodSubresource = (typeof POD_SUBRESOURCES)[number];

/** What Kubernetes answers a successful eviction or binding: a Status with code 201. */
function created(res: RestResponse): void {
  send(
    res,
    201,
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }),
  );
}

/** GET pods/NAME/log: the container's log as text/plain, kept open with follow=true. */
async function serveLog(
  api: ApiServer,
  id: Identity,
  namespace: string | undefined,
  name: string,
  req: RestRequestMessage,
  res: RestResponse,
  url: URL,
): Promise<void> {
  let ended = false;
  let failure: ApiError | undefined;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const stream = await api.logs(
    id,
    {
      namespace,
      name,
      container: url.searchParams.get('container') ?? undefined,
      follow: flag(url, 'follow'),
      previous: flag(url, 'previous'),
      timestamps: flag(url, 'timestamps'),
      tailLines: intParam(url, 'tailLines'),
      sinceSeconds: intParam(url, 'sinceSeconds'),
      sinceTime: url.searchParams.get('sinceTime') ?? undefined,
      limitBytes: intParam(url, 'limitBytes'),
    },
    {
      data(chunk, taken) {
        if (ended) return taken();
        if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': NO_CACHE });
        if ((res as { write(c: Buffer): boolean }).write(chunk)) taken();
        else res.once('drain', taken);
      },
      end(err) {
        if (ended) return;
        ended = true;
        failure = err;
        finish();
      },
    },
  );
  const closed = () => {
    if (ended) return;
    ended = true;
    stream.stop();
    finish();
  };
  req.once('close', closed);
  res.once('close', closed);
  await done;
  req.off('close', closed);
  // An error before the first byte is an answer of its own; after it, the stream just ends.
  if (failure && !res.headersSent) throw failure;
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': NO_CACHE });
  res.end();
}

/**
 * The body of a POST to a pod's subresource (an Eviction, a Binding), read once the request is
 * authorized on its URL; the name it carries, if any, must be the URL's.
 */
async function readPodSubresourceBody(
  r: PodSubresourceRequest,
  kind: 'Eviction' | 'Binding',
): Promise<Record<string, unknown>> {
  r.api.authorizeUrl(r.id, 'create', 'Pod', r.namespace, r.name, r.subresource);
  const body = await readOptionalObject(r.req, kind);
  const meta = (body.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  if (meta.name !== undefined && meta.name !== r.name)
    throw new ApiError(
      'BadRequest',
      `name in URL does not match name in ${kind} object ("${echo(String(meta.name), 80)}")`,
    );
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== r.namespace)
    throw new ApiError('BadRequest', `namespace in URL does not match namespace in ${kind} object`);
  return body;
}

/** POST pods/NAME/eviction: the pod deleted with the Eviction's DeleteOptions. */
async function serveEviction(r: PodSubresourceRequest): Promise<void> {
  const eviction = await readPodSubresourceBody(r, 'Eviction');
  const options = eviction.deleteOptions ?? {};
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new ApiError('BadRequest', 'deleteOptions must be a DeleteOptions object');
  await r.api.evict(r.id, {
    namespace: r.namespace,
    name: r.name,
    ...deleteOptions(options as Record<string, unknown>, r.url),
  });
  created(r.res);
}

/** POST pods/NAME/binding: the pod bound to the Binding's target node. */
async function serveBinding(r: PodSubresourceRequest): Promise<void> {
  const binding = await readPodSubresourceBody(r, 'Binding');
  await r.api.bind(r.id, {
    namespace: r.namespace,
    binding: {
      ...binding,
      metadata: { ...(binding.metadata as object), name: r.name, namespace: r.namespace },
    },
    dryRun: r.dryRun,
  });
  created(r.res);
}

export interface PodSubresourceRequest {
  api: ApiServer;
  id: Identity;
  subresource: PodSubresource;
  /** The request's verb: log takes GET (get), eviction and binding POST (create). */
  verb: RestVerb;
  namespace: string | undefined;
  name: string;
  req: RestRequestMessage;
  res: RestResponse;
  url: URL;
  dryRun: boolean;
}

export async function servePodSubresource(r: PodSubresourceRequest): Promise<void> {
  const expected = r.subresource === 'log' ? 'get' : 'create';
  if (r.verb !== expected)
    throw new ApiError(
      'NotImplemented',
      `pods/${r.subresource} takes ${expected === 'get' ? 'GET' : 'POST'} only`,
    );
  switch (r.subresource) {
    case 'log':
      return serveLog(r.api, r.id, r.namespace, r.name, r.req, r.res, r.url);
    case 'eviction':
      return serveEviction(r);
    case 'binding':
      return serveBinding(r);
  }
}
