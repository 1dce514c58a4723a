/**
 * Light and dark themes: the system's preference unless the user picked one in Settings; the
 * choice is kept in localStorage. The theme is a data-theme attribute on <html>, which selects
 * the CSS variables (styles/theme.css) everything is drawn with.
 */
import { computed, ref, watchEffect, type ComputedRef, type Ref } from 'vue';

export type ThemeChoice = 'system' | 'light' | 'dark';
export type Theme = 'light' | 'dark';

export const THEME_STORAGE_KEY = 'kubelab.theme';

export function readChoice(storage: Pick<Storage, 'getItem'> | undefined): ThemeChoice {
  const value = storage?.getItem(THEME_STORAGE_KEY);
  return value === 'light' || value === 'dark' ? value : 'system';
}

export function writeChoice(
  storage: Pick<Storage, 'setItem' | 'removeItem'> | undefined,
  choice: ThemeChoice,
): void {
  if (choice === 'system') storage?.removeItem(THEME_STORAGE_KEY);
  else storage?.setItem(THEME_STORAGE_KEY, choice);
}

export function resolveTheme(choice: ThemeChoice, systemPrefersDark: boolean): Theme {
  if (choice === 'system') return systemPrefersDark ? 'dark' : 'light';
  return choice;
}

interface ThemeState {
  choice: Ref<ThemeChoice>;
  theme: ComputedRef<Theme>;
}

let state: ThemeState | undefined;

/** The app's one theme state: follows the system and the user's choice, and applies itself. */
export function useTheme(): ThemeState {
  if (state) return state;
  const storage = (() => {
    try {
      return window.localStorage;
    } catch {
      return undefined; // storage can be disabled; the choice then lasts for the page only
    }
  })();
  const media = window.matchMedia?.('(prefers-color-scheme: dark)');
  const systemDark = ref(media?.matches ?? false);
  media?.addEventListener('change', (e) => (systemDark.value = e.matches));
  const choice = ref<ThemeChoice>(readChoice(storage));
  const theme = computed(() => resolveTheme(choice.value, systemDark.value));
  watchEffect(() => {
    writeChoice(storage, choice.value);
    document.documentElement.dataset.theme = theme.value;
  });
  state = { choice, theme };
  return state;
}
