/**
 * The scheduler's view of the nodes and what is placed on them (Kubernetes' scheduler cache).
 * A pod the scheduler has decided on is "assumed" on its node at once, before the binding
 * reaches the API, so the next decision already counts it: parallel bindings never
 * overcommit a node. The informer's copy of the bound pod later confirms the assumption; a
 * failed binding forgets it.
 */
import type { Node, Pod } from '../../../client/api/types.js';
import { addPod, newNodeInfo, podInfo, removePod } from './framework/resources.js';
import type { NodeInfo, PodInfo } from './framework/types.js';
import { keyOf } from './queue.js';

interface PodState {
  info: PodInfo;
  nodeName: string;
  assumed: boolean;
}

interface NodeEntry {
  info: NodeInfo;
  /** False for a node known only from pods bound to it (its Node not seen yet, or deleted). */
  real: boolean;
}

export class SchedulerCache {
  private readonly nodes = new Map<string, NodeEntry>();
  private readonly pods = new Map<string, PodState>();
  private list: NodeInfo[] | undefined;

  /** The nodes that can take pods, in a stable order (the scheduler walks it round-robin). */
  nodeInfos(): NodeInfo[] {
    this.list ??= [...this.nodes.values()].filter((e) => e.real).map((e) => e.info);
    return this.list;
  }

  nodeInfo(name: string): NodeInfo | undefined {
    const entry = this.nodes.get(name);
    return entry?.real ? entry.info : undefined;
  }

  isAssumed(key: string): boolean {
    return this.pods.get(key)?.assumed ?? false;
  }

  addNode(node: Node): void {
    this.setNode(node);
  }

  updateNode(node: Node): void {
    this.setNode(node);
  }

  removeNode(name: string): void {
    const entry = this.nodes.get(name);
    if (!entry) return;
    // Pods still bound to it keep a placeholder until they go too.
    if (entry.info.pods.size) entry.real = false;
    else this.nodes.delete(name);
    this.list = undefined;
  }

  /** A pod bound to a node, as the informer reports it (confirms an assumption). */
  addPod(pod: Pod): void {
    const key = keyOf(pod);
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return;
    const existing = this.pods.get(key);
    if (existing) {
      if (existing.nodeName === nodeName && existing.info.pod.metadata?.uid === pod.metadata?.uid) {
        existing.assumed = false;
        existing.info = { ...existing.info, pod };
        return;
      }
      this.detach(key, existing);
    }
    this.attach(key, { info: podInfo(pod), nodeName, assumed: false });
  }

  updatePod(pod: Pod): void {
    this.addPod(pod);
  }

  removePod(key: string): void {
    const existing = this.pods.get(key);
    if (existing) this.detach(key, existing);
  }

  /** Counts the pod on the node now, before its binding is written. */
  assume(info: PodInfo, nodeName: string): void {
    const existing = this.pods.get(info.key);
    if (existing) this.detach(info.key, existing);
    this.attach(info.key, { info, nodeName, assumed: true });
  }

  /** The binding failed: the pod no longer counts on that node. */
  forget(key: string): void {
    const existing = this.pods.get(key);
    if (existing?.assumed) this.detach(key, existing);
  }

  private setNode(node: Node): void {
    const name = node.metadata!.name!;
    const existing = this.nodes.get(name);
    this.nodes.set(name, { info: newNodeInfo(node, existing?.info.pods.values()), real: true });
    this.list = undefined;
  }

  private attach(key: string, state: PodState): void {
    let entry = this.nodes.get(state.nodeName);
    if (!entry) {
      entry = { info: newNodeInfo({ metadata: { name: state.nodeName } }), real: false };
      this.nodes.set(state.nodeName, entry);
    }
    addPod(entry.info, state.info);
    this.pods.set(key, state);
  }

  private detach(key: string, state: PodState): void {
    this.pods.delete(key);
    const entry = this.nodes.get(state.nodeName);
    if (!entry) return;
    removePod(entry.info, key);
    if (!entry.real && entry.info.pods.size === 0) this.nodes.delete(state.nodeName);
  }
}
