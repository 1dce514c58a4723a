/**
 * DaemonSets: NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE (wide:
 * CONTAINERS IMAGES SELECTOR), as kubectl's printDaemonSet.
 */
import { labelSelectorFromObject } from '../../api/selectors.js';
import type { DaemonSet } from '../../api/types.js';
import { ageOf } from '../age.js';
import { appendedHeaders, orNone, type KindColumns } from './types.js';

export function selectorText(selector: Parameters<typeof labelSelectorFromObject>[0]): string {
  try {
    return labelSelectorFromObject(selector).toString();
  } catch {
    return '<invalid>';
  }
}

export function mapText(map: Record<string, string> | undefined): string {
  return Object.entries(map ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

export const daemonSetColumns: KindColumns<DaemonSet> = {
  headers: appendedHeaders(
    ['NAME', 'DESIRED', 'CURRENT', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'NODE SELECTOR', 'AGE'],
    ['CONTAINERS', 'IMAGES', 'SELECTOR'],
  ),
  cells(ds, now, wide) {
    const s = ds.status ?? {};
    const cells = [
      ds.metadata?.name ?? '',
      String(s.desiredNumberScheduled ?? 0),
      String(s.currentNumberScheduled ?? 0),
      String(s.numberReady ?? 0),
      String(s.updatedNumberScheduled ?? 0),
      String(s.numberAvailable ?? 0),
      orNone(mapText(ds.spec?.template?.spec?.nodeSelector)),
      ageOf(ds.metadata?.creationTimestamp, now),
    ];
    if (!wide) return cells;
    const containers = ds.spec?.template?.spec?.containers ?? [];
    return [
      ...cells,
      containers.map((c) => c.name ?? '').join(','),
      containers.map((c) => c.image || '<none>').join(','),
      orNone(selectorText(ds.spec?.selector)),
    ];
  },
};
