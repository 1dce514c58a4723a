/**
 * What the generic registry needs to know of a kind: its defaults, its validation, which
 * fields selectors may use, and how it is deleted. One file per kind implements it.
 */
import type { KindInfo } from '../../../client/api/kinds.js';
import type { KubeObject } from '../../../client/api/types.js';
import type { FieldError } from '../../../client/api/validation.js';

export interface StrategyContext {
  now: number;
}

export interface Strategy<T extends KubeObject = KubeObject> {
  readonly info: KindInfo;
  /** DNS-1123 subdomain (most kinds) or label (namespaces). */
  readonly nameRule: 'subdomain' | 'label';
  /** Kept in memory only, never in the store (NodeMetrics, like metrics-server). */
  readonly inMemory?: boolean;
  /**
   * No metadata.managedFields (default: tracked). NodeMetrics: Kubernetes' metrics API serves
   * them without any, and a node rewriting its usage every 10 s would pay field tracking on
   * every write and keep the entry in every version of its history.
   */
  readonly untrackedFields?: boolean;
  /** metadata.generation is bumped when the spec changes. */
  readonly tracksGeneration: boolean;
  /**
   * Annotation changes bump the generation too (Deployments: their annotations are copied to
   * their ReplicaSets, so the controller must see them as a change to act on).
   */
  readonly annotationsBumpGeneration?: boolean;
  /**
   * A status write may change the annotations too (Deployments: their controller records the
   * revision there with UpdateStatus, which Kubernetes' deployment status strategy allows).
   */
  readonly statusWritesAnnotations?: boolean;
  /** Field-selector fields besides metadata.name and metadata.namespace. */
  readonly selectableFields?: Record<string, (obj: T) => string | undefined>;
  /** Fills defaults (on create, and on update for fields a client may omit). */
  applyDefaults?(obj: T): void;
  /** Resets what a client may not set on create (e.g. a pod's status). */
  prepareForCreate?(obj: T, ctx: StrategyContext): void;
  /**
   * Sets what an update may not choose (Kubernetes' PrepareForUpdate), from the stored object:
   * runs before validation, on writes of the object itself (not of its status).
   */
  prepareForUpdate?(obj: T, old: T): void;
  validate(obj: T): FieldError[];
  validateUpdate?(obj: T, old: T): FieldError[];
  validateStatus?(obj: T, old: T): FieldError[];
  /**
   * Graceful deletion: the grace period to apply, or 0 to delete now. Only kinds whose
   * deletion waits for an agent (pods) implement it.
   */
  gracePeriod?(obj: T, requested: number | undefined): number;
  /**
   * Kinds whose deletion is driven by their own finalizer list (namespaces): mark the object
   * as terminating instead of deleting it. Returns true when it must wait.
   */
  beginDeletion?(obj: T, ctx: StrategyContext): boolean;
  /** An object being deleted whose own finalization is done may now leave the store. */
  readyToDelete?(obj: T): boolean;
}
