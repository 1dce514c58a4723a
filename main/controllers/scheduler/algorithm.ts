/**
 * One scheduling decision (Kubernetes' schedulePod), synchronous and free of I/O: filter the
 * nodes — starting where the last decision stopped, and stopping once enough fit, as
 * Kubernetes does on large clusters — then score the ones that fit and pick the best, ties
 * broken at random.
 */
import {
  NODE_AFFINITY,
  nodeNamesFromAffinity,
  REASON_NODE_AFFINITY,
} from './framework/plugins/nodeaffinity.js';
import { failureSummary } from './framework/summary.js';
import type { FilterPlugin, NodeInfo, PodInfo, ScorePlugin } from './framework/types.js';

/** Below this many nodes, every node is considered. */
const MIN_FEASIBLE_NODES_TO_FIND = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE = 5;

export interface Placement {
  kind: 'placed';
  nodeName: string;
  /** Nodes filtered, and how many of them fit. */
  evaluated: number;
  feasible: number;
}

export interface FitFailure {
  kind: 'unschedulable';
  /** Kubernetes' summary: "0/5 nodes are available: 2 Insufficient cpu, …". */
  message: string;
  /** The filters that rejected some node (which cluster events may help). */
  failedPlugins: Set<string>;
}

/** How many fitting nodes are enough (Kubernetes' adaptive percentageOfNodesToScore). */
export function numFeasibleNodesToFind(total: number): number {
  if (total < MIN_FEASIBLE_NODES_TO_FIND) return total;
  const percentage = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE, 50 - Math.floor(total / 125));
  return Math.max(MIN_FEASIBLE_NODES_TO_FIND, Math.floor((total * percentage) / 100));
}

export class SchedulingAlgorithm {
  private nextStartNodeIndex = 0;

  constructor(
    private readonly filters: FilterPlugin[],
    private readonly scores: ScorePlugin[],
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * `nodeNamed` looks a node up by name: a pod that names its nodes (a DaemonSet's pod names
   * one) is then filtered against those alone, without a walk over every node.
   */
  schedule(
    pod: PodInfo,
    everyNode: NodeInfo[] | (() => NodeInfo[]),
    nodeNamed?: (name: string) => NodeInfo | undefined,
  ): Placement | FitFailure {
    // Every node only when needed: the list is rebuilt after any node changes, and a pod that
    // names its node never needs it unless that node will not do.
    const allNodes = () => (typeof everyNode === 'function' ? everyNode() : everyNode);
    const named = nodeNamesFromAffinity(pod.pod);
    const nodes = !named
      ? allNodes()
      : nodeNamed
        ? [...named].map(nodeNamed).filter((n): n is NodeInfo => n !== undefined)
        : allNodes().filter((n) => named.has(n.name));
    const total = nodes.length;
    const wanted = numFeasibleNodesToFind(total);
    const feasible: NodeInfo[] = [];
    const rejected = new Map<string, string[]>();
    const failedPlugins = new Set<string>();
    let evaluated = 0;
    for (; evaluated < total && feasible.length < wanted; evaluated++) {
      const node = nodes[((named ? 0 : this.nextStartNodeIndex) + evaluated) % total];
      const why = this.filter(pod, node, failedPlugins);
      if (why) rejected.set(node.name, why);
      else feasible.push(node);
    }
    if (total && !named) this.nextStartNodeIndex = (this.nextStartNodeIndex + evaluated) % total;
    if (!feasible.length) {
      if (named) {
        // The nodes left out by name count as rejected by NodeAffinity, as Kubernetes reports them.
        for (const n of allNodes()) if (!named.has(n.name)) rejected.set(n.name, [REASON_NODE_AFFINITY]);
        failedPlugins.add(NODE_AFFINITY);
      }
      return { kind: 'unschedulable', message: failureSummary(allNodes().length, rejected), failedPlugins };
    }
    const best = feasible.length === 1 ? feasible[0] : this.pickBest(pod, feasible);
    return { kind: 'placed', nodeName: best.name, evaluated, feasible: feasible.length };
  }

  /** The first filter that rejects the node gives the reasons (Kubernetes stops there too). */
  private filter(pod: PodInfo, node: NodeInfo, failedPlugins: Set<string>): string[] | undefined {
    for (const plugin of this.filters) {
      const reasons = plugin.filter(pod, node);
      if (reasons) {
        failedPlugins.add(plugin.name);
        return reasons;
      }
    }
    return undefined;
  }

  private pickBest(pod: PodInfo, feasible: NodeInfo[]): NodeInfo {
    const totals = new Array<number>(feasible.length).fill(0);
    for (const plugin of this.scores) {
      const scores = feasible.map((n) => plugin.score(pod, n));
      plugin.normalize?.(scores);
      for (let i = 0; i < scores.length; i++) totals[i] += scores[i] * plugin.weight;
    }
    // Reservoir sampling among the best, so ties spread pods evenly.
    let best = 0;
    let ties = 1;
    for (let i = 1; i < totals.length; i++) {
      if (totals[i] > totals[best]) {
        best = i;
        ties = 1;
      } else if (totals[i] === totals[best] && this.random() * ++ties < 1) {
        best = i;
      }
    }
    return feasible[best];
  }
}
