/**
 * Which containers `labctl logs` reads, as kubectl's logs and polymorphichelpers decide: a pod
 * (POD or pod/NAME); a DaemonSet (ds/NAME) — the pod kubectl would pick, saying "Found N pods,
 * using pod/…", or all of them with --all-pods; or every pod a label selector (-l) matches.
 * In each pod: the container asked for, the `kubectl.kubernetes.io/default-container`, or the
 * first (saying so when there were others), or all of them with --all-containers.
 */
import { kindInfo } from '../../client/api/kinds.js';
import { labelSelectorFromObject } from '../../client/api/selectors.js';
import type { DaemonSet, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { CliError } from '../errors.js';
import { listAll, noResourcesMessage } from '../fetch.js';
import type { Io } from '../io.js';
import { kindOrFail, objectRef } from '../resources.js';
import { byLogging } from './bylogging.js';

export interface LogSource {
  namespace: string;
  pod: string;
  container: string;
}

export interface SourceOptions {
  /** POD or TYPE/NAME; or none with a selector. */
  resource?: string;
  selector?: string;
  container?: string;
  allContainers?: boolean;
  /** Every pod of a DaemonSet, not the one kubectl would pick. */
  allPods?: boolean;
}

const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/** kubectl's podcmd.AllContainerNames: init containers, then containers. */
function containerNames(pod: Pod): string[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name ?? '');
}

/** The container to read when none was named, saying so as kubectl does. */
function defaultContainer(io: Io, pod: Pod, quiet: boolean): string {
  const name = pod.metadata?.name ?? '';
  const names = containerNames(pod);
  const wanted = pod.metadata?.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (wanted) {
    if (names.includes(wanted)) return wanted;
    io.err(`Default container name "${wanted}" not found in pod ${name}\n`);
  }
  const first = pod.spec?.containers?.[0]?.name;
  if (!first) throw new CliError(`pod ${name} has no containers: there is no log to read`);
  if (names.length > 1 && !quiet) io.err(`Defaulted container "${first}" out of: ${names.join(', ')}\n`);
  return first;
}

function containersOf(io: Io, pod: Pod, opts: SourceOptions): LogSource[] {
  const namespace = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  const source = (container: string) => ({ namespace, pod: name, container });
  if (opts.allContainers) return containerNames(pod).map(source);
  if (opts.container) {
    if (!containerNames(pod).includes(opts.container)) {
      throw new CliError(
        `container ${opts.container} is not valid for pod ${name} out of: ${containerNames(pod).join(', ')}`,
      );
    }
    return [source(opts.container)];
  }
  return [source(defaultContainer(io, pod, opts.allPods === true))];
}

/** The pods of a DaemonSet, by its selector (as kubectl finds them), the best to read first. */
async function daemonSetPods(client: Client, namespace: string, name: string): Promise<Pod[]> {
  const ds = (await client.get('DaemonSet', name, { namespace })) as DaemonSet;
  const selector = labelSelectorFromObject(ds.spec?.selector).toString();
  const { items } = await listAll(client, kindInfo('Pod'), namespace, { labelSelector: selector });
  if (!items.length) {
    throw new CliError(
      `daemonset.apps/${name} has no pods (selector ${selector}) to read logs from; see \`labctl describe ds ${name}\` for why`,
    );
  }
  return (items as Pod[]).sort(byLogging);
}

/** The pods named by POD or TYPE/NAME. */
async function podsOf(io: Io, client: Client, namespace: string, opts: SourceOptions): Promise<Pod[]> {
  const resource = opts.resource ?? '';
  const slash = resource.indexOf('/');
  const info = slash < 0 ? kindInfo('Pod') : kindOrFail(resource.slice(0, slash));
  const name = resource.slice(slash + 1);
  if (!name)
    throw new CliError(`there is no name in "${resource}": use TYPE/NAME, e.g. pod/web or ds/exporter`);
  if (info.kind === 'Pod') return [(await client.get('Pod', name, { namespace })) as Pod];
  if (info.kind !== 'DaemonSet') {
    throw new CliError(
      `cannot get the logs from ${objectRef(info, name)}: logs are read from a pod (POD, pod/NAME), a DaemonSet's pods (ds/NAME) or the pods a selector matches (-l)`,
    );
  }
  const pods = await daemonSetPods(client, namespace, name);
  if (opts.allPods) return pods;
  if (pods.length > 1) io.err(`Found ${pods.length} pods, using pod/${pods[0].metadata?.name}\n`);
  return [pods[0]];
}

/** The containers to read, in order; none (after saying so) when a selector matches nothing. */
export async function logSources(
  io: Io,
  client: Client,
  namespace: string,
  opts: SourceOptions,
): Promise<LogSource[]> {
  let pods: Pod[];
  if (opts.selector !== undefined) {
    pods = (await listAll(client, kindInfo('Pod'), namespace, { labelSelector: opts.selector }))
      .items as Pod[];
    if (!pods.length) io.err(noResourcesMessage(kindInfo('Pod'), namespace, false));
  } else {
    pods = await podsOf(io, client, namespace, opts);
  }
  return pods.flatMap((pod) => containersOf(io, pod, opts));
}
