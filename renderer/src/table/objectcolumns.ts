/** The columns every list of namespaced objects starts and ends with: namespace, name, age. */
import type { Ref } from 'vue';
import type { ObjectLike } from '../stores/informer.js';
import { age, timeSortValue } from '../util/format.js';
import type { Column } from './columns.js';

interface Dated {
  metadata?: { creationTimestamp?: string };
}

export function namespaceColumn<T extends ObjectLike>(): Column<T> {
  return {
    id: 'namespace',
    title: 'Namespace',
    width: 'minmax(0, 1fr)',
    text: (o) => o.metadata?.namespace ?? '',
    sort: (o) => o.metadata?.namespace,
  };
}

export function nameColumn<T extends ObjectLike>(width = 'minmax(0, 1.6fr)'): Column<T> {
  return {
    id: 'name',
    title: 'Name',
    width,
    text: (o) => o.metadata?.name ?? '',
    sort: (o) => `${o.metadata?.namespace}/${o.metadata?.name}`,
  };
}

/** Youngest first when sorted ascending, like kubectl's AGE; `now` moves it on. */
export function ageColumn<T extends ObjectLike & Dated>(now: Ref<number>): Column<T> {
  return {
    id: 'age',
    title: 'Age',
    width: '4.5rem',
    numeric: true,
    text: (o) => age(o.metadata?.creationTimestamp, now.value),
    sort: (o) => timeSortValue(o.metadata?.creationTimestamp),
  };
}
