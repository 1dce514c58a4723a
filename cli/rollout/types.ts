/** What `labctl rollout` needs of each kind it rolls out (kubectl's StatusViewer, HistoryViewer, Rollbacker). */
import type { KubeObject, PodTemplateSpec } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';

export interface Revision {
  revision: number;
  changeCause?: string;
  template: PodTemplateSpec;
  /** What the revision's holder carries besides its template (a Deployment's ReplicaSet's annotations). */
  annotations?: Record<string, string>;
}

export interface RolloutKind<T extends KubeObject = KubeObject> {
  kind: 'DaemonSet' | 'Deployment';
  /** "daemonset.apps": how kubectl names the object in what it prints. */
  resource: string;
  /** The progress message and whether the rollout is done; throws when it cannot finish. */
  status(obj: T): { message: string; done: boolean };
  /** Its revisions, oldest first. */
  revisions(client: Client, obj: T): Promise<Revision[]>;
  /** Whether the object runs this revision's template now. */
  isCurrent(obj: T, revision: Revision): boolean;
  /** Puts the revision's template back, pinned to the version read (a conflict is retried). */
  rollback(client: Client, obj: T, revision: Revision): Promise<void>;
  /** A reason the object cannot be rolled back now, if any. */
  refuseRollback?(obj: T): string | undefined;
}
