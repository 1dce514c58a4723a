/**
 * The Kubernetes REST API, the second front door onto the same apiserver as gRPC (DESIGN.md
 * §3): authenticate from the Authorization header before anything is read, take the path apart,
 * call the apiserver with the caller's identity (it authorizes, admits, validates), and answer
 * in Kubernetes JSON — errors as metav1.Status. No behaviour lives here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { ApiError, echo } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import type { KubeObject } from '../../client/api/types.js';
import { toApiError, type ApiServer } from '../apiserver/apiserver.js';
import type { IngressBrake } from '../grpc/ingressbrake.js';
import type { TokenStore } from '../grpc/tokens.js';
import type { Logger } from '../logging.js';
import { readBody } from './body.js';
import { send } from './response.js';
import {
  deleteOptions,
  dryRunOf,
  fieldManagerOf,
  fieldValidationOf,
  flag,
  intParam,
  param,
} from './query.js';
import { readOptionalObject, readWriteBody } from './requestbody.js';
import { SCALABLE_KINDS, serveScale } from './scale.js';
import { POD_SUBRESOURCES, servePodSubresource, type PodSubresource } from './podsubresources.js';
import { answerReview } from './reviews.js';
import {
  AGGREGATED_DISCOVERY_TYPE,
  aggregatedDiscovery,
  discoveryDocument,
  versionInfo,
  wantsAggregatedDiscovery,
} from './discovery.js';
import { jsonOfEntry, jsonOfObject, listJson } from './encoding.js';
import { parseRestRequest, type RestRequest } from './paths.js';
import { statusOf } from './status.js';
import { tableOf, tableRequested } from './table.js';
import { openApiV2, openApiV3Document, openApiV3Root, openApiV3Target } from './openapi.js';
import { serveWatch } from './watch.js';
import { isInstallPath, serveInstallAsset, type InstallAssets } from './install.js';
import { realClock, type Clock } from '../../client/util/clock.js';

export type RestRequestMessage = IncomingMessage | Http2ServerRequest;
export type RestResponse = ServerResponse | Http2ServerResponse;

export interface RestHandlerOptions {
  api: ApiServer;
  tokens: TokenStore;
  logger: Logger;
  /** host:port clients reach this server at (discovery's serverAddressByClientCIDRs). */
  serverAddress(): string;
  /** Per watch: bytes of events a client that stopped reading may leave unsent. */
  watchBufferBytes?: number;
  /** For the ages in Table answers (default: the real clock). */
  clock?: Clock;
  /** The CA and agent downloads served to machines that join (install.ts). */
  install?: InstallAssets;
  /** Holds back HTTP/2 connections whose requests keep being refused (ingressbrake.ts). */
  brake?: IngressBrake;
}

/** Pod subresources that stream for as long as the client reads. */
const LONG_RUNNING_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward']);

/** Longer URLs are refused before they are parsed (Kubernetes' own limit is similar). */
const MAX_URL_CHARS = 16 * 1024;

const PATCH_CONTENT_TYPES: Record<string, string> = {
  'application/apply-patch+yaml': 'apply',
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/strategic-merge-patch+json': 'strategic',
};

function sendError(res: RestResponse, err: ApiError): void {
  const status = statusOf(err);
  if (err.details.retryAfterSeconds && !res.headersSent)
    res.setHeader('retry-after', String(err.details.retryAfterSeconds));
  if (err.reason === 'Unauthorized' && !res.headersSent)
    res.setHeader('www-authenticate', 'Bearer realm="kubelab"');
  send(res, status.code, JSON.stringify(status));
}

function authenticate(tokens: TokenStore, header: string | undefined): Identity {
  if (!header)
    throw new ApiError(
      'Unauthorized',
      `no bearer token: use a kubeconfig from \`kubelab kubeconfig\`, or send "Authorization: Bearer <token>" (the admin token is in ${tokens.adminTokenPath})`,
    );
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  const id = m ? tokens.authenticate(m[1]) : undefined;
  if (!id)
    throw new ApiError(
      'Unauthorized',
      'the bearer token is not valid (unknown, malformed or expired); get a current token from the cluster admin',
    );
  return id;
}

