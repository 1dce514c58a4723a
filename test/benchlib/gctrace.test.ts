import { describe, expect, it } from 'vitest';
import { summarizeGcTrace } from '../bench/lib/gctrace.js';

const line = (pause: number, extra: string) =>
  `[1:0x1]   100 ms: pause=${pause} mutator=1 gc=mc reduce_memory=0 ${extra} total_size_before=1`;

describe('summarizeGcTrace', () => {
  it('says where the mark-compacts paused, and ignores scavenges', () => {
    const trace = [
      '[1:0x1]    50 ms: pause=3.0 mutator=1 gc=s reduce_memory=0 scavenge=2.9',
      line(
        100,
        'mark=10 clear=60 clear.external_string_table=40 clear.maps=20 evacuate=20 evacuate.copy=10 evacuate.update_pointers=10',
      ),
      line(50, 'mark=10 clear=10 clear.external_string_table=10 evacuate=5 evacuate.copy=5'),
    ].join('\n');
    const s = summarizeGcTrace(trace)!;
    expect(s.markCompacts).toBe(2);
    expect(s.pauseMaxMs).toBe(100);
    const phase = (name: string) => s.phases.find((p) => p.phase === name)!;
    expect(phase('clear.external_string_table')).toMatchObject({ meanMs: 25, maxMs: 40 });
    expect(phase('clear.external_string_table').sharePct).toBeCloseTo(100 * (50 / 150));
    expect(phase('mark').meanMs).toBe(10);
    // 100 − 90 and 50 − 25 ms are in no top-level phase; sub-phases are not counted twice.
    expect(phase('other')).toMatchObject({ meanMs: 17.5, maxMs: 25 });
  });

  it('says there were none when the trace has no mark-compact', () => {
    expect(summarizeGcTrace('[1:0x1]    50 ms: pause=3.0 gc=s scavenge=2.9\n')).toBeUndefined();
  });
});
