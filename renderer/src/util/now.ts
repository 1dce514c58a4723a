/**
 * A clock for "5m ago" texts and live timelines: a ref that ticks while its component lives,
 * so ages move on their own. One per component that asks (a view or a panel, never a row).
 */
import { onScopeDispose, ref, type Ref } from 'vue';

export function useNow(everyMs = 5_000): Ref<number> {
  const now = ref(Date.now());
  const timer = setInterval(() => (now.value = Date.now()), everyMs);
  onScopeDispose(() => clearInterval(timer));
  return now;
}
