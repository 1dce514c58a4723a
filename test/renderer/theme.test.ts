/** The theme: the system's preference unless one was chosen, the choice kept in storage. */
import { describe, expect, it } from 'vitest';
import { readChoice, resolveTheme, THEME_STORAGE_KEY, writeChoice } from '../../renderer/src/theme.js';

class MemoryStorage {
  readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

describe('theme', () => {
  it('follows the system unless light or dark was chosen', () => {
    expect(resolveTheme('system', true)).toBe('dark');
    expect(resolveTheme('system', false)).toBe('light');
    expect(resolveTheme('light', true)).toBe('light');
    expect(resolveTheme('dark', false)).toBe('dark');
  });

  it('keeps a choice in storage, and forgets it when set back to the system', () => {
    const storage = new MemoryStorage();
    expect(readChoice(storage)).toBe('system');
    writeChoice(storage, 'dark');
    expect(storage.items.get(THEME_STORAGE_KEY)).toBe('dark');
    expect(readChoice(storage)).toBe('dark');
    writeChoice(storage, 'system');
    expect(storage.items.has(THEME_STORAGE_KEY)).toBe(false);
  });

  it('ignores what it does not know in storage, and works without storage', () => {
    const storage = new MemoryStorage();
    storage.setItem(THEME_STORAGE_KEY, 'sepia');
    expect(readChoice(storage)).toBe('system');
    expect(readChoice(undefined)).toBe('system');
    expect(() => writeChoice(undefined, 'dark')).not.toThrow();
  });
});