export function restHandler(
  options: RestHandlerOptions,
): (req: RestRequestMessage, res: RestResponse) => void {
  const { api, tokens, logger } = options;
  const clock = options.clock ?? realClock;

  async function serveResource(
    id: Identity,
    r: Extract<RestRequest, { type: 'resource' }>,
    req: RestRequestMessage,
    res: RestResponse,
    url: URL,
  ): Promise<void> {
    const kind = r.info.kind;
    const { namespace, name, subresource } = r;
    if (
      kind === 'Pod' &&
      name !== undefined &&
      (POD_SUBRESOURCES as readonly string[]).includes(subresource ?? '')
    )
      return servePodSubresource({
        api,
        id,
        subresource: subresource as PodSubresource,
        verb: r.verb,
        namespace,
        name,
        req,
        res,
        url,
        dryRun: dryRunOf(url),
      });
    if (subresource === 'scale' && name !== undefined && SCALABLE_KINDS.has(kind)) {
      const contentType = String(req.headers['content-type'] ?? '')
        .split(';')[0]
        .trim();
      return serveScale({
        api,
        id,
        info: r.info,
        verb: r.verb,
        namespace,
        name,
        req,
        res,
        patchType: PATCH_CONTENT_TYPES[contentType],
        dryRun: dryRunOf(url),
      });
    }
    if (subresource !== undefined && subresource !== 'status')
      throw new ApiError(
        'NotFound',
        `${r.info.resource}/${echo(subresource, 40)} is not served; \`kubectl api-resources\` lists what is`,
      );
    if (subresource === 'status' && !r.info.hasStatus)
      throw new ApiError('NotFound', `${r.info.resource} have no status subresource`);
    const table = tableRequested(
      Array.isArray(req.headers.accept) ? req.headers.accept.join(',') : req.headers.accept,
      url.searchParams.get('includeObject'),
    );
    const selectors = {
      labelSelector: param(url, 'labelSelector'),
      fieldSelector: param(url, 'fieldSelector'),
    };
    switch (r.verb) {
      case 'get': {
        const obj = await api.get(id, {
          kind,
          namespace,
          name,
          resourceVersion: param(url, 'resourceVersion'),
        });
        if (table) return send(res, 200, JSON.stringify(tableOf(r.info, [obj], table, clock.now())));
        return send(res, 200, jsonOfObject(obj));
      }
      case 'list': {
        const list = await api.listCached(id, {
          kind,
          namespace,
          ...selectors,
          limit: intParam(url, 'limit'),
          continue: param(url, 'continue'),
          resourceVersion: param(url, 'resourceVersion'),
          resourceVersionMatch: param(url, 'resourceVersionMatch'),
        });
        if (table) {
          const metadata: Record<string, unknown> = { resourceVersion: list.resourceVersion };
          if (list.continue) metadata.continue = list.continue;
          if (list.remainingItemCount !== undefined) metadata.remainingItemCount = list.remainingItemCount;
          const objects = list.items.map((e) => e.object);
          return send(res, 200, JSON.stringify(tableOf(r.info, objects, table, clock.now(), { metadata })));
        }
        return send(res, 200, listJson(r.info, list.items.map(jsonOfEntry), list));
      }
      case 'watch':
        return serveWatch(
          api,
          tokens,
          id,
          r.info,
          req,
          res,
          {
            kind,
            namespace,
            ...selectors,
            resourceVersion: param(url, 'resourceVersion'),
            allowWatchBookmarks: url.searchParams.get('allowWatchBookmarks') === 'true',
            sendInitialEvents:
              url.searchParams.get('sendInitialEvents') === null
                ? undefined
                : url.searchParams.get('sendInitialEvents') === 'true',
            timeoutSeconds: intParam(url, 'timeoutSeconds'),
          },
          { bufferBytes: options.watchBufferBytes, logger, table, clock },
        );
      case 'create':
      case 'update': {
        const warnings: string[] = [];
        const write = {
          kind,
          name,
          namespace,
          dryRun: dryRunOf(url),
          fieldValidation: fieldValidationOf(url),
          fieldManager: fieldManagerOf(url, req.headers['user-agent']),
          warnings,
        };
        // Authorized on the URL before a byte of the body is read.
        api.authorizeEnvelope(id, r.verb, write, subresource === 'status' ? 'status' : undefined);
        const body = await readWriteBody(req, kind);
        const written =
          r.verb === 'create'
            ? await api.create(id, { ...write, ...body })
            : subresource === 'status'
              ? await api.updateStatus(id, { ...write, ...body })
              : await api.update(id, { ...write, ...body });
        // Kubernetes' warnings (RFC 7234 code 299), which kubectl prints as "Warning: …".
        if (warnings.length)
          res.setHeader(
            'warning',
            warnings.map((w) => `299 - ${JSON.stringify(w)}`),
          );
        return send(res, r.verb === 'create' ? 201 : 200, jsonOfObject(written));
      }
      case 'patch': {
        const contentType = String(req.headers['content-type'] ?? '')
          .split(';')[0]
          .trim();
        const patchType = PATCH_CONTENT_TYPES[contentType];
        if (!patchType)
          throw new ApiError(
            'BadRequest',
            `the patch type "${echo(contentType, 80)}" is not supported; send application/apply-patch+yaml (server-side apply), application/merge-patch+json, application/json-patch+json or application/strategic-merge-patch+json`,
          );
        // Authorized on the URL before a byte of the body is read.
        api.authorizeUrl(id, 'patch', kind, namespace, name, subresource === 'status' ? 'status' : undefined);
        const patch = await readBody(req);
        // Server-side apply names its manager outright (kubectl sends fieldManager=kubectl).
        const fieldManager =
          patchType === 'apply'
            ? (param(url, 'fieldManager') ?? '')
            : fieldManagerOf(url, req.headers['user-agent']);
        const { object, created } = await api.patchOrApply(id, {
          kind,
          namespace,
          name,
          patchType,
          patch,
          subresource,
          dryRun: dryRunOf(url),
          fieldManager,
          force: flag(url, 'force'),
        });
        return send(res, created ? 201 : 200, jsonOfObject(object));
      }
      case 'delete': {
        // Authorized on the URL before the DeleteOptions body is read.
        api.authorizeUrl(id, 'delete', kind, namespace, name);
        const opts = deleteOptions(await readOptionalObject(req, 'DeleteOptions'), url);
        const deleted = await api.delete(id, {
          kind,
          namespace,
          name,
          ...opts,
          dryRun: opts.dryRun || dryRunOf(url),
        });
        return send(res, 200, jsonOfObject(deleted.object));
      }
      case 'deletecollection': {
        api.authorizeUrl(id, 'delete', kind, namespace, undefined);
        const opts = deleteOptions(await readOptionalObject(req, 'DeleteOptions'), url);
        const dryRun = opts.dryRun || dryRunOf(url);
        const list = await api.list(id, { kind, namespace, ...selectors });
        const gone: KubeObject[] = [];
        for (const item of list.items) {
          const meta = item.metadata ?? {};
          const res1 = await api.delete(id, {
            kind,
            namespace: meta.namespace,
            name: meta.name,
            ...opts,
            dryRun,
          });
          gone.push(res1.object);
        }
        return send(
          res,
          200,
          listJson(r.info, gone.map(jsonOfObject), { resourceVersion: list.resourceVersion }),
        );
      }
    }
  }

  async function serve(req: RestRequestMessage, res: RestResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    if (rawUrl.length > MAX_URL_CHARS)
      throw new ApiError(
        'BadRequest',
        `the URL is ${rawUrl.length} characters long, over the limit of ${MAX_URL_CHARS}`,
      );
    const url = new URL(rawUrl, 'https://kubelab.invalid');
    // Public, as k3s's /cacerts: a machine fetches them before it has any credential.
    if (isInstallPath(url.pathname)) return serveInstallAsset(req, res, url.pathname, options.install ?? {});
    const r = parseRestRequest(req.method ?? 'GET', url);
    // Public, as on any cluster (system:public-info-viewer): a load balancer checks them.
    if (r.type === 'health') return send(res, 200, 'ok', 'text/plain; charset=utf-8');
    if (r.type === 'version') return send(res, 200, JSON.stringify(versionInfo()));
    const auth = req.headers.authorization;
    const id = authenticate(tokens, Array.isArray(auth) ? auth[0] : auth);
    if (r.type === 'resource') {
      // Watches and pod streams are long-running: they take no seat (Kubernetes' APF too).
      if (r.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(r.subresource ?? ''))
        return serveResource(id, r, req, res, url);
      const running = api.flowControl.run(id, () => serveResource(id, r, req, res, url), r.info.kind);
      // HTTP/2 only: an HTTP/1.1 connection carries one request at a time anyway.
      const session = () => ('stream' in req ? req.stream.session : undefined);
      return options.brake ? options.brake.watch(running, id, session) : running;
    }
    if (r.type === 'review') {
      const answer = answerReview(api, id, r.review, await readOptionalObject(req, r.review.kind));
      return send(res, 201, JSON.stringify(answer));
    }
    if (r.type === 'openapiV2') {
      const doc = openApiV2(String(req.headers.accept ?? '').includes('protobuf'));
      res.writeHead(200, { 'content-type': doc.contentType });
      return void res.end(doc.body);
    }
    if (r.type === 'openapiV3') {
      if (!r.path.length) return send(res, 200, JSON.stringify(openApiV3Root()));
      const gv = openApiV3Target(r.path);
      if (!gv)
        throw new ApiError(
          'NotFound',
          `no OpenAPI document at ${echo(url.pathname, 200)}; /openapi/v3 lists them`,
        );
      return send(res, 200, JSON.stringify(openApiV3Document(gv.group, gv.version)));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new ApiError(
        'NotImplemented',
        `${echo(String(req.method), 20)} is not allowed on ${echo(url.pathname, 100)}; it is read-only`,
      );
    const accept = Array.isArray(req.headers.accept) ? req.headers.accept.join(',') : req.headers.accept;
    if ((r.type === 'legacyVersions' || r.type === 'groups') && wantsAggregatedDiscovery(accept))
      return send(
        res,
        200,
        JSON.stringify(aggregatedDiscovery(r.type === 'legacyVersions')),
        AGGREGATED_DISCOVERY_TYPE,
      );
    return send(res, 200, JSON.stringify(discoveryDocument(r, options.serverAddress())));
  }

  return (req, res) => {
    res.on('error', () => undefined);
    serve(req, res).catch((err: unknown) => {
      if (res.writableEnded || (res as { destroyed?: boolean }).destroyed) return;
      sendError(res, toApiError(err, logger));
    });
  };
}
