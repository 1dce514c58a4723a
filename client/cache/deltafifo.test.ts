import { describe, expect, it } from 'vitest';
import type { Pod } from '../api/types.js';
import { DeletedFinalStateUnknown, DeltaFIFO, type Delta } from './deltafifo.js';
import { Indexer } from './indexer.js';

const pod = (name: string, rv = '1'): Pod => ({
  kind: 'Pod',
  metadata: { name, namespace: 'default', resourceVersion: rv },
});

async function popAll(
  fifo: DeltaFIFO<Pod>,
): Promise<Array<{ key: string; types: string[]; initial: boolean; deltas: Delta<Pod>[] }>> {
  const out: Array<{ key: string; types: string[]; initial: boolean; deltas: Delta<Pod>[] }> = [];
  while (fifo.length > 0) {
    await fifo.pop((deltas, initial) => {
      const d = deltas[0].object;
      const key =
        d instanceof DeletedFinalStateUnknown ? d.key : `${d.metadata?.namespace}/${d.metadata?.name}`;
      out.push({ key, types: deltas.map((x) => x.type), initial, deltas });
    });
  }
  return out;
}

describe('DeltaFIFO', () => {
  it('queues a key once however many changes pile up, keeping them in order', async () => {
    const fifo = new DeltaFIFO<Pod>(new Indexer<Pod>());
    fifo.add(pod('a', '1'));
    fifo.add(pod('b', '2'));
    fifo.update(pod('a', '3'));
    fifo.update(pod('a', '4'));
    expect(fifo.length).toBe(2);
    const popped = await popAll(fifo);
    expect(popped.map((p) => [p.key, p.types])).toEqual([
      ['default/a', ['Added', 'Updated', 'Updated']],
      ['default/b', ['Added']],
    ]);
    expect(popped[0].deltas.map((d) => (d.object as Pod).metadata?.resourceVersion)).toEqual(['1', '3', '4']);
  });

  it('collapses two deletions in a row, keeping the one that knows the final state', async () => {
    const known = new Indexer<Pod>();
    known.set('default/a', pod('a', '1'));
    const fifo = new DeltaFIFO<Pod>(known);
    fifo.delete(pod('a', '5'));
    fifo.replace([]);
    const [p] = await popAll(fifo);
    expect(p.types).toEqual(['Deleted']);
    expect(p.deltas[0].object).not.toBeInstanceOf(DeletedFinalStateUnknown);
  });

  it('replace: listed objects are Replaced; known objects missing from the list are Deleted with their last state', async () => {
    const known = new Indexer<Pod>();
    known.set('default/a', pod('a', '1'));
    known.set('default/gone', pod('gone', '2'));
    const fifo = new DeltaFIFO<Pod>(known);
    fifo.add(pod('queued-then-gone', '3'));
    fifo.replace([pod('a', '1'), pod('new', '9')]);
    const popped = await popAll(fifo);
    const byKey = Object.fromEntries(popped.map((p) => [p.key, p]));
    expect(byKey['default/a'].types).toEqual(['Replaced']);
    expect(byKey['default/new'].types).toEqual(['Replaced']);
    const gone = byKey['default/gone'].deltas[0];
    expect(gone.type).toBe('Deleted');
    expect(gone.object).toBeInstanceOf(DeletedFinalStateUnknown);
    expect((gone.object as DeletedFinalStateUnknown<Pod>).obj.metadata?.resourceVersion).toBe('2');
    expect(byKey['default/queued-then-gone'].types).toEqual(['Added', 'Deleted']);
  });

  it('is synced once the first list has been popped, counting its deletions', async () => {
    const known = new Indexer<Pod>();
    known.set('default/old', pod('old'));
    const fifo = new DeltaFIFO<Pod>(known);
    expect(fifo.hasSynced()).toBe(false);
    fifo.replace([pod('a'), pod('b')]);
    expect(fifo.hasSynced()).toBe(false);
    const initials: boolean[] = [];
    await fifo.pop((_d, initial) => void initials.push(initial));
    await fifo.pop((_d, initial) => void initials.push(initial));
    expect(fifo.hasSynced()).toBe(false);
    await fifo.pop((_d, initial) => void initials.push(initial));
    expect(fifo.hasSynced()).toBe(true);
    fifo.add(pod('later'));
    await fifo.pop((_d, initial) => void initials.push(initial));
    expect(initials).toEqual([true, true, true, false]);
  });

  it('an empty first list syncs at once', () => {
    const fifo = new DeltaFIFO<Pod>(new Indexer<Pod>());
    fifo.replace([]);
    expect(fifo.hasSynced()).toBe(true);
  });

  it('wakes a waiting pop and fails it when closed', async () => {
    const fifo = new DeltaFIFO<Pod>(new Indexer<Pod>());
    const got: string[] = [];
    const waiting = fifo.pop((d) => void got.push((d[0].object as Pod).metadata!.name!));
    fifo.add(pod('x'));
    await waiting;
    expect(got).toEqual(['x']);
    const closed = fifo.pop(() => undefined);
    fifo.close();
    await expect(closed).rejects.toThrow('closed');
  });
});
